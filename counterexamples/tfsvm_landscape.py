"""tfsvm-landscape: without independent queries L(W) has stationary points.

The search draws either d < n (the queries cannot be independent: d >= n is what over-parameterisation
buys here) or d >= n with two inputs sharing a query up to scale. Either way the inputs' gradient terms
loss'_i Y_i Cov_{s_i}(X_i) v z_i^T can cancel: inputs pulling W in opposite directions give a finite
stationary point, found by the check's own search (rho < 1e-7, ||grad L|| < 1e-9). (d >= T - 1 is not a
hypothesis: it is not needed, see checks/tfsvm_landscape.py.)"""

from attnsvm.attention import model
from attnsvm.claims import gaussian
from attnsvm.claims.registry import Search
from attnsvm.results.checks.tfsvm_landscape import landscape_instances, threshold


def dependent_queries(c, seed: int):
    """d < n (n 2..3, T = 2, d 1..n-1), or n 2..3, T 2..3 at or one above max(T - 1, n) with input 1's
    query a multiple (1, -1 or 2) of input 0's; self- or cross-attention."""
    if c.sampled_from([False, True]):                     # d < n: the queries cannot be independent
        n, T = c.integer(2, 3, "size"), 2
        return gaussian.dataset(seed, n, T, c.integer(1, n - 1, "size"), c.sampled_from([False, True]))
    n, T = c.integer(2, 3, "size"), c.integer(2, 3, "size")
    ds = gaussian.dataset(seed, n, T, threshold(n, T) + c.integer(0, 1, "size"), c.sampled_from([False, True]))
    Z = model.queries(ds).copy()
    Z[1] = Z[0] * c.sampled_from([1.0, -1.0, 2.0])
    return ds.with_(z=Z)


SEARCHES = {
    "independent_queries": Search(
        instances=lambda dropped: landscape_instances(dependent_queries, [[]], "Gaussian datasets with d < n or a "
                                                                               "shared query"),
        note="d < n, or two inputs sharing a query: their gradients cancel at a finite W"),
}
