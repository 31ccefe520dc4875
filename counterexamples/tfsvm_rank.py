"""tfsvm-rank: the only hypothesis is feasibility (without it W_mm does not exist), so there is
no necessity search: the bound rank(W_mm) <= n holds for every feasible instance (derivation)."""

SEARCHES: dict = {}
