"""Lemma 10 (Appendix B.5.2): with keys in general position (Theorem 7's condition), every
direction q != 0 has at most d directional neighbours in all: sum_i |T_i(q)| <= d (Definition 3,
`attnsvm.svm.directional`).

Each instance: an integer dataset and an integer direction q (entries in [-2, 2], q != 0); general
position and the neighbour count are decided exactly (rational arithmetic), so every instance
is certified. Margin: d - sum_i |T_i(q)|."""

from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import integer_datasets
from attnsvm.svm.directional import direction
from attnsvm.results.checks.theorem4 import general_position


def directions(datasets, lo: int = -2, hi: int = 2) -> Space:
    """Instances: a dataset of `datasets` and an integer direction q != 0 of its dimension (params['q'])."""
    def generate(c):
        ds = datasets.generate(c)
        q = [c.integer(lo, hi, "entry") for _ in range(ds.d)]
        if not any(q):
            c.reject()
        return Instance(ds, {"q": q})
    return Space(generate, f"{datasets.description}; integer q in [{lo}, {hi}]^d, q != 0")


def at_most_d(inst, budget) -> Outcome:
    ds = inst.dataset
    D = direction(ds, inst.params["q"])
    return Outcome(D.count <= ds.d, certified=True, margin=float(ds.d - D.count),
                   detail={"alpha": list(D.alpha), "margin_Gamma": str(D.margin), "neighbors": [list(t) for t in D.neighbors],
                           "count": D.count, "d": ds.d})


claim = Claim(
    name="lemma10",
    evaluations=1900,
    statement="keys in general position => every direction q != 0 has at most d directional neighbours: sum_i |T_i(q)| <= d",
    hypotheses=(Hypothesis("general_position", "keys in general position (Theorem 7; exact, every alpha)", general_position),),
    conclusion=at_most_d,
    instances=lambda dropped: directions(integer_datasets(n=(1, 2), T=(2, 3), d=(1, 2))),
    proxy="exact: Definition 3 in rational arithmetic",
    measures=("count",),
)
