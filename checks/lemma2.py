"""Lemma 2 / Lemma 11: under one common label sign, strict optimality and v in range(W),
(ATT-SVM) with alpha = opt is feasible. Each instance's verdict is exact: a verified KKT
certificate (feasible) or a verified Farkas certificate (infeasible). Margin: the SVM's margin
1/||p_mm|| (small: nearly infeasible), which the targeted search pushes down."""

import numpy as np

from attnsvm.attention import model
from attnsvm.claims import Claim, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import instances, integer_datasets
from attnsvm.svm import att_svm
from attnsvm.svm.certificates import certify


def feasible_one(inst) -> Outcome:
    ds = inst.dataset
    res = att_svm(ds, model.optimal_tokens(ds))
    cert = certify(res)
    detail = {"status": res.status, "certificate": cert.kind, "certificate_verified": cert.verified}
    if res.ok:
        detail["p_mm"] = res.x.tolist()
    if not cert.verified:
        return Outcome(None, detail=detail, reason=f"{res.status} but certificate not verified: {cert.reason}")
    if cert.kind == "farkas":
        detail["farkas"] = [str(q) for q in cert.lam]
        return Outcome(False, certified=True, detail=detail, margin=0.0)
    return Outcome(res.ok, certified=True, detail=detail, margin=float(1 / np.linalg.norm(res.x)) if res.ok else None)


@batched
def feasible(insts, budget) -> list[Outcome]:
    return [feasible_one(inst) for inst in insts]


claim = Claim(
    name="lemma2",
    evaluations=1100,
    statement="common label sign, gamma_{i,opt} > gamma_it (t != opt), v in range(W) => (ATT-SVM) with "
              "alpha = opt is feasible",
    hypotheses=hyp.of("lemma2"),
    conclusion=feasible,
    instances=lambda dropped: instances(integer_datasets(n=(1, 3), T=(2, 4), d=(1, 3), labels="positive", W="integer")),
    proxy="exact: KKT certificate (feasible) or Farkas certificate (infeasible) in rational arithmetic",
)
