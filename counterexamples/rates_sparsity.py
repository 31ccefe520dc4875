"""rates-sparsity: the necessity search for `no_other_w_lmm` (rates-global's hypotheses otherwise;
Assumption B dropped: no failure found at the standard budget, as for rates-global) starts the runs
on the max-margin direction of another locally optimal selection (ties counted when n >= 2) at scale
5 or 20 for 200 steps, where they stay and the off-optimal softmax mass stops decaying (fitted
rate ~0).

The support condition `n1_or_all_support` has no necessity search any more: its former witness
(n = 2, T = 3, a start of scale 5) ended on tie-degenerate W-LMMs (NGD on (0, 0)'s neighbour
selections, Polyak on (0, 2), every SVM-neighbour tied), which `no_other_w_lmm` now excludes;
the exact cross-check had also flagged its Polyak failure as suspect (NOTES.md)."""

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
