"""rates-speedup: no necessity search. Its hypotheses are rates-global's, whose necessity rows
show them; the speed-up itself is measured as a rate, and as a rate it holds against GD at any
fixed step tried (even 1e4/L_p: GD aligns at once and then stalls), so the old step-bound
hypothesis was not needed and is gone (NOTES.md)."""

SEARCHES: dict = {}
