"""Hypotheses on the token scores gamma_it = Y_i v^T x_it (docs/statements.md#definition1),
decided exactly on the rational data."""

from attnsvm.attention import model
from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table

STRICT_OPTIMALITY = Hypothesis(
    "strict_optimality", "gamma_{i,opt_i} > gamma_it for every i and t != opt_i (exact)",
    lambda inst: model.strict_optimality(inst.dataset))
ASSUMPTION_B = Hypothesis(
    "assumption_B", "in every input the non-optimal tokens share one score, strictly below the optimal one (exact)",
    lambda inst: model.assumption_b(inst.dataset))

HYPOTHESES = table(STRICT_OPTIMALITY, ASSUMPTION_B)
