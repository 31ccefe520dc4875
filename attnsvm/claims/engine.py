"""The claims engine: a claim is hypotheses + conclusion + an instance strategy.

`Claim.check(budget, seed)` searches the hypotheses' instances for one where the conclusion
fails (Hypothesis `find`, so a failure shrinks to a small witness) and returns a `Report`:

- REFUTED: a shrunk counterexample that re-verifies after a JSON round trip (the witness);
- CERTIFIED: no counterexample, and every instance's conclusion was decided exactly;
- SUPPORTED: no counterexample among `instances` conclusive instances (numeric evidence);
- INCONCLUSIVE: too few instances met the hypotheses, or too many outcomes were untrusted
  (underflow, solver status), with the reason.

`claim.drop("H")` is the same claim with hypothesis H removed; its instances must violate
H, so a counterexample to it shows H is needed.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Callable

import hypothesis
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample, Unsatisfiable

from attnsvm.attention.data import Dataset, dataset_from_json


class Verdict(str, Enum):
    PROVED = "PROVED"
    CERTIFIED = "CERTIFIED"
    SUPPORTED = "SUPPORTED"
    REFUTED = "REFUTED"
    INCONCLUSIVE = "INCONCLUSIVE"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Budget:
    """examples: instances searched; horizon: multiplier of iteration counts / grid sizes."""

    name: str
    examples: int
    horizon: float


BUDGETS = {b.name: b for b in (Budget("quick", 12, 1.0), Budget("standard", 50, 2.0), Budget("thorough", 200, 4.0))}


def get_budget(budget: str | Budget) -> Budget:
    from attnsvm.errors import UserError

    if isinstance(budget, Budget):
        return budget
    if budget not in BUDGETS:
        raise UserError(f"unknown budget {budget!r}; choose from {list(BUDGETS)}")
    return BUDGETS[budget]


@dataclass(frozen=True, eq=False)
class Instance:
    """A dataset plus JSON-ready parameters (start point, step size, loss, horizon, ...)."""

    dataset: Dataset
    params: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"dataset": self.dataset.to_json(), "params": self.params}

    @classmethod
    def from_json(cls, obj: dict) -> "Instance":
        return cls(dataset_from_json(obj["dataset"], "instance.dataset"), dict(obj.get("params", {})))

    def __repr__(self) -> str:
        return f"Instance({self.dataset.name}, n={self.dataset.n}, T={self.dataset.T}, d={self.dataset.d}, params={self.params})"


@dataclass(frozen=True)
class Outcome:
    """The conclusion on one instance: holds True/False, or None (untrusted: see reason).
    certified: decided exactly (rational arithmetic). detail: measured values (JSON-ready)."""

    holds: bool | None
    certified: bool = False
    detail: dict = field(default_factory=dict)
    reason: str = ""

    def __post_init__(self):  # numpy booleans (np.True_) would break `holds is False`
        if self.holds is not None:
            object.__setattr__(self, "holds", bool(self.holds))
        object.__setattr__(self, "certified", bool(self.certified))


@dataclass(frozen=True)
class Hypothesis:
    name: str
    description: str
    holds: Callable[[Instance], bool]


@dataclass
class Report:
    """One verdict with its evidence; `part` is 'derivation', 'check' or 'drop:<hypothesis>'."""

    claim: str
    part: str
    verdict: Verdict
    expected: tuple[str, ...] = ()
    evidence: dict = field(default_factory=dict)
    witness: dict | None = None
    seconds: float = 0.0

    @property
    def as_expected(self) -> bool:
        return not self.expected or str(self.verdict) in self.expected

    def to_json(self) -> dict:
        return {"id": self.claim, "part": self.part, "verdict": str(self.verdict), "expected": list(self.expected),
                "as_expected": self.as_expected, "evidence": self.evidence, "witness": self.witness,
                "seconds": round(self.seconds, 3)}


@dataclass(frozen=True)
class Claim:
    """A statement: under `hypotheses`, `conclusion(instance, budget)` holds.

    instances(dropped) is a Hypothesis strategy of instances; it may use `dropped` (names of
    removed hypotheses) to aim at instances that violate them. The engine enforces the
    hypotheses itself, whatever the strategy yields. `proxy` names how an asymptotic
    conclusion is measured (horizon, tolerance). `measures` names numeric keys of
    `Outcome.detail` whose range over the conclusive instances the report gives
    (evidence["measures"], e.g. the largest empirical Lipschitz ratio found)."""

    name: str
    statement: str
    hypotheses: tuple[Hypothesis, ...]
    conclusion: Callable[[Instance, Budget], Outcome]
    instances: Callable[[frozenset], st.SearchStrategy]
    proxy: str = ""
    dropped: frozenset = frozenset()
    expected: tuple[str, ...] = ()
    measures: tuple[str, ...] = ()

    def hypothesis_names(self) -> list[str]:
        return [h.name for h in self.hypotheses]

    def drop(self, *names: str, instances: Callable[[frozenset], st.SearchStrategy] | None = None) -> "Claim":
        from attnsvm.errors import UserError

        unknown = [n for n in names if n not in self.hypothesis_names()]
        if unknown:
            raise UserError(f"{self.name} has no hypothesis {unknown[0]!r}; it has {self.hypothesis_names()}")
        return replace(self, dropped=self.dropped | frozenset(names), instances=instances or self.instances,
                       expected=("REFUTED",))

    @property
    def part(self) -> str:
        return "check" if not self.dropped else "drop:" + ",".join(sorted(self.dropped))

    def meets(self, inst: Instance) -> bool:
        """Every kept hypothesis holds and (if any were dropped) some dropped one fails."""
        kept = [h for h in self.hypotheses if h.name not in self.dropped]
        gone = [h for h in self.hypotheses if h.name in self.dropped]
        return all(h.holds(inst) for h in kept) and (not gone or any(not h.holds(inst) for h in gone))

    def evaluate(self, inst: Instance, budget: str | Budget = "quick") -> Outcome:
        return self.conclusion(inst, get_budget(budget))

    def check(self, budget: str | Budget = "quick", seed: int = 0) -> Report:
        return check(self, budget, seed)


def _settings(examples: int) -> settings:
    return settings(max_examples=examples, database=None, deadline=None, derandomize=False,
                    suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink],
                    report_multiple_bugs=False)


def check(claim: Claim, budget: str | Budget = "quick", seed: int = 0) -> Report:
    budget = get_budget(budget)
    start = time.perf_counter()
    stats: Counter = Counter()
    reasons: Counter = Counter()
    measured: dict[str, list[float]] = {k: [] for k in claim.measures}

    def refutes(inst: Instance) -> bool:
        out = claim.conclusion(inst, budget)
        stats["evaluated"] += 1
        for k in claim.measures:
            if out.holds is not None and isinstance(out.detail.get(k), (int, float)):
                measured[k].append(float(out.detail[k]))
        if out.holds is None:
            stats["inconclusive"] += 1
            reasons[out.reason] += 1
        elif out.holds:
            stats["held"] += 1
            stats["certified"] += bool(out.certified)
        return out.holds is False

    strategy = claim.instances(claim.dropped).filter(claim.meets)
    evidence: dict[str, Any] = {"budget": budget.name, "seed": seed, "proxy": claim.proxy,
                                "statement": claim.statement}
    if claim.dropped:
        evidence["dropped"] = sorted(claim.dropped)
    try:
        found = hypothesis.find(strategy, refutes, settings=_settings(budget.examples), random=random.Random(seed))
    except (NoSuchExample, Unsatisfiable):
        found = None
    evidence.update(instances=stats["held"], evaluated=stats["evaluated"], inconclusive=stats["inconclusive"],
                    certified=stats["certified"])
    if reasons:
        evidence["inconclusive_reasons"] = dict(reasons.most_common(3))
    if any(measured.values()):
        evidence["measures"] = {k: {"min": min(v), "max": max(v), "instances": len(v)} for k, v in measured.items() if v}
    if found is not None:
        witness = make_witness(claim, found, budget, seed)
        verdict = replay_witness(witness, claim).verdict
        if verdict is not Verdict.REFUTED:
            evidence["note"] = "counterexample found but did not re-verify from its JSON form"
            return Report(claim.name, claim.part, Verdict.INCONCLUSIVE, claim.expected, evidence, witness, time.perf_counter() - start)
        evidence["counterexample"] = witness["outcome"]
        return Report(claim.name, claim.part, Verdict.REFUTED, claim.expected, evidence, witness, time.perf_counter() - start)
    need = max(1, budget.examples // 2)
    if stats["held"] < need:
        evidence["note"] = (f"only {stats['held']} conclusive instances met the hypotheses (need {need})"
                            if not stats["inconclusive"] else f"{stats['inconclusive']} instances inconclusive; {stats['held']} conclusive (need {need})")
        verdict = Verdict.INCONCLUSIVE
    elif stats["certified"] == stats["held"] and stats["inconclusive"] == 0:
        verdict = Verdict.CERTIFIED
    else:
        verdict = Verdict.SUPPORTED
    return Report(claim.name, claim.part, verdict, claim.expected, evidence, None, time.perf_counter() - start)


# ---- witnesses ---------------------------------------------------------------------------

WITNESS_FORMAT = "attnsvm-witness/1"


def make_witness(claim: Claim, inst: Instance, budget: Budget, seed: int, source: str | None = None) -> dict:
    out = claim.conclusion(inst, budget)
    violated = [h.name for h in claim.hypotheses if h.name in claim.dropped and not h.holds(inst)]
    return {"format": WITNESS_FORMAT, "claim": claim.name, "source": source or claim.name,
            "statement": claim.statement, "dropped": sorted(claim.dropped), "violates": violated,
            "budget": budget.name, "seed": seed, "instance": inst.to_json(),
            "verdict": "REFUTED", "outcome": {"holds": out.holds, "reason": out.reason, **out.detail}}


def replay_witness(witness: dict, claim: Claim) -> Report:
    """Re-verify a stored witness against `claim` (already with its hypotheses dropped):
    the instance must meet the kept hypotheses, violate a dropped one, and refute."""
    start = time.perf_counter()
    inst = Instance.from_json(witness["instance"])
    budget = get_budget(witness.get("budget", "quick"))
    evidence: dict[str, Any] = {"budget": budget.name, "dropped": witness.get("dropped", []), "replayed": True}
    if not claim.meets(inst):
        evidence["note"] = "the witness does not meet the claim's hypotheses (or violates none of the dropped ones)"
        return Report(claim.name, claim.part, Verdict.INCONCLUSIVE, claim.expected, evidence, witness, time.perf_counter() - start)
    out = claim.conclusion(inst, budget)
    evidence.update(outcome={"holds": out.holds, "reason": out.reason, **out.detail})
    if out.holds is False:
        verdict = Verdict.REFUTED
    elif out.holds is None:
        verdict = Verdict.INCONCLUSIVE
        evidence["note"] = out.reason
    else:
        verdict = Verdict.CERTIFIED if out.certified else Verdict.SUPPORTED
        evidence["note"] = "the stored counterexample no longer refutes the claim"
    return Report(claim.name, claim.part, verdict, claim.expected, evidence, witness, time.perf_counter() - start)


@dataclass(frozen=True)
class Derivation:
    """A symbolic result: PROVED when sympy reduces the identity's residual to zero (or an
    exact algebraic argument closes), REFUTED when it reduces to a nonzero expression."""

    statement: str
    verdict: Verdict
    detail: dict = field(default_factory=dict)
