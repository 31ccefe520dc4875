"""tfsvm-regpath-w: each hypothesis dropped in turn.

- locally_optimal: alpha feasible but with an SVM-neighbour scoring at least as high; the path
  confined to the cone around W_mm(alpha) settles on the cone's boundary (gap = mu), not on
  W_mm(alpha) (the W-form of the core Theorem 4: only LMM directions are limits).
- global_is_opt: the unconstrained path paired with a non-global LMM: it goes to W_mm(opt)
  instead ("which one": the global path picks the GMM, a cone is needed for the others).
Assumption A and feasibility are not searched (library losses all meet A; without feasibility
W_mm(alpha) does not exist)."""

from attnsvm.claims.registry import Search
from attnsvm.results.checks.tfsvm_regpath_w import regpath_instances


def feasible_non_lmm(sels):
    return [s for s in sels if s.feasible and not s.locally_optimal], None


def non_global_lmm_in_the_ball(sels):
    return [s for s in sels if s.locally_optimal and not s.is_gmm], "ball"


SEARCHES = {
    "locally_optimal": Search(instances=lambda dropped: regpath_instances(feasible_non_lmm),
                              note="a feasible non-LMM alpha: the cone path sticks to the cone's boundary"),
    "global_is_opt": Search(instances=lambda dropped: regpath_instances(non_global_lmm_in_the_ball,
                                                                        lambda c: (c.integer(2, 3, "size"), 3, 3)),
                            note="a non-global LMM with the unconstrained path: it converges to W_mm(opt)"),
}
