"""rates-polyak: rates-global's hypotheses dropped in turn (Assumption B dropped: no failure found at
the standard budget, as for rates-global), and the start condition: from larger starts the Polyak
step overshoots to norm ~1e6 and 1 - corr stops decaying (fitted rate ~0)."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "n1_or_all_support": Search(note="n = 2 with a non-support token: the run stalls away from W_mm(opt)"),
    "no_other_w_lmm": Search(note="a locally optimal selection other than opt: runs started on its W_mm stay there"),
    "start_near_zero": Search(note="a start of scale >= 1 saturated on a wrong token: one capped Polyak step to norm "
                                   "1e6 freezes the direction"),
}
