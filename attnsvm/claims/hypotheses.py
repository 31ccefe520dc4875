"""The papers' standing hypotheses as reusable `Hypothesis` values, decided exactly where the
data allow (rational scores, KKT certificates). Claims (built-in and users') share them, so a
hypothesis means the same thing in every result that names it."""

from __future__ import annotations

from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims.claim import Hypothesis
from attnsvm.svm import geometry


def _assumption_a(inst) -> bool:
    loss = inst.params.get("loss")
    return loss in LOSSES and LOSSES[loss].constants is not None


def _gmm_feasible(inst) -> bool:
    sel = geometry.gmm(inst.dataset)
    return sel.feasible and sel.certified


ASSUMPTION_A = Hypothesis(
    "assumption_A", "the loss (params['loss']) satisfies Assumption A: logistic, exponential or correlation",
    _assumption_a)
STRICT_OPTIMALITY = Hypothesis(
    "strict_optimality", "gamma_{i,opt_i} > gamma_it for every i and t != opt_i (exact)",
    lambda inst: model.strict_optimality(inst.dataset))
ASSUMPTION_B = Hypothesis(
    "assumption_B", "in every input the non-optimal tokens share one score, strictly below the optimal one (exact)",
    lambda inst: model.assumption_b(inst.dataset))
GMM_FEASIBLE = Hypothesis(
    "gmm_feasible", "(ATT-SVM) with alpha = opt is feasible, by an exact KKT certificate",
    _gmm_feasible)
SINGLE_INPUT = Hypothesis("single_input", "n = 1", lambda inst: inst.dataset.n == 1)
