"""Hypotheses on the W-SVM of Transformers as SVMs (docs/statements.md#tfsvm-frobenius):
min ||W||_F s.t. (x_{i,alpha_i} - x_it)^T W z_i >= 1, decided by an exact certificate on its
lifted (ATT-SVM) form (`attnsvm.svm.wlift`), for the optimal tokens or for params['alpha']."""

from attnsvm.attention import model
from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table
from attnsvm.svm import wlift


def _gmm_feasible(inst) -> bool:
    sel = wlift.w_select(inst.dataset, model.optimal_tokens(inst.dataset))
    return sel.feasible and sel.certified


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

HYPOTHESES = table(GMM_FEASIBLE, FEASIBLE, LOCALLY_OPTIMAL)
