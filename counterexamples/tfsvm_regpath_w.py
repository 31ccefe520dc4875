"""tfsvm-regpath-w: each hypothesis dropped in turn.

- locally_optimal: alpha feasible but with an SVM-neighbour scoring at least as high; the path
  confined to the cone around W_mm(alpha) settles on the cone's boundary (gap = mu), not on
  W_mm(alpha) (the W-form of the core Theorem 4: only LMM directions are limits).
- global_is_opt: the unconstrained path paired with a non-global LMM: it goes to W_mm(opt)
  instead ("which one": the global path picks the GMM, a cone is needed for the others).
Assumption A and feasibility are not searched (library losses all meet A; without feasibility
W_mm(alpha) does not exist)."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "locally_optimal": Search(note="a feasible non-LMM alpha: the cone path sticks to the cone's boundary"),
    "global_is_opt": Search(note="a non-global LMM with the unconstrained path: it converges to W_mm(opt)"),
}
