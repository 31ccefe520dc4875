"""Hypotheses of paper A's Section 3, the joint training of the head v and the attention p
(Theorems 5 and 6, Lemma 13; docs/statements.md#theorem5): the selection alpha =
params['alpha'], its label SVM on x_{i,alpha_i}, Assumption C (C1-C3, `svm.joint`) and the rate
r = kappa R of the joint path (kappa = params['r_over_R']). Each is decided exactly."""

from fractions import Fraction

from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table
from attnsvm.svm import joint


def alpha_of(inst) -> list[int] | None:
    alpha = inst.params.get("alpha")
    return None if alpha is None or len(alpha) != inst.dataset.n else [int(a) for a in alpha]


def _kkt(pair) -> bool:
    res, cert = pair
    return res.ok and cert.verified and cert.kind == "kkt"


def _jointly_separable(inst) -> bool:
    alpha = alpha_of(inst)
    return alpha is not None and joint.jointly_separable(inst.dataset, alpha)


def _assumption_c(inst) -> bool:
    alpha = alpha_of(inst)
    return alpha is not None and joint.assumption_c(inst.dataset, alpha, range(inst.dataset.n))


def _label_separable(inst) -> bool:
    alpha = alpha_of(inst)
    return alpha is not None and _kkt(joint.label_result(inst.dataset, alpha, range(inst.dataset.n)))


def _assumption_c_support(inst) -> bool:
    alpha = alpha_of(inst)
    return alpha is not None and _label_separable(inst) and \
        joint.assumption_c(inst.dataset, alpha, joint.support_set(inst.dataset, alpha))


def _relaxed_feasible(inst) -> bool:
    alpha = alpha_of(inst)
    return alpha is not None and _label_separable(inst) and _kkt(joint.relaxed_target(inst.dataset, alpha))


def _att_svm_feasible(inst) -> bool:
    alpha = alpha_of(inst)
    return alpha is not None and _kkt(joint.att_svm(inst.dataset, alpha))


def _r_dominates_R(inst) -> bool:
    """kappa^2 P.P (m_i - 1)^2 > v.v (1 - c_it)^2 wherever c_it < 1 (exact): every non-support
    input's label-margin buffer kappa (m_i - 1)/||v_mm|| exceeds its attention deficit
    (1 - c_it)/||P|| (`svm.joint.shift_conditions`)."""
    alpha = alpha_of(inst)
    if alpha is None or not _relaxed_feasible(inst):
        return False
    kappa = Fraction(str(inst.params.get("r_over_R", 1)))
    return all(c >= 1 or kappa * kappa * PP * (m - 1) ** 2 > vv * (1 - c) ** 2
               for m, c, vv, PP in joint.shift_conditions(inst.dataset, alpha))


JOINTLY_SEPARABLE = Hypothesis("jointly_separable", "ATT-SVM(alpha) and the label SVM on x_{i,alpha_i} are feasible "
                                                    "(exact)", _jointly_separable)
ASSUMPTION_C = Hypothesis(
    "assumption_C", "C1: alpha uniquely maximises the label margin over pure selections; C2: every input is a support "
    "vector with a positive multiplier and alpha strictly out-scores under v_mm; C3: every mixture with non-optimal "
    "mass q in {1/4, 1/2, 3/4} on an input has a smaller margin (exact)", _assumption_c)
ASSUMPTION_C_SUPPORT = Hypothesis("assumption_C_support", "Assumption C (C1, C2, C3 over mixtures) over the support "
                                                          "set S of the label SVM (exact)", _assumption_c_support)
R_DOMINATES_R = Hypothesis("r_dominates_R", "the path's ray r = kappa R has kappa > kappa* (exact), the "
                                            "finite-rate form of r/R -> oo", _r_dominates_R)
LABEL_SEPARABLE = Hypothesis("label_separable", "the label SVM on x_{i,alpha_i} is feasible (exact KKT)",
                             _label_separable)
RELAXED_FEASIBLE = Hypothesis("relaxed_feasible", "problem (10) is feasible (exact KKT)", _relaxed_feasible)
ATT_SVM_FEASIBLE = Hypothesis("att_svm_feasible", "ATT-SVM(alpha) is feasible (exact KKT)", _att_svm_feasible)

HYPOTHESES = table(JOINTLY_SEPARABLE, ASSUMPTION_C, ASSUMPTION_C_SUPPORT, R_DOMINATES_R, LABEL_SEPARABLE,
                   RELAXED_FEASIBLE, ATT_SVM_FEASIBLE)
