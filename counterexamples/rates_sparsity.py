"""rates-sparsity: rates-global's hypotheses dropped in turn (Assumption B dropped: no
failure found at the standard budget, as for rates-global); rates-global's instance space then
starts the runs far from 0 or on another selection's max-margin direction (a candidate LMM), where
a non-global limit or a long stall holds them and the off-optimal softmax mass stops decaying (fitted rate ~0)."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "n1_or_all_support": Search(note="n = 2 with a non-support token, a random start of scale 5 or 20: the run stalls "
                                     "away from W_mm(opt) and the fitted rate is ~0"),
    "no_other_w_lmm": Search(note="a locally optimal selection other than opt: runs started on its W_mm stay there"),
}
