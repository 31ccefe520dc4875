"""Hypotheses on how a regularization path is set up (docs/statements.md#theorem4,
#tfsvm-regpath-w, #tfsvm-regpath-kq): the direction q a restricted path is confined around
(params['q'], exact rationals), the region a W path is paired with (params['region']), and
whether the limit a (K, Q) path is claimed to reach differs from the Frobenius W_mm."""

from fractions import Fraction

from attnsvm.attention import model
from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table
from attnsvm.svm import geometry

LMM_LIMIT = 4096        # T^n above this: the LMM set is not exhaustive and q_not_lmm is not decided (not met)
SVM_CORR = 0.99         # svms_differ: corr(W_mm(opt), claimed limit) below this


def parallel(q, x) -> bool:
    """q and x point the same way, exactly (all 2x2 minors vanish, positive inner product)."""
    d = len(q)
    minors = all(q[i] * x[j] == q[j] * x[i] for i in range(d) for j in range(i + 1, d))
    return minors and sum(a * b for a, b in zip(q, x)) > 0


def lmm_directions(ds) -> list:
    """Every locally optimal selection with an exact p_mm (exhaustive when T^n <= LMM_LIMIT)."""
    return [s for s in geometry.lmms(ds, LMM_LIMIT) if s.certified]


def _q_not_lmm(inst) -> bool:
    if not geometry.exhaustive(inst.dataset, LMM_LIMIT):
        return False
    q = [Fraction(x) for x in inst.params["q"]]
    return not any(parallel(q, s.certificate.x) for s in lmm_directions(inst.dataset))


def _global_is_opt(inst) -> bool:
    return inst.params["region"] == "cone" or (
        model.strict_optimality(inst.dataset)
        and list(inst.params["alpha"]) == model.optimal_tokens(inst.dataset).tolist())


def _svms_differ(inst) -> bool:
    from attnsvm.dynamics import wpaths

    tg = wpaths.kq_target(inst.dataset, inst.params["m"], inst.params["seed"])
    return bool(tg["ok"]) and tg["corr_W_mm_target"] < SVM_CORR


Q_NOT_LMM = Hypothesis("q_not_lmm", "q is parallel to no LMM p_mm (exact, all selections)", _q_not_lmm)
GLOBAL_IS_OPT = Hypothesis("global_is_opt", "the unconstrained (ball) W path is paired with "
                                            "alpha = opt, strictly optimal",
                           _global_is_opt)
SVMS_DIFFER = Hypothesis("svms_differ", f"corr(W_mm(opt), claimed (K, Q) limit) < {SVM_CORR} (the check discriminates)",
                         _svms_differ)

HYPOTHESES = table(Q_NOT_LMM, GLOBAL_IS_OPT, SVMS_DIFFER)
