"""Search budgets: how many evaluations a check makes, and the wall-clock guard of a part.

The named budgets (quick, standard, thorough) are bounded by evaluations only (`seconds=None`):
a search evaluates `evaluations` instances (or the claim's own quick count, `Claim.evaluations`,
scaled as the budgets scale their own: `evaluations()`) in a fixed order, so the same seed gives
the same verdict and witness on every machine, loaded or idle. `limit` is not a budget but a
runaway guard: a part still running past the larger of `limit` and ten times its projected cost
(search.RUNAWAY) is stopped as an error row, never a verdict. A budget built by hand with
`seconds` is time-bounded instead: once `min_instances` conclusive instances held, it stops when
the seconds are spent, which depends on the machine (its report says so). `horizon` multiplies a
claim's iteration counts and grid sizes; an undecided instance is re-evaluated with the horizon
doubled up to `retries` times (or at the claim's own `extend` factors).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from attnsvm.claims import parameters
from attnsvm.errors import UserError

MAX_FACTOR = 64             # a claim's extend/confirm horizon factors are at most this (claim.Claim)


@dataclass(frozen=True)
class Budget:
    name: str
    evaluations: int
    seconds: float | None
    min_instances: int
    horizon: float
    limit: float
    retries: int = 1

    def extended(self, factor: float = 2.0) -> Budget:
        """The same budget with the horizon multiplied by `factor` (to re-decide an instance)."""
        return replace(self, horizon=self.horizon * factor)

    @classmethod
    def from_json(cls, obj, where: str = "budget") -> Budget:
        """A budget from its name or its JSON form (`to_json`), each field bounded (`BOUNDS`)
        before it sizes any run: a horizon of 1e12 in a file would never end."""
        if isinstance(obj, str):
            return get_budget(obj)
        fields = ("name", "evaluations", "seconds", "min_instances", "horizon", "limit", "retries")
        if not isinstance(obj, dict) or set(obj) - set(fields) or not set(fields[:6]) <= set(obj):
            raise UserError(f"{where}: expected a name ({', '.join(BUDGETS)}) or an object with keys {list(fields)}")
        if not isinstance(obj["name"], str):
            raise UserError(f"{where}: name must be a string, got {obj['name']!r}")
        for key, c in BOUNDS.items():
            if key in obj:
                try:
                    parameters.check(key, obj[key], c)
                except UserError as e:
                    raise UserError(f"{where}.{e}") from None
        return cls(**obj)

    def to_json(self) -> dict:
        return {"name": self.name, "evaluations": self.evaluations, "seconds": self.seconds,
                "min_instances": self.min_instances, "horizon": self.horizon, "limit": self.limit,
                "retries": self.retries}


BUDGETS = {b.name: b for b in (
    Budget("quick", evaluations=4000, seconds=None, min_instances=6, horizon=1.0, limit=120.0),
    Budget("standard", evaluations=40000, seconds=None, min_instances=25, horizon=2.0, limit=900.0),
    Budget("thorough", evaluations=400000, seconds=None, min_instances=100, horizon=4.0, limit=7200.0, retries=2),
)}


def evaluations(budget: Budget, declared: int | None) -> int:
    """How many instances a search under `budget` evaluates for a claim that declares
    `declared` (its quick count; None: the budget's own): a named budget scales the declared
    count as it scales its own (standard 10x, thorough 100x the quick count); a budget built by
    hand (another name, or another evaluation count) keeps its own."""
    named = BUDGETS.get(budget.name)
    if declared is None or named is None or budget.evaluations != named.evaluations:
        return budget.evaluations
    return max(1, declared * named.evaluations // BUDGETS["quick"].evaluations)


def get_budget(budget: str | Budget) -> Budget:
    if isinstance(budget, Budget):
        return budget
    if budget not in BUDGETS:
        raise UserError(f"unknown budget {budget!r}; choose from {', '.join(BUDGETS)}")
    return BUDGETS[budget]


# The largest horizon a search under a named budget can record: the budget's, times an extension
# factor, times a confirmation factor (each at most MAX_FACTOR). A witness's budget is bounded by it.
MAX_HORIZON = max(b.horizon for b in BUDGETS.values()) * MAX_FACTOR ** 2
BOUNDS = {"evaluations": parameters.Number(0, 10**7, integer=True),
          "seconds": parameters.Nullable(parameters.Number(0, 86400)),
          "min_instances": parameters.Number(0, 10**7, integer=True),
          "horizon": parameters.Number(0, MAX_HORIZON, open_lo=True), "limit": parameters.Number(0, 86400),
          "retries": parameters.Number(0, 8, integer=True)}
