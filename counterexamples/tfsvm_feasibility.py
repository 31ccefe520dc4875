"""tfsvm-feasibility: each dimension hypothesis dropped in turn (genericity kept); the search then
draws d below the threshold and finds an alpha with an exact Farkas certificate."""

from attnsvm.claims.registry import Search
from attnsvm.claims.selections import integer_selections


def _d_below_T_minus_1(c):
    T, n = c.integer(3, 4, "size"), c.integer(1, 2, "size")
    return n, T, c.integer(min(n, T - 2), T - 2, "size")


def _d_below_n(c):
    n, T = c.integer(2, 3, "size"), c.integer(2, 3, "size")
    return n, T, c.integer(min(T - 1, n - 1), n - 1, "size")


SEARCHES = {
    "d_ge_T_minus_1": Search(instances=lambda dropped: integer_selections(_d_below_T_minus_1),
                             note="d < T-1: a selected token inside the convex hull of the others cannot be separated"),
    "d_ge_n": Search(instances=lambda dropped: integer_selections(_d_below_n),
                     note="d < n: the W z_i are not independent, so opposite selections in two inputs conflict"),
}
