"""rates-speedup: no necessity search. Its hypotheses are rates-global's, whose necessity rows
show them; the speed-up itself is measured as a rate, and as a rate it holds against GD at any
fixed step tried (even 1e4/L_p: GD aligns at once and then stalls), so the old step-bound
hypothesis was not needed and is gone (NOTES.md).

The former claim witness `rates-speedup--polyak_small_start_trap.json` (Polyak trapped with
1 - corr = 0.445 for good from a start of scale 0.1, exact arithmetic agreeing) ended on a
tie-degenerate W-LMM (selection (2, 0), every SVM-neighbour tied with it), which `no_other_w_lmm`
now excludes: it is outside the claim and was removed (NOTES.md)."""

SEARCHES: dict = {}
