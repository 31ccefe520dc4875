"""Hypotheses on (ATT-SVM') of paper A's Appendix D (docs/statements.md#theorem8): optimal sets
O_i = params['sets'] of tokens, and the heads h(x) = phi(v^T x) of `svm.generalized`. Each is
decided exactly (rational scores, certified QP pieces)."""

from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table
from attnsvm.svm import generalized


def sets_of(inst) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(O) for O in inst.params["sets"])


def top_sets_given(inst) -> bool:
    """The given O_i are exactly the top-score tokens of each input (exact scores)."""
    return sets_of(inst) == generalized.top_sets(inst.dataset)


def prime_feasible(inst) -> bool:
    sol = generalized.solution(inst.dataset, sets_of(inst))
    return sol.certified and sol.feasible and sol.value2 > 0


ASSUMPTION_D = Hypothesis(
    "assumption_D", "Assumption D through Lemma 14: O_i = the tokens of top score (exact); outside tokens score "
                    "strictly lower, so they lower Y_i h by between c q_i and C q_i, c > 0", top_sets_given)
LABEL_MIXING = Hypothesis(
    "label_mixing", "(85) with c > 0: O_i = the top-score tokens (exact), so each token outside O_i lowers the margin "
                    "by at least c = its score gap > 0", top_sets_given)
PRIME_FEASIBLE = Hypothesis(
    "prime_feasible", "(ATT-SVM') for the sets is feasible with Xi > 0 (some token lies outside the sets: a direction "
                      "along which q -> 0; every piece certified exactly)", prime_feasible)

HYPOTHESES = table(ASSUMPTION_D, LABEL_MIXING, PRIME_FEASIBLE)
