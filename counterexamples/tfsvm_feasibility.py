"""tfsvm-feasibility: each dimension hypothesis dropped in turn (genericity kept); the claim's
strategy then draws d below the threshold and finds an alpha with an exact Farkas certificate."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "d_ge_T_minus_1": Search(note="d < T-1: a selected token inside the convex hull of the others cannot be separated"),
    "d_ge_n": Search(note="d < n: the W z_i are not independent, so opposite selections in two inputs conflict"),
}
