"""Lemma 6 with a step well above 2/L_p: GD overshoots and the descent inequality fails."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "step_size": Search(note="eta = 8..1024 / L_p (L_p is an upper bound: the failure needs eta above 2/L_true)"),
}
