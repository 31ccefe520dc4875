"""Hypotheses on the loss (paper A, Assumption A: docs/statements.md#assumption-A)."""

from attnsvm.attention.losses import LOSSES
from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table


def _assumption_a(inst) -> bool:
    loss = inst.params.get("loss")
    return loss in LOSSES and LOSSES[loss].constants is not None


ASSUMPTION_A = Hypothesis(
    "assumption_A", "the loss (params['loss']) satisfies Assumption A: logistic, exponential or correlation",
    _assumption_a)
LOGISTIC = Hypothesis("logistic_loss", "the loss (params['loss'], default logistic) is the logistic loss",
                      lambda inst: inst.params.get("loss", "logistic") == "logistic")

HYPOTHESES = table(ASSUMPTION_A, LOGISTIC)
