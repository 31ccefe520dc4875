"""rates-speedup: no necessity search. Its hypotheses are rates-global's, whose necessity rows
show them; the speed-up itself is measured as a rate, and as a rate it holds against GD at any
fixed step tried (even 1e4/L_p: GD aligns at once and then stalls), so the old step-bound
hypothesis was not needed and is gone (NOTES.md).

One stored counterexample to the claim as stated, `rates-speedup--polyak_small_start_trap.json`:
a covered instance (n = 2, T = 3, random start of scale 0.1) on which Polyak is trapped with
1 - corr = 0.445 for good (the same instance as `rates-polyak--small_start_trap.json`; exact
arithmetic agrees), so its rate is not faster than GD's at any step; NGD is faster there."""

SEARCHES: dict = {}
