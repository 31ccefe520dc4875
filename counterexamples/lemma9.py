"""Lemma 9 without better neighbours: a directional neighbour scoring strictly below its selected
token makes the ray's risk approach the baseline from above. The search keeps instances with such
a neighbour (ties, where the risk difference can vanish identically, are left out)."""

from attnsvm.attention import model
from attnsvm.claims import rays
from attnsvm.claims.registry import Search
from attnsvm.claims.strategies import integer_datasets
from attnsvm.svm.directional import direction_of


def _strictly_worse(inst) -> bool:
    D, g = direction_of(inst.dataset, inst.params["q"]), model.exact_scores(inst.dataset)
    return any(g[i][t] < g[i][D.alpha[i]] for i in range(inst.dataset.n) for t in D.neighbors[i])


SEARCHES = {"neighbors_better": Search(
    instances=lambda dropped: rays.directions(integer_datasets(n=(1, 2), T=(2, 3), d=(1, 2)),
                                              losses=True).filter(_strictly_worse),
    note="a directional neighbour with a strictly lower score: L(R q) > L_* for large R")}
