"""The claims engine: the vocabulary claims are stated in (`Claim`, `Hypothesis`, `Outcome`,
`Instance`), instance spaces (`spaces`, `strategies`), the search and its verdicts (`search`,
`verdicts`, `budget`), witnesses, proof outlines, shared hypotheses, the registry of the
papers' results and the runner of their parts.

The names below are imported on first use (PEP 562), so `from attnsvm.claims import registry`
(the manifest, plain data: `attnsvm list`, the pytest plugin) loads no numerics.
"""

from __future__ import annotations

import importlib

_WHERE = {"BUDGETS": "budget", "Budget": "budget", "get_budget": "budget",
          "Batched": "claim", "batched": "claim", "Claim": "claim", "Hypothesis": "claim", "Instance": "claim",
          "Outcome": "claim",
          "Outline": "outline", "Step": "outline", "check": "search",
          "PASSING": "verdicts", "Report": "verdicts", "Verdict": "verdicts",
          "make_witness": "witnesses", "replay_witness": "witnesses"}

__all__ = list(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
