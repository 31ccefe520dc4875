"""Lemma 13 (core paper, Appendix C.2; Theorem 6 on the quadrant (77)): on the joint path
restricted to the quadrant P where alpha is selected, v -> v_mm and p -> p_relax (problem (10)) in
direction. The limit itself is Theorem 6's (checks/theorem6.py runs the joint path); this check
tests the step the proof adds, the competitor of (78):

    p^eps = argmin ||p||  s.t.  (k_{i,alpha_i} - k_it)^T p >= 1 (i in S),  >= eps (i not in S)      (78)

exists for every eps in (0, 1] and its support margin is Lipschitz in eps: since
(1 - eps) p_relax + eps p_mm meets (78) (p_mm = ATT-SVM(alpha)),

    ||p^eps||^2 <= ||(1 - eps) p_relax + eps p_mm||^2,   so   1/||p^eps|| >= 1/||p_relax|| - eps ||p_mm - p_relax||/||p_relax||^2.

Everything is exact: p_relax, p_mm and p^eps are certified by rational KKT (or (78) is proved
infeasible by a Farkas certificate, which refutes), and the squared norms are compared as
rationals. Margin: the relative slack of that comparison (0 when the combination is optimal).
S = the support-vector inputs of the label SVM on x_{i,alpha_i} (exact active set); alpha = the
pure selection of largest label margin. Instances: Theorem 5/6's datasets (Figure 3 and its
perturbations, small integer datasets with a zero token) and eps in {1/8, 1/4, 1/2, 1}."""

from fractions import Fraction

import numpy as np

from attnsvm import svm
from attnsvm.attention.data import Dataset
from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import sampled_from
from attnsvm.svm import certificates
from attnsvm.svm.margin import MarginProblem
from attnsvm.results.checks.theorem5 import alpha_of, best_selection, figure3, figure3_like, label_result, one_of, random_joint, support_set

EPS = ("1/8", "1/4", "1/2", "1")

# S = {1}; inputs 2 and 3 are non-support with opposite rows: (10) holds with p = (1, -2), (ATT-SVM) is infeasible
NON_SUPPORT_CONFLICT = Dataset.from_arrays([[[0, 0], [1, 0]], [[0, 0], [2, 1]], [[0, 0], [-2, -1]]], [1, 1, -1], [1, 0],
                                           name="non-support-conflict")


def _certified(res):
    cert = certificates.certify(res)
    return cert if (res.ok and cert.verified and cert.kind == "kkt") else None


def label_separable(inst) -> bool:
    alpha = alpha_of(inst)
    if alpha is None:
        return False
    res, cert = label_result(inst.dataset, alpha, range(inst.dataset.n))
    return res.ok and cert.verified and cert.kind == "kkt"


def relaxed_feasible(inst) -> bool:
    alpha = alpha_of(inst)
    return alpha is not None and label_separable(inst) and _certified(
        svm.relaxed_att_svm(inst.dataset, alpha, support_set(inst.dataset, alpha))) is not None


def att_svm_feasible(inst) -> bool:
    alpha = alpha_of(inst)
    return alpha is not None and _certified(svm.att_svm(inst.dataset, alpha)) is not None


def tightened_problem(ds, alpha, S, eps: Fraction) -> MarginProblem:
    """(78): the rows of (10) with right-hand side 1 on S and eps elsewhere."""
    base = svm.relaxed_att_svm_problem(ds, alpha, S)
    keep = set(S)
    b = np.array([1.0 if i in keep else float(eps) for i, _ in base.tags])
    return MarginProblem(base.A, base.tags, None, None, f"(78)(alpha={alpha}, S={sorted(keep)}, eps={eps})", b,
                         exact_rows=base.exact_rows, exp2=base.exp2)


def norm2(x) -> Fraction:
    return sum((a * a for a in x), Fraction(0))


def competitor_margin(inst, budget) -> Outcome:
    ds, alpha = inst.dataset, alpha_of(inst)
    eps = Fraction(inst.params["eps"])
    S = support_set(ds, alpha)
    relax = _certified(svm.relaxed_att_svm(ds, alpha, S))
    res = svm.solve(tightened_problem(ds, alpha, S, eps))
    cert = certificates.certify(res)
    detail = {"support": S, "eps": str(eps), "status_78": res.status}
    if not cert.verified:
        return Outcome(None, detail=detail, reason=f"(78) not certified: {cert.reason}")
    if cert.kind == "farkas":
        return Outcome(False, certified=True, detail={**detail, "farkas": [str(q) for q in cert.lam]}, margin=-1.0)
    mm = _certified(svm.att_svm(ds, alpha))
    if mm is None:
        return Outcome(None, detail=detail, reason="(78) feasible but ATT-SVM(alpha) not certified: no interpolation bound")
    comb = [(1 - eps) * a + eps * b for a, b in zip(relax.x, mm.x)]
    lhs, rhs = norm2(cert.x), norm2(comb)
    detail.update(norm2_78=str(lhs), norm2_combination=str(rhs), norm2_relax=str(norm2(relax.x)), norm2_mm=str(norm2(mm.x)),
                  lipschitz_constant=float(np.sqrt(float(norm2([b - a for a, b in zip(relax.x, mm.x)])))
                                            / float(norm2(relax.x))) if norm2(relax.x) else None)
    return Outcome(lhs <= rhs and lhs >= norm2(relax.x), certified=True, detail=detail,
                   margin=float((rhs - lhs) / rhs) if rhs else 0.0)


def _instances(dropped):
    data = [figure3(), figure3(("1/2", "3/2")), figure3_like(), random_joint()]
    if "att_svm_feasible" in dropped:
        data = [NON_SUPPORT_CONFLICT, random_joint()]
    datasets = one_of(data)

    def generate(c) -> Instance:
        ds = datasets.generate(c)
        return Instance(ds, {"alpha": best_selection(ds), "eps": c.sampled_from(list(EPS))})

    return Space(generate, datasets.description + f"; eps in {list(EPS)}",
                 params={"alpha": Space(lambda c: None, "the best pure selection"), "eps": sampled_from(list(EPS))})


claim = Claim(
    name="lemma13",
    evaluations=70,
    statement="label SVM on x_{i,alpha_i} feasible (support set S), (10) and ATT-SVM(alpha) feasible => for eps in (0, 1] "
              "(78) is feasible and ||p_relax||^2 <= ||p^eps||^2 <= ||(1 - eps) p_relax + eps p_mm||^2 (the competitor of "
              "Lemma 13's proof; its support margin is Lipschitz in eps)",
    hypotheses=(
        Hypothesis("label_separable", "the label SVM on x_{i,alpha_i} is feasible (exact KKT)", label_separable),
        Hypothesis("relaxed_feasible", "problem (10) is feasible (exact KKT)", relaxed_feasible),
        Hypothesis("att_svm_feasible", "ATT-SVM(alpha) is feasible (exact KKT)", att_svm_feasible),
    ),
    conclusion=competitor_margin,
    instances=_instances,
    measures=("lipschitz_constant",),
)
