"""rates-speedup: the speed-up is relative to GD at its stable step 1/L_p; with that step
bound dropped (eta = 1e2 .. 1e6 / L_p) a single large GD step can align W with W_mm first."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "gd_step_within_1_over_L": Search(note="GD with a step far above 1/L_p reaches corr 0.99 no later than NGD/Polyak"),
}
