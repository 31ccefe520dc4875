"""Hypotheses on what a gradient-descent result concludes for which data (paper A, Theorem 2:
docs/statements.md#theorem2): part (a), ||p_t|| -> oo, for any n; part (b), the direction, for
n = 1 only."""

from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table

SINGLE_INPUT = Hypothesis("single_input", "n = 1 where part (b) (the direction) is concluded; part (a) allows any n",
                          lambda inst: inst.params["part"] == "a" or inst.dataset.n == 1)

HYPOTHESES = table(SINGLE_INPUT)
