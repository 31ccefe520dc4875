"""The vocabulary claims are stated in: an `Instance` (a dataset plus JSON-ready parameters), a
`Hypothesis` (a named predicate on instances), an `Outcome` (the conclusion on one instance)
and a `Claim` (hypotheses + conclusion + an instance space).

`claim.drop("H")` is the same claim with hypothesis H removed; its instances must violate H,
so a counterexample to it shows H is needed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from attnsvm.attention.data import Dataset, dataset_from_json
from attnsvm.errors import UserError


@dataclass(frozen=True, eq=False)
class Instance:
    """A dataset plus JSON-ready parameters (start point, step size, loss, horizon, ...)."""

    dataset: Dataset
    params: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"dataset": self.dataset.to_json(), "params": self.params}

    @classmethod
    def from_json(cls, obj: Any, where: str = "instance") -> Instance:
        if not isinstance(obj, dict) or "dataset" not in obj:
            raise UserError(f"{where}: expected an object with keys 'dataset' and 'params'")
        unknown = set(obj) - {"dataset", "params"}
        if unknown:
            raise UserError(f"{where}: unknown key(s) {sorted(unknown)}")
        params = obj.get("params", {})
        if not isinstance(params, dict):
            raise UserError(f"{where}.params: expected an object")
        return cls(dataset_from_json(obj["dataset"], f"{where}.dataset"), dict(params))

    def __repr__(self) -> str:
        ds = self.dataset
        return f"Instance({ds.name}, n={ds.n}, T={ds.T}, d={ds.d}, params={self.params})"


class OutcomeError(TypeError):
    """A conclusion returned something that is not a valid `Outcome`."""


def _truth(value: Any, what: str) -> bool | None:
    """True, False or None from a Python or numpy boolean; anything else is an error (a NaN, a
    number or a string is not a truth value and must never count as holding)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    raise OutcomeError(f"{what} must be True, False or None, got {type(value).__name__} {value!r}")


@dataclass(frozen=True)
class Outcome:
    """The conclusion on one instance.

    holds: True / False, or None (undecided: numerics untrusted, see `reason`); certified:
    decided exactly (rational arithmetic, no numeric screen); margin: how far from failing
    (> 0 holds with that slack, <= 0 fails), which the search steers toward 0 (targeted
    search); detail: measured values (JSON-ready); applies: False when the instance turned out
    to lie outside what the claim is about, which only the conclusion can see (Hypothesis'
    `assume` in a test body: e.g. a run that selected no set of two tokens, for a claim about
    sets): such an instance is counted apart, neither holding nor undecided (`reason` says why)."""

    holds: bool | None
    certified: bool = False
    detail: dict = field(default_factory=dict)
    reason: str = ""
    margin: float | None = None
    applies: bool = True

    def __post_init__(self):
        object.__setattr__(self, "holds", _truth(self.holds, "Outcome.holds"))
        object.__setattr__(self, "certified", bool(_truth(self.certified, "Outcome.certified")))
        if self.margin is not None:
            m = self.margin
            if isinstance(m, bool) or not isinstance(m, (int, float, np.integer, np.floating)) or math.isnan(float(m)):
                raise OutcomeError(f"Outcome.margin must be a number (not NaN) or None, got {m!r}")
            object.__setattr__(self, "margin", float(m))
        if not isinstance(self.detail, dict):
            raise OutcomeError(f"Outcome.detail must be a dict, got {type(self.detail).__name__}")
        object.__setattr__(self, "applies", bool(_truth(self.applies, "Outcome.applies")))
        if not self.applies and self.holds is not None:
            raise OutcomeError("an Outcome that does not apply (applies=False) must have holds=None")
        if self.certified and self.holds is None:
            object.__setattr__(self, "certified", False)


class Batched:
    """A conclusion stated over a batch: `fn(instances, budget)` returns one `Outcome` per
    instance, in order (e.g. all their dynamics run together, `attnsvm.claims.blocks`). Called
    on one instance, it is that instance's outcome in a batch of one, so replay, shrinking and
    targeted search use it unchanged. Its outcome for an instance must not depend on the other
    instances of the batch (the engine relies on it: batched and one-at-a-time searches give the
    same verdict)."""

    def __init__(self, fn: Callable):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "batched")
        self.__doc__ = getattr(fn, "__doc__", None)

    def over(self, instances: list, budget) -> list:
        """The outcomes of `instances` under `budget`, validated (one per instance)."""
        outs = list(self.fn(list(instances), budget))
        if len(outs) != len(instances):
            raise OutcomeError(f"a batched conclusion must return one Outcome per instance: got {len(outs)} for "
                               f"{len(instances)}")
        return [validate_outcome(o) for o in outs]

    def __call__(self, inst, budget):
        return self.over([inst], budget)[0]

    def __repr__(self) -> str:
        return f"batched({self.__name__})"


def batched(fn: Callable) -> Batched:
    """Decorator: `fn(instances, budget) -> [Outcome, ...]` is a claim's conclusion over a batch."""
    return fn if isinstance(fn, Batched) else Batched(fn)


