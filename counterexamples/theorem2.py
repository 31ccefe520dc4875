"""Theorem 2 without Assumption B (n = 1, T = 3, unequal non-optimal scores): a locally
optimal non-optimal token can attract GD, which then converges in direction to that LMM's
p_mm instead of the GMM. The search draws such data (keys in {-1, 0, 1}^2, scores in [-2, 2])
with one start at r p_mm(alpha) of a non-global LMM alpha (`claims.starts.aimed`; data without
one are skipped). n = 1 itself is shown necessary by `theorem2-tightness` (n = 2)."""

from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Instance, starts
from attnsvm.claims.registry import Search
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import keyed_datasets
from attnsvm.results.checks.theorem2 import PARAMS


def aimed_without_b(dropped) -> Space:
    """n = 1, T = 3, free scores, GD, starts aimed at a non-global LMM (part (b))."""
    def generate(c):
        ds = keyed_datasets(n=1, T=3, dk=2, lo=-1, hi=1, scores="any").generate(c)
        others = starts.other_lmm_directions(ds)
        if not others:
            c.reject()
        return Instance(ds, {"loss": c.sampled_from(sorted(LOSSES)), "rule": "gd", "eta_factor": 1.0,
                             "starts": starts.aimed(c, ds, others), "part": "b"})

    return Space(generate, "keyed datasets n 1, T 3, keys in [-1, 1]^2, free scores, with a non-global LMM; GD from "
                           "a start aimed at it", params=PARAMS)


SEARCHES = {
    "assumption_B": Search(instances=aimed_without_b,
                           note="n = 1, T = 3, free scores; one start aimed at r p_mm(alpha) of a non-global LMM"),
}
