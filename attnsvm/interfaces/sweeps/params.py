"""Each sweep's settings validate themselves from a declared table of constraints (scikit-learn's
`_param_validation` style): a `Settings` dataclass declares `PARAMS` (field -> constraint),
optionally `RELATIONS` (orderings between fields) and `size()` (the numbers one shard holds), and
calls `validate(self)` after construction. The checks run in declaration order and the first
failure is one `UserError` line naming the command-line option (`--shard-size` for `shard_size`;
`FLAGS` renames, e.g. dims -> --d), so the CLI, which builds the settings from its options,
inherits every check and message; `check_values` applies a table to loose values (a sweep's
options that are not settings). The constraints and limits below are defined once, here.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from attnsvm.attention.fused import LOSS_CODES
from attnsvm.errors import UserError

MAX_SIZE = 100_000          # any n, T, d, count or step count beyond this is a typo, not an experiment (memory)
MAX_ELEMENTS = 50_000_000   # float64 numbers of one shard's problem (400 MB): larger is a typo or exhausts memory
LR_MAX = 1e3                # step sizes: beyond this the iterates overflow, not an experiment
INIT_SCALE_MAX = 10.0
TOL_MAX = 0.1               # 1 - corr or 1 - probability; looser would call a path far off "converged"
SAT_TOL_MAX = 0.01          # mean_i (1 - s_{i,alpha_i}): looser is not a selected token (fig4's level 0.99)
RANK_TOL_MAX = 0.01         # singular values counted above this * sigma_1
GAP_TOL_MAX = 0.5           # a "small" negative score gap (scores lie in [-1, 1]; Figure 9(b)'s bins are 0.05)


def _fmt(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


@dataclass(frozen=True)
class Interval:
    """A number of `kind` (int or float; a float accepts ints) in [low, high], each end in or out
    by `closed` ('both', 'left', 'right', 'neither'); None: unbounded. `why_low` / `why_high`
    say why a bound is there."""

    kind: type
    low: float | None
    high: float | None = None
    closed: str = "both"
    why_low: str = ""
    why_high: str = ""

    def _lower(self) -> str:
        if self.low == 0:
            return "a finite positive number" if self.closed in ("right", "neither") else "a finite non-negative number"
        word = "at least" if self.closed in ("both", "left") else "above"
        return f"{word} {_fmt(self.low)}" + (f" ({self.why_low})" if self.why_low else "")

    def check(self, flag: str, value) -> None:
        if isinstance(value, bool) or not isinstance(value, int if self.kind is int else (int, float)):
            raise UserError(f"{flag} must be {'an integer' if self.kind is int else 'a number'}, got {value!r}")
        left_in, right_in = self.closed in ("both", "left"), self.closed in ("both", "right")
        low = self.low is not None and (value < self.low or (value == self.low and not left_in))
        if not math.isfinite(value) or low:
            raise UserError(f"{flag} must be {self._lower()}, got {_fmt(value)}")
        if self.high is not None and (value > self.high or (value == self.high and not right_in)):
            word = "at most" if right_in else "below"
            why = f" ({self.why_high})" if self.why_high else ""
            raise UserError(f"{flag} must be {word} {_fmt(self.high)}{why}, got {_fmt(value)}")


@dataclass(frozen=True)
class Options:
    """One of `values`; with a `noun` the message reads "unknown NOUN 'x'; choose from ..."."""

    values: tuple
    noun: str = ""

    def check(self, flag: str, value) -> None:
        if value not in self.values:
            if self.noun:
                raise UserError(f"unknown {self.noun} {value!r}; choose from {', '.join(map(str, self.values))}")
            names = list(map(str, self.values))
            raise UserError(f"{flag} must be {', '.join(names[:-1])} or {names[-1]}, got {value!r}")


@dataclass(frozen=True)
class Each:
    """Every element of a non-empty sequence satisfies `inner`."""

    inner: Any

    def check(self, flag: str, value) -> None:
        if not len(value):
            raise UserError(f"{flag}: expected at least one value")
        for v in value:
            self.inner.check(flag, v)


@dataclass(frozen=True)
class Satisfies:
    """Any predicate, with the message "FLAG must be `description`"."""

    predicate: Callable[[Any], bool]
    description: str

    def check(self, flag: str, value) -> None:
        if not self.predicate(value):
            raise UserError(f"{flag} must be {self.description}, got {value!r}")


@dataclass(frozen=True)
class Relation:
    """field `left` `op` field `right` (op '<=' or '<'), e.g. window <= steps."""

    left: str
    op: str
    right: str

    def check(self, settings, flag: Callable[[str], str]) -> None:
        a, b = getattr(settings, self.left), getattr(settings, self.right)
        if not {"<=": operator.le, "<": operator.lt}[self.op](a, b):
            raise UserError(f"need {flag(self.left)} {self.op} {flag(self.right)}, got {flag(self.left)} {_fmt(a)}, "
                            f"{flag(self.right)} {_fmt(b)}")


# the constraints the sweeps share, defined once
COUNT = Interval(int, 0, MAX_SIZE, closed="right")               # n, d, trials, runs, steps, shard sizes, workers
TOKENS = Interval(int, 2, MAX_SIZE)                              # T
HORIZON = Interval(int, 2, MAX_SIZE)                             # steps where H/2 is read
SEED = Interval(int, 0)
STEP = Interval(float, 0, LR_MAX, closed="right", why_high="larger steps overflow the iterates")
INIT_SCALE = Interval(float, 0, INIT_SCALE_MAX, why_high="a larger start overflows the softmax")
SAT_TOL = Interval(float, 0, SAT_TOL_MAX, closed="right", why_high="a looser threshold is no saturation")
TOL = Interval(float, 0, TOL_MAX, closed="right",
               why_high="a looser proxy would call a path far from its limit converged")
RANK_TOL = Interval(float, 0, RANK_TOL_MAX, closed="right", why_high="relative to sigma_1; a looser one hides rank")
GAP_TOL = Interval(float, 0, GAP_TOL_MAX, closed="right",
                   why_high="scores lie in [-1, 1]; a larger negative gap is not small")
EPS = Interval(float, 0)
LOSS = Options(tuple(sorted(LOSS_CODES)), noun="loss")
CONVENTIONS = Options(("default", "authors"), noun="conventions")
ATTENTION = Options(("cross", "self"))                           # the notebooks' random queries | z_i = x_i1
INIT = Options(("normal", "uniform"))                            # N(0, scale^2) | torch's nn.Linear
GRADIENT = Options(("log-domain", "naive"))                      # cancellation-free | float64 autograd
SOLVER = Options(("library", "authors"))                         # quadprog / Clarabel | the notebooks' cvxpy


def flag(settings, name: str) -> str:
    """The command-line option of field `name`: FLAGS' name, else the field's with '-' for '_'."""
    return "--" + getattr(settings, "FLAGS", {}).get(name, name.replace("_", "-"))


def check_size(what: str, elements: int) -> None:
    """Refuse a problem whose shard holds more than MAX_ELEMENTS numbers."""
    if elements > MAX_ELEMENTS:
        raise UserError(f"problem too large: {what} = {elements:,} numbers per shard (limit {MAX_ELEMENTS:,}, "
                        f"about {MAX_ELEMENTS * 8 // 10**6} MB); use smaller sizes or --shard-size")


def validate(settings) -> None:
    """Check a settings object against its PARAMS (in field order), RELATIONS and size()."""
    table = type(settings).PARAMS
    for f in fields(settings):
        if f.name in table:
            table[f.name].check(flag(settings, f.name), getattr(settings, f.name))
    for rel in getattr(type(settings), "RELATIONS", ()):
        rel.check(settings, lambda name: flag(settings, name))
    if hasattr(settings, "size"):
        check_size(*settings.size())


def check_values(table: dict, values: dict) -> None:
    """A table applied to loose values (option name -> value; '_' reads '-')."""
    for name, constraint in table.items():
        constraint.check("--" + name.replace("_", "-"), values[name])


def preset(cls, presets: dict, conventions: str, **kw):
    """`cls` under the named conventions (`presets[conventions]` over `kw`)."""
    CONVENTIONS.check("--conventions", conventions)
    return cls(**{**kw, **presets[conventions]})


def from_json(cls, obj: dict):
    """A settings object from its JSON form (lists become the tuples the fields hold)."""
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in obj.items()})
