"""Lemma 2 / Lemma 11: under one common label sign, strict optimality and v in range(W),
(ATT-SVM) with alpha = opt is feasible. Each instance's verdict is exact: a verified KKT
certificate (feasible) or a verified Farkas certificate (infeasible)."""


from attnsvm.attention import model
from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import instances, integer_datasets
from attnsvm.svm import att_svm
from attnsvm.svm.certificates import certify


def common_label(inst) -> bool:
    return len(set(inst.dataset.Y.tolist())) == 1


def v_in_range_W(inst) -> bool:
    """v = W c for some c (exact rank test: rank [W | v] == rank W)."""
    import sympy as sp

    ds = inst.dataset
    W = sp.Matrix(ds.exact["W"].tolist())
    return W.rank() == W.row_join(sp.Matrix(ds.exact["v"].tolist())).rank()


def feasible(inst, budget) -> Outcome:
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
    return Outcome(res.ok, certified=True, detail=detail)


def _instances(dropped):
    W = "integer"
    labels = "any" if "common_label" in dropped else "positive"
    return instances(integer_datasets(n=(1, 3), T=(2, 4), d=(1, 3), labels=labels, W=W))


claim = Claim(
    name="lemma2",
    evaluations=1400,
    statement="common label sign, gamma_{i,opt} > gamma_it (t != opt), v in range(W) => (ATT-SVM) with alpha = opt is feasible",
    hypotheses=(
        Hypothesis("common_label", "all Y_i share one sign", common_label),
        hyp.get("scores.strict_optimality"),
        Hypothesis("v_in_range_W", "v in range(W) (Lemma 11; implied by W full rank, Lemma 2)", v_in_range_W),
    ),
    conclusion=feasible,
    instances=_instances,
    proxy="exact: KKT certificate (feasible) or Farkas certificate (infeasible) in rational arithmetic",
)
