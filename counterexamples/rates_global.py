"""rates-global: the necessity search for `no_other_w_lmm` starts the runs on the max-margin
direction of a selection alpha != opt that is locally optimal for the W-SVM (ties counted when
n >= 2), at scale 5 or 20, for 200 steps: NGD or Polyak stays there. Feasibility of W_mm(opt) is
not searched: without it W_mm does not exist.

Only `no_other_w_lmm` has a necessity witness (`rates-global--no_other_w_lmm.json`: n = 2, T = 2,
every token a support vector of W_mm(opt), Polyak from a start of scale 5 on W_mm((0, 1)) converges
to the strict W-LMM (0, 1)). With it kept, searches dropping Assumption B or the support condition
found no failure (standard budget, NOTES.md): the earlier witnesses for those two were LMM traps,
strict or tie-degenerate (a selection whose SVM-neighbours all tie with it, which Assumption B makes
common when T >= 3); in our reading the paper's data settings are ways to rule out other LMMs."""

from attnsvm.claims.registry import Search
from attnsvm.dynamics import rates


def on_other_lmms(dropped):
    """Covered-setting data (the engine keeps those violating `no_other_w_lmm`), starts of scale 5 or
    20 on an other W-LMM's W_mm, 200 steps."""
    return rates.instances(rates.score_datasets(), kinds=("hard",), hard_on="lmm", hard_scales=(5.0, 20.0),
                           hard_steps=200)


SEARCHES = {
    "no_other_w_lmm": Search(instances=on_other_lmms,
                             note="a locally optimal selection other than opt: runs started on its W_mm stay there"),
}
