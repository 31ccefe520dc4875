"""Hypotheses on (ATT-SVM) of paper A (docs/statements.md#definition2), each decided by an exact
certificate (rational KKT or Farkas): for the optimal tokens, or for the tokens alpha =
params['alpha'] of an instance."""

from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table
from attnsvm.svm import geometry


def _selection(inst):
    """(ATT-SVM) for params['alpha'], or None when the instance names no valid alpha."""
    alpha = inst.params.get("alpha")
    if alpha is None or len(alpha) != inst.dataset.n:
        return None
    return geometry.select(inst.dataset, alpha)


def _gmm_feasible(inst) -> bool:
    sel = geometry.gmm(inst.dataset)
    return sel.feasible and sel.certified


def _feasible(inst) -> bool:
    sel = _selection(inst)
    return sel is not None and sel.feasible and sel.certified


def _locally_optimal(inst) -> bool:
    sel = _selection(inst)
    return sel is not None and sel.feasible and sel.certified and sel.locally_optimal


GMM_FEASIBLE = Hypothesis("gmm_feasible", "(ATT-SVM) with alpha = opt is feasible, by an exact KKT certificate",
                          _gmm_feasible)
FEASIBLE = Hypothesis("feasible", "(ATT-SVM) for alpha = params['alpha'] is feasible (exact KKT certificate)",
                      _feasible)
LOCALLY_OPTIMAL = Hypothesis("locally_optimal", "alpha = params['alpha'] is locally optimal: feasible and every "
                             "SVM-neighbour scores strictly lower (exact)", _locally_optimal)

HYPOTHESES = table(GMM_FEASIBLE, FEASIBLE, LOCALLY_OPTIMAL)
