"""tfsvm-global: each geometric condition dropped in turn (the other kept).

- score_gap (T >= 3): the first step ranks the optimal tokens first, but a non-optimal score close to the
  optimal one with a wide spread below lets the run settle on another locally optimal selection.
- initial_gradient_aligned (T = 2, so the score gap holds trivially, n = 2..3 in d = 3 so the queries
  can be independent): the first step already prefers
  a non-optimal token in some input and the run converges to that LMM (the W-form of Appendix E's
  tightness instance, reached from W_0 = 0).
- independent_queries (n = 3 inputs in d = 2: the queries cannot be independent; T = 2, so the score
  gap holds): both geometric conditions met, yet NGD from 0 converges to a non-global LMM. Our two
  reconstructed conditions are not enough without the over-parameterisation the paper's Section 5.2
  credits with a benign landscape (a quick search of the claim without this hypothesis found such a
  run at seed 2; with it, none in about 13000 instances, seeds 0-7).
Strict optimality and feasibility are not searched (without them W_mm(opt) is undefined)."""

from attnsvm.claims.registry import Search
from attnsvm.results.checks.tfsvm_global import global_instances

SEARCHES = {
    "score_gap": Search(instances=lambda dropped: global_instances(T=(3, 4)),
                        note="aligned start, small gap: NGD from 0 converges to a non-global LMM"),
    "initial_gradient_aligned": Search(instances=lambda dropped: global_instances(n=(2, 3), T=2, d=3),
                                       note="T = 2 (gap trivially met), misaligned first step: a non-global LMM"),
    "independent_queries": Search(instances=lambda dropped: global_instances(n=3, T=2, d=2),
                                  note="n = 3 > d = 2, both conditions met: NGD from 0 reaches a non-global LMM"),
}
