"""Hypotheses on the data's sizes and shape."""

from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table

SINGLE_INPUT = Hypothesis("single_input", "n = 1", lambda inst: inst.dataset.n == 1)

HYPOTHESES = table(SINGLE_INPUT)
