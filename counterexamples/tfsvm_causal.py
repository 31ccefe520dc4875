"""tfsvm-causal: which problem predicts the limit of causal training, and when every selection is
feasible.

- per_query_svm: the single-query problem of the last query (the one that sees every token, as
  next-token classification reads it) misses the constraints of the earlier queries.
- causal_mask: the unmasked sequence problem adds constraints against tokens a query never
  sees (t > k); its solution is another direction (or infeasible), so it mispredicts the limit.
- overparameterized: with d < T - 1, or more difference rows n T (T - 1)/2 than d^2, some
  selection alpha has no separating W (an exact Farkas certificate)."""

from attnsvm.claims import gaussian
from attnsvm.claims.registry import Search

SEARCHES = {
    "per_query_svm": Search(instances=lambda dropped: gaussian.sequences(("gd",), "single", n=(1, 2), T=3, d=(2, 3)),
                            note="causal NGD; the last query's single-query SVM mispredicts its limit"),
    "causal_mask": Search(instances=lambda dropped: gaussian.sequences(("gd",), "full", n=(1, 2), T=3, d=(2, 3)),
                          note="causal NGD; the unmasked per-query SVM (constraints against t > k) "
                               "mispredicts its limit"),
    "overparameterized": Search(instances=lambda dropped: gaussian.sequences(("feasibility",), "causal", n=(1, 3),
                                                                             T=(2, 4), d=(2, 3)),
                                note="d < T - 1 or n T (T - 1)/2 > d^2: an alpha with an exact Farkas certificate"),
}
