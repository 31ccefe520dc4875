"""Verdicts and reports: what a verdict promises (README, "Verdicts") and whether it is the one a
result or a user expected.

A report with no stated expectation is as expected only when it PASSES (PROVED, CERTIFIED or
SUPPORTED); a report that records an error in user code is never as expected (fail closed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Verdict(str, Enum):
    PROVED = "PROVED"              # every outline step symbolic (general sizes) or exact
    PARTIAL = "PARTIAL"            # an outline with a cited, numeric, fixed-size or open step
    CERTIFIED = "CERTIFIED"        # every case the statement covers decided exactly
    SUPPORTED = "SUPPORTED"        # numeric evidence; at most a quarter of the instances inconclusive
    REFUTED = "REFUTED"            # a counterexample that re-verifies from its JSON form
    INCONCLUSIVE = "INCONCLUSIVE"  # budget spent, numerics untrusted, or an error, with the reason

    def __str__(self) -> str:
        return self.value


PASSING = frozenset({Verdict.PROVED, Verdict.CERTIFIED, Verdict.SUPPORTED})


@dataclass
class Report:
    """One verdict with its evidence; `part` is 'derivation', 'check', 'drop:<hypothesis>' or
    'witness:<name>'. `error` (type, message, instance) records user or internal code that
    raised; such a report is never as expected."""

    claim: str
    part: str
    verdict: Verdict
    expected: tuple[str, ...] = ()
    evidence: dict = field(default_factory=dict)
    witness: dict | None = None
    seconds: float = 0.0
    error: dict | None = None

    @property
    def as_expected(self) -> bool:
        if self.error is not None:
            return False
        if self.expected:
            return str(self.verdict) in self.expected
        return self.verdict in PASSING

    def to_json(self) -> dict:
        return {"id": self.claim, "part": self.part, "verdict": str(self.verdict), "expected": list(self.expected),
                "as_expected": self.as_expected, "evidence": self.evidence, "witness": self.witness,
                "error": self.error, "seconds": round(self.seconds, 3)}

    @classmethod
    def from_json(cls, obj: dict) -> Report:
        return cls(obj["id"], obj["part"], Verdict(obj["verdict"]), tuple(obj.get("expected", ())),
                   obj.get("evidence", {}), obj.get("witness"), float(obj.get("seconds", 0.0)), obj.get("error"))
