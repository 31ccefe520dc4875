"""rates-polyak: the necessity search for `no_other_w_lmm` (rates-global's hypotheses otherwise;
Assumption B dropped: no failure found at the standard budget, as for rates-global) runs Polyak
from random starts of scale 0.1 on data with another locally optimal selection (ties counted when
n >= 2): a few growing steps saturate an input on it, L - L_inf stays positive while the gradient
vanishes, and every later step is capped at 1e6 along a fixed direction (1 - corr flat), in float64
and in exact arithmetic alike (the conclusion compares float64's gradient with an mpmath one at the
deeply saturated points). The stored witness is a strict W-LMM (n = 2, T = 2).

No search for `n1_or_all_support`: its former witness (n = 2, T = 3, a start of scale 0.1) ended on
a tie-degenerate W-LMM (selection (1, 1), every SVM-neighbour tied with it), which `no_other_w_lmm`
now excludes, as it excludes the former claim witnesses `small_start_trap` (selection (2, 0)).
No search for `start_near_zero` (kept in the statement as our reconstruction; its necessity is not
established): its former witness, a start of scale 20 thrown to norm 1e6 by one capped step, reached
1 - corr = 1.1e-10 on the optimal selection and "failed" only through a flat exponent, which a
start-dependent constant explains (the run coasts: `rates.coasting`). NOTES.md."""

from attnsvm.claims.registry import Search
from attnsvm.dynamics import rates


def small_starts(dropped):
    """Covered-setting data (the engine keeps those violating `no_other_w_lmm`), random starts of scale
    0.1, 200 steps: the claim's own space."""
    return rates.instances(rates.score_datasets(), kinds=("random",), random_scales=(0.1,), random_steps=200)


SEARCHES = {
    "no_other_w_lmm": Search(instances=small_starts,
                             note="a locally optimal selection other than opt: Polyak from near 0 ends trapped on "
                                  "another selection (capped steps; exact arithmetic agrees)"),
}
