"""tfsvm-landscape: without independent queries L(W) has stationary points.

The search draws either d < n (the queries cannot be independent: d >= n is what over-parameterisation
buys here) or d >= n with two inputs sharing a query up to scale. Either way the inputs' gradient terms
loss'_i Y_i Cov_{s_i}(X_i) v z_i^T can cancel: inputs pulling W in opposite directions give a finite
stationary point, found by the check's own search (rho < 1e-7, ||grad L|| < 1e-9). (d >= T - 1 is not a
hypothesis: it is not needed, see checks/tfsvm_landscape.py.)"""

from attnsvm.results.checks.tfsvm_landscape import landscape_space

from attnsvm.claims.registry import Search

SEARCHES = {
    "independent_queries": Search(instances=landscape_space,
                                  note="d < n, or two inputs sharing a query: their gradients cancel at a finite W"),
}
