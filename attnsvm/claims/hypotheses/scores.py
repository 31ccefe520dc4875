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


def _score_gap(inst) -> bool:
    """gamma_opt - max_{t != opt} gamma_t >= the spread of the non-optimal scores, in every input (exact)."""
    g, opt = model.exact_scores(inst.dataset), model.optimal_tokens(inst.dataset)
    for i, row in enumerate(g):
        others = [x for t, x in enumerate(row) if t != opt[i]]
        if row[opt[i]] - max(others) < max(others) - min(others):
            return False
    return True


NOT_ALL_TIED = Hypothesis("not_all_tied", "every input has two tokens with different scores (exact)",
                          lambda inst: all(len(set(row)) > 1 for row in model.exact_scores(inst.dataset)))
SCORE_GAP = Hypothesis("score_gap", "gamma_opt - max_{t != opt} gamma_t >= spread of the other scores, every input "
                       "(exact; docs/statements.md#tfsvm-global)", _score_gap)

DISTINCT_SCORES = Hypothesis("distinct_scores", "gamma_it != gamma_itau for t != tau in every input (exact; Theorem 4)",
                             lambda inst: all(len(set(row)) == len(row) for row in model.exact_scores(inst.dataset)))

HYPOTHESES = table(STRICT_OPTIMALITY, ASSUMPTION_B, NOT_ALL_TIED, SCORE_GAP, DISTINCT_SCORES)
