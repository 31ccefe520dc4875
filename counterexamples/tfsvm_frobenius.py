"""tfsvm-frobenius: what each hypothesis rules out.

- w_parameterisation: the same measurement on W = K Q^T (m = 3 >= d, 600 steps: (K, Q) runs
  converge more slowly): its limit is the nuclear-norm solution W*_mm, which differs from W_mm on
  data with n >= 2 distinct queries, so 1 - corr with W_mm stays large.
- independent_queries: with more inputs than dimensions (n = 3 > d = 2) the inputs' gradient
  terms can cancel, so L(W) has finite stationary points (tfsvm-landscape); NGD from a small
  random start can settle at a finite local minimum, oscillating around it with its fixed step,
  and its direction stays away from W_mm of the tokens it selects."""

from attnsvm.claims.registry import Search
from attnsvm.claims.strategies import gaussian_datasets, instances, just, seeds


def kq_instances(dropped):
    """Gaussian data n 2..3, T = 2, d = 3, trained in (K, Q) of width 3 from one seeded start."""
    return instances(gaussian_datasets(n=(2, 3), T=2, d=3), param=just("KQ"), m=just(3), eta=just(0.5),
                     steps=just(600), init_scale=just(0.1), seed=seeds(), starts=just(1))


def dependent_query_instances(dropped):
    """Gaussian self-attention data with n = 3 inputs in d = 2 (the queries cannot be independent),
    T 2..3, trained in W from two seeded starts (the check's setting)."""
    return instances(gaussian_datasets(n=3, T=(2, 3), d=2), param=just("W"), m=just(None), eta=just(0.5),
                     steps=just(120), init_scale=just(0.1), seed=seeds(), starts=just(2))


SEARCHES = {
    "w_parameterisation": Search(instances=kq_instances,
                                 note="(K, Q) training converges to W*_mm (nuclear), not W_mm, where they differ"),
    "independent_queries": Search(instances=dependent_query_instances,
                                  note="n = 3 > d = 2: NGD settles at a finite local minimum of L(W), away from W_mm"),
}
