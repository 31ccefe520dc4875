"""Hypotheses on the W-SVM of Transformers as SVMs (docs/statements.md#tfsvm-frobenius):
min ||W||_F s.t. (x_{i,alpha_i} - x_it)^T W z_i >= 1, decided by an exact certificate on its
lifted (ATT-SVM) form (`attnsvm.svm.wlift`), for the optimal tokens or for params['alpha']."""

from attnsvm.attention import model
from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table
from attnsvm.svm import wlift


def _gmm_feasible(inst) -> bool:
    return wlift.w_feasible(inst.dataset, model.optimal_tokens(inst.dataset))


def _feasible(inst) -> bool:
    sel = wlift.w_select(inst.dataset, inst.params["alpha"])
    return sel.feasible and sel.certified


def _locally_optimal(inst) -> bool:
    sel = wlift.w_select(inst.dataset, inst.params["alpha"])
    return sel.certified and sel.locally_optimal


GMM_FEASIBLE = Hypothesis("gmm_feasible", "the W-SVM with alpha = opt is feasible (exact certificate)", _gmm_feasible)
FEASIBLE = Hypothesis("feasible", "the W-SVM for alpha = params['alpha'] is feasible (exact certificate)", _feasible)
LOCALLY_OPTIMAL = Hypothesis("locally_optimal", "alpha = params['alpha'] is locally optimal for the W-SVM (exact)",
                             _locally_optimal)

DISCRIMINATES = 0.1     # how far above the nuclear optimum W_mm's nuclear norm must be for `discriminating`


def frobenius_excess(ds) -> float | None:
    """||W_mm||_* / ||W*_mm||_* - 1 at the optimal tokens: how far the Frobenius solution is from
    nuclear-norm optimal (W_mm has margin 1). None when either SVM is infeasible or unsolved."""
    import numpy as np

    opt = tuple(model.optimal_tokens(ds).tolist())
    fro, nuc = wlift.fro_w_svm(ds, opt), wlift.nuclear_w_svm(ds, opt)
    if not (fro.ok and nuc.ok):
        return None
    return float(np.linalg.norm(fro.solution, "nuc") / np.linalg.norm(nuc.solution, "nuc") - 1)


def excess_bound(ds) -> float | None:
    """An upper bound on `frobenius_excess` without the SDP: the Frobenius duals lam (W_mm =
    sum_j lam_j A_j, sum_j lam_j = ||W_mm||_F^2) scaled by 1/||W_mm||_op are feasible for the
    nuclear SVM's dual (max sum lam s.t. ||sum lam_j A_j||_op <= 1), so ||W*_mm||_* >=
    ||W_mm||_F^2 / ||W_mm||_op and the excess is at most ||W_mm||_* ||W_mm||_op / ||W_mm||_F^2 - 1."""
    import numpy as np

    opt = tuple(model.optimal_tokens(ds).tolist())
    fro = wlift.fro_w_svm(ds, opt)
    if not fro.ok:
        return None
    s = np.linalg.svd(fro.solution, compute_uv=False)
    return float(s.sum() * s.max() / (s ** 2).sum() - 1)


def _discriminating(inst) -> bool:
    bound = excess_bound(inst.dataset)
    if bound is None or bound <= DISCRIMINATES:         # decided without the SDP
        return False
    e = inst.dataset.memo("frobenius_nuclear_excess", lambda: frobenius_excess(inst.dataset))
    return e is not None and e > DISCRIMINATES


DISCRIMINATING = Hypothesis("discriminating", f"||W_mm||_*/||W*_mm||_* - 1 > {DISCRIMINATES} at the optimal tokens "
                            "(W_mm and W*_mm differ: a run converging to the Frobenius direction would fail the "
                            "nuclear check; at n = 1 they coincide)", _discriminating)

HYPOTHESES = table(GMM_FEASIBLE, FEASIBLE, LOCALLY_OPTIMAL, DISCRIMINATING)