def validate_outcome(out: Any) -> Outcome:
    if not isinstance(out, Outcome):
        raise OutcomeError(f"the conclusion must return an attnsvm Outcome, got {type(out).__name__} {out!r:.80}")
    return out


@dataclass(frozen=True)
class Hypothesis:
    name: str
    description: str
    holds: Callable[[Instance], bool]

    def decide(self, inst: Instance) -> bool:
        """holds(inst) as a Python bool; any other return value is an error."""
        value = _truth(self.holds(inst), f"hypothesis {self.name!r}")
        if value is None:
            raise OutcomeError(f"hypothesis {self.name!r} returned None, expected True or False")
        return value


@dataclass(frozen=True)
class Claim:
    """A statement: under `hypotheses`, `conclusion(instance, budget)` holds.

    instances(dropped) gives the instance space: an `attnsvm.claims.spaces.Space` (searched
    exhaustively over small scopes, then targeted, then at random) or a Hypothesis strategy
    (targeted and random only); it may use `dropped` (names of removed hypotheses) to aim at
    instances that violate them. The engine enforces the hypotheses itself. `proxy` names how
    an asymptotic conclusion is measured, `horizon` and `tolerance` its finite horizon and
    tolerance. `measures` names numeric keys of `Outcome.detail` whose range over the
    conclusive instances the report gives. `expected`: the verdicts the author expects (none:
    only PROVED, CERTIFIED or SUPPORTED pass). `evaluations`: how many instances the quick
    budget evaluates (standard and thorough scale it as they scale their own counts; default:
    the budget's); a costly conclusion declares a small count, so every named budget is a fixed
    number of evaluations, the same verdict on every machine for the same seed.

    A conclusion wrapped in `batched` is evaluated over batches of instances (the exhaustive,
    sampled and targeted phases). `confirm`: horizon factors at which a failure is re-evaluated
    (in turn; it must fail at each, else the longer run's outcome stands: a slow but converging
    run holds or is undecided); `extend`: horizon factors at which an undecided instance is
    re-evaluated until it is decided (default: the budget's, doubling `Budget.retries` times).
    `tolerances`: the proxy's tolerances as data (name -> number), reported with every verdict."""

    name: str
    statement: str
    hypotheses: tuple[Hypothesis, ...]
    conclusion: Callable
    instances: Callable
    proxy: str = ""
    dropped: frozenset = frozenset()
    expected: tuple[str, ...] = ()
    measures: tuple[str, ...] = ()
    horizon: str = ""
    tolerance: str = ""
    evaluations: int | None = None
    confirm: tuple[float, ...] = ()
    extend: tuple[float, ...] | None = None
    tolerances: dict = field(default_factory=dict)

    def __post_init__(self):
        from attnsvm.claims.budget import MAX_FACTOR
        from attnsvm.claims.verdicts import Verdict

        if isinstance(self.expected, str) or not all(isinstance(v, str) and v in Verdict.__members__
                                                      for v in self.expected):
            raise UserError(f"claim {self.name!r}: expected must be a tuple of verdict names "
                            f"({', '.join(Verdict.__members__)}), got {self.expected!r}")
        if self.evaluations is not None and (isinstance(self.evaluations, bool) or not isinstance(self.evaluations, int)
                                             or self.evaluations < 1):
            raise UserError(f"claim {self.name!r}: evaluations must be a positive integer, got {self.evaluations!r}")
        if not isinstance(self.tolerances, dict) or not all(
                isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                for k, v in self.tolerances.items()):
            raise UserError(f"claim {self.name!r}: tolerances must map names to finite numbers, "
                            f"got {self.tolerances!r}")
        for key in ("confirm", "extend"):
            factors = getattr(self, key)
            if factors is not None and (isinstance(factors, (str, bytes)) or not all(
                    isinstance(f, (int, float)) and not isinstance(f, bool) and 1 < f <= MAX_FACTOR for f in factors)):
                raise UserError(f"claim {self.name!r}: {key} must be a tuple of horizon factors in (1, {MAX_FACTOR}], "
                                f"got {factors!r}")

    @property
    def is_batched(self) -> bool:
        return isinstance(self.conclusion, Batched)

    def extensions(self, budget) -> tuple[float, ...]:
        """The horizon factors at which an undecided instance is re-evaluated."""
        return tuple(self.extend) if self.extend is not None else tuple(2.0 ** k for k in range(1, budget.retries + 1))

    def hypothesis_names(self) -> list[str]:
        return [h.name for h in self.hypotheses]

    def drop(self, *names: str, instances: Callable | None = None) -> Claim:
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
        return all(h.decide(inst) for h in kept) and (not gone or any(not h.decide(inst) for h in gone))

    def violated(self, inst: Instance) -> list[str]:
        return [h.name for h in self.hypotheses if h.name in self.dropped and not h.decide(inst)]

    def evaluate(self, inst: Instance, budget="quick") -> Outcome:
        from attnsvm.claims.budget import get_budget

        return validate_outcome(self.conclusion(inst, get_budget(budget)))

    def check(self, budget="quick", seed: int = 0):
        from attnsvm.claims.search import check

        return check(self, budget, seed)
