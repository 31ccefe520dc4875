"""Lemma 10 (Appendix B.5.2): with keys in general position (Theorem 7's condition), every
direction q != 0 has at most d directional neighbours in all: sum_i |T_i(q)| <= d (Definition 3,
`attnsvm.svm.directional`).

Each instance: an integer dataset and an integer direction q (entries in [-2, 2], q != 0); general
position and the neighbour count are decided exactly (rational arithmetic), so every instance
is certified. Margin: d - sum_i |T_i(q)|."""

from attnsvm.claims import Claim, Outcome, batched, rays
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import integer_datasets
from attnsvm.svm.directional import direction_of


@batched
def at_most_d(insts, budget) -> list[Outcome]:
    outs = []
    for inst in insts:
        ds = inst.dataset
        D = direction_of(ds, inst.params["q"])
        outs.append(Outcome(D.count <= ds.d, certified=True, margin=float(ds.d - D.count),
                            detail={"alpha": list(D.alpha), "margin_Gamma": str(D.margin),
                                    "neighbors": [list(t) for t in D.neighbors], "count": D.count, "d": ds.d}))
    return outs


claim = Claim(
    name="lemma10",
    evaluations=1900,
    statement="keys in general position => every direction q != 0 has at most d directional "
              "neighbours: sum_i |T_i(q)| <= d",
    hypotheses=hyp.of("lemma10"),
    conclusion=at_most_d,
    instances=lambda dropped: rays.directions(integer_datasets(n=(1, 2), T=(2, 3), d=(1, 2))),
    proxy="exact: Definition 3 in rational arithmetic",
    measures=("count",),
)
