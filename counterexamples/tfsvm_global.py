"""tfsvm-global: each geometric condition dropped in turn (the other kept).

- score_gap (T >= 3): the first step ranks the optimal tokens first, but a non-optimal score close to the
  optimal one with a wide spread below lets the run settle on another locally optimal selection.
- initial_gradient_aligned (T = 2, so the score gap holds trivially, n >= 2): the first step already prefers
  a non-optimal token in some input and the run converges to that LMM (the W-form of Appendix E's
  tightness instance, reached from W_0 = 0).
Strict optimality and feasibility are not searched (without them W_mm(opt) is undefined)."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "score_gap": Search(note="aligned start, small gap: NGD from 0 converges to a non-global LMM"),
    "initial_gradient_aligned": Search(note="T = 2 (gap trivially met), misaligned first step: a non-global LMM"),
}
