"""Lemma 13 (core paper, Appendix C.2; Theorem 6 on the quadrant (77)): on the joint path
restricted to the quadrant P where alpha is selected, v -> v_mm and p -> p_relax (problem (10)) in
direction. The limit itself is Theorem 6's (checks/theorem6.py runs the joint path); this check
tests the step the proof adds, the competitor of (78):

    p^eps = argmin ||p||  s.t.  (k_{i,alpha_i} - k_it)^T p >= 1 (i in S),  >= eps (i not in S)      (78)

exists for every eps in (0, 1] and its support margin is Lipschitz in eps: since
(1 - eps) p_relax + eps p_mm meets (78) (p_mm = ATT-SVM(alpha)),

    ||p^eps||^2 <= ||(1 - eps) p_relax + eps p_mm||^2,   so
    1/||p^eps|| >= 1/||p_relax|| - eps ||p_mm - p_relax||/||p_relax||^2.

Everything is exact: p_relax, p_mm and p^eps are certified by rational KKT (or (78) is proved
infeasible by a Farkas certificate, which refutes), and the squared norms are compared as
rationals. Margin: the relative slack of that comparison (0 when the combination is optimal).
S = the support-vector inputs of the label SVM on x_{i,alpha_i} (exact active set); alpha = the
pure selection of largest label margin. Instances: Theorem 5/6's datasets (Figure 3 and its
perturbations, small integer datasets with a zero token) and eps in {1/8, 1/4, 1/2, 1}. The label
SVMs, (10), (ATT-SVM) and (78) are `svm.joint`'s (exact, memoized); the hypotheses are the
family `joint`. Exact, so no tolerance: a verdict here is a certificate's."""

from fractions import Fraction

import numpy as np

from attnsvm import svm
from attnsvm.claims import Claim, Instance, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.joint import figure3_like, random_joint
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import one_of, sampled_from
from attnsvm.svm import certificates, joint

EPS = ("1/8", "1/4", "1/2", "1")


def competitor_margin_one(inst) -> Outcome:
    ds, alpha = inst.dataset, [int(a) for a in inst.params["alpha"]]
    eps = Fraction(inst.params["eps"])
    S = joint.support_set(ds, alpha)
    relax = joint.relaxed_target(ds, alpha)[1]
    res = svm.solve(joint.tightened_problem(ds, alpha, S, eps))
    cert = certificates.certify(res)
    detail = {"support": S, "eps": str(eps), "status_78": res.status}
    if not cert.verified:
        return Outcome(None, detail=detail, reason=f"(78) not certified: {cert.reason}")
    if cert.kind == "farkas":
        return Outcome(False, certified=True, detail={**detail, "farkas": [str(q) for q in cert.lam]}, margin=-1.0)
    att, mm = joint.att_svm(ds, alpha)
    if not (att.ok and mm.verified and mm.kind == "kkt"):
        return Outcome(None, detail=detail, reason="(78) feasible but ATT-SVM(alpha) not certified: "
                                                   "no interpolation bound")
    comb = [(1 - eps) * a + eps * b for a, b in zip(relax.x, mm.x)]
    lhs, rhs = joint.norm2(cert.x), joint.norm2(comb)
    n_relax = joint.norm2(relax.x)
    detail.update(norm2_78=str(lhs), norm2_combination=str(rhs), norm2_relax=str(n_relax),
                  norm2_mm=str(joint.norm2(mm.x)),
                  lipschitz_constant=float(np.sqrt(float(joint.norm2([b - a for a, b in zip(relax.x, mm.x)])))
                                           / float(n_relax))
                  if n_relax else None)
    return Outcome(lhs <= rhs and lhs >= n_relax, certified=True, detail=detail,
                   margin=float((rhs - lhs) / rhs) if rhs else 0.0)


@batched
def competitor_margin(insts, budget) -> list[Outcome]:
    return [competitor_margin_one(inst) for inst in insts]


def competitor_instances(data) -> Space:
    """Instances: a dataset of `data`, alpha = its pure selection of largest label margin, eps in EPS."""
    datasets = one_of(*data)

    def generate(c) -> Instance:
        ds = datasets.generate(c)
        return Instance(ds, {"alpha": joint.best_selection(ds), "eps": c.sampled_from(list(EPS))})

    return Space(generate, datasets.description + f"; eps in {list(EPS)}",
                 params={"alpha": Space(lambda c: None, "the best pure selection"), "eps": sampled_from(list(EPS))})


claim = Claim(
    name="lemma13",
    evaluations=1000,
    statement="label SVM on x_{i,alpha_i} feasible (support set S), (10) and ATT-SVM(alpha) feasible => for eps in (0, "
              "1] (78) is feasible and ||p_relax||^2 <= ||p^eps||^2 <= ||(1 - eps) p_relax + eps p_mm||^2 (the "
              "competitor of Lemma 13's proof; its support margin is Lipschitz in eps)",
    hypotheses=hyp.of("lemma13"),
    conclusion=competitor_margin,
    instances=lambda dropped: competitor_instances([joint.figure3(), joint.figure3(("1/2", "3/2")), figure3_like(),
                                                    random_joint()]),
    measures=("lipschitz_constant",),
)
