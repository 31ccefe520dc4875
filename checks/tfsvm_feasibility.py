"""Transformers as SVMs, feasibility (paper B, claim 3;
docs/statements.md#tfsvm-feasibility): d >= max(T-1, n) and generic data
make (Att-SVM) feasible for every alpha. An instance is a dataset and one alpha (so "every alpha"
is every instance); its verdict is exact: a verified KKT certificate of `svm.w_svm_problem`
(feasible) or a verified Farkas certificate (infeasible).

"Generic" is general position, checked exactly (`data.generic`): in each input every min(T, d+1)
tokens are affinely independent and every min(n, d) queries are linearly independent (with
d >= T-1 and d >= n this is the rank condition the derivation needs; below the threshold it rules
out degenerate witnesses such as repeated tokens). Queries are the dataset's z when drawn, else
z_i = x_i1 (self-attention). Margin: the SVM's margin 1/||W_mm||_F (small: nearly infeasible)."""

import numpy as np

from attnsvm.claims import Claim, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.selections import integer_selections
from attnsvm.svm import w_svm
from attnsvm.svm.certificates import certify


def feasible_one(inst) -> Outcome:
    alpha = tuple(inst.params["alpha"])
    res = w_svm(inst.dataset, alpha)
    cert = certify(res)
    if not cert.verified:
        return Outcome(None, detail={"alpha": list(alpha), "status": res.status},
                       reason=f"alpha {list(alpha)}: {res.status} but certificate not verified: {cert.reason}")
    if cert.kind == "farkas":
        return Outcome(False, certified=True, margin=0.0, detail={
            "alpha": list(alpha), "status": res.status, "farkas": [str(q) for q in cert.lam],
            "rows": [list(t) for t in res.problem.tags]})
    return Outcome(True, certified=True, margin=float(1 / np.linalg.norm(res.x)), detail={"alpha": list(alpha)})


@batched
def feasible_for_alpha(insts, budget) -> list[Outcome]:
    return [feasible_one(inst) for inst in insts]


def _at_threshold(c):
    n, T = c.integer(1, 3, "size"), c.integer(2, 4, "size")
    lo = max(T - 1, n)
    return n, T, c.integer(lo, lo + 1, "size")


claim = Claim(
    name="tfsvm-feasibility",
    evaluations=1100,
    statement="d >= T-1, d >= n and generic data => the W-SVM (Att-SVM) is feasible for every alpha",
    hypotheses=hyp.of("tfsvm-feasibility"),
    conclusion=feasible_for_alpha,
    instances=lambda dropped: integer_selections(_at_threshold),
    proxy="exact: a KKT certificate (feasible) or Farkas certificate (infeasible) in rational arithmetic for the "
          "instance's alpha (n 1..3, T 2..4, d = max(T - 1, n) or one more)",
)
