"""Hypotheses on the optimal sets O_i of paper A's Appendix D (docs/statements.md#assumption-D),
given as params['sets'] (one list of token indices per input)."""

from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table


def _non_singleton(inst) -> bool:
    sets = inst.params["sets"]
    return any(len(O) >= 2 for O in sets) and all(len(O) < inst.dataset.T for O in sets)


NON_SINGLETON_SET = Hypothesis("non_singleton_set", "some O_i has >= 2 tokens, every O_i leaves a token out",
                               _non_singleton)

HYPOTHESES = table(NON_SINGLETON_SET)
