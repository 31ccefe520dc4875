"""The claims engine: the vocabulary users state claims in (`Claim`, `Hypothesis`, `Outcome`,
`Instance`), the search and its verdicts (`engine`), shared hypotheses and instance strategies,
the registry of the papers' results and the runner of their parts."""

from attnsvm.claims.engine import (
                                   BUDGETS,
                                   Budget,
                                   Claim,
                                   Derivation,
                                   Hypothesis,
                                   Instance,
                                   Outcome,
                                   Report,
                                   Verdict,
                                   check,
                                   get_budget,
                                   make_witness,
                                   replay_witness,
)

__all__ = ["BUDGETS", "Budget", "Claim", "Derivation", "Hypothesis", "Instance", "Outcome", "Report", "Verdict", "check",
           "get_budget", "make_witness", "replay_witness"]
