"""rates-polyak: rates-global's hypotheses dropped in turn (Assumption B dropped: no failure found at
the standard budget, as for rates-global). Both witnesses are trapped runs, checked in exact arithmetic
(the conclusion compares float64's gradient with an mpmath one at the deeply saturated points): a few
growing Polyak steps saturate an input on a wrong token, L - L_inf stays positive while the gradient
vanishes, and every later step is capped at 1e6 along a fixed direction (1 - corr flat at ~0.6).

No search for `start_near_zero` (kept in the statement as our reconstruction; its necessity is not
established): its former witness, a start of scale 20 thrown to norm 1e6 by one capped step, reached
1 - corr = 1.1e-10 on the optimal selection and "failed" only through a flat exponent, which a
start-dependent constant explains (the run coasts: checks.rates_polyak.frozen). A standard-budget
search with the frozen and exact-arithmetic rules (143 evaluations) and 85 sampled violating
instances found no failure beyond such a constant; and the trap it was meant to exclude happens from
small starts too (witness `rates-polyak--small_start_trap.json`, NOTES.md)."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "n1_or_all_support": Search(note="n = 2 with a non-support token: Polyak is trapped on a wrong selection, its "
                                     "capped steps along a fixed direction (exact arithmetic agrees)"),
    "no_other_w_lmm": Search(note="a locally optimal selection other than opt: Polyak from near 0 ends trapped on "
                                  "another selection (capped steps; exact arithmetic agrees)"),
}
