"""Declared parameters: constraints on JSON values stated once (scikit-learn's
`_param_validation` style), one message format, and the manifest of each result's instance
parameters (types and ranges) that a stored witness is validated against before any of its
values reaches claim code.

A constraint is a small value (`Options`, `Number`, `ListOf`, `Nullable`, `Either`) that says
whether a value meets it, given the instance's dataset for sizes (`n`, `T`, `d`: a selection
has one token index in [0, T) per input), and describes itself for the message. `why_not(spec,
params, ds)` gives the first reason a parameter dict breaks a spec (unknown, missing or out of
range), or None. The manifest (`DECLARED`, by result id) sits beside the registry as plain data;
the tests check it against every result's instance spaces and every stored witness. Ranges are
generous but finite: every size and horizon that multiplies a cost is bounded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from attnsvm.errors import UserError, printable


class Constraint:
    """What a JSON value must be; `str()` says it for the message."""

    def ok(self, value: Any, sizes: dict[str, int]) -> bool:
        raise NotImplementedError


@dataclass(frozen=True)
class Options(Constraint):
    values: tuple

    def ok(self, value, sizes):
        return any(_same(value, v) for v in self.values)

    def __str__(self):
        return "one of " + ", ".join(map(repr, self.values))


def _same(a, b) -> bool:
    """Equal as JSON values: 1 and 1.0 alike, True never a number, 'gd' never None."""
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return a == b
    return type(a) is type(b) and a == b


@dataclass(frozen=True)
class Number(Constraint):
    """A number in [lo, hi] (`open_lo`: lo excluded); `integer`: an int (never a bool); `exact`:
    a rational string such as '1/8' is accepted too (`data.parse_exact`'s bounds)."""

    lo: float
    hi: float
    integer: bool = False
    open_lo: bool = False
    exact: bool = False

    def ok(self, value, sizes):
        if isinstance(value, bool):
            return False
        if isinstance(value, str) and self.exact and not self.integer:
            from attnsvm.attention.data import parse_exact

            try:
                value = parse_exact(value, "")
            except UserError:
                return False
        elif not isinstance(value, int) and (self.integer or not isinstance(value, float) or not math.isfinite(value)):
            return False
        q = Fraction(value)
        return (q > self.lo if self.open_lo else q >= self.lo) and q <= self.hi

    def __str__(self):
        kind = ("an integer" if self.integer
                else "a number" + (" (or a rational string like '1/8')" if self.exact else ""))
        lo, hi = (int(self.lo), int(self.hi)) if self.integer else (f"{self.lo:g}", f"{self.hi:g}")
        return f"{kind} in {'(' if self.open_lo else '['}{lo}, {hi}]"


@dataclass(frozen=True)
class Index(Constraint):
    """A token index in [0, T) (an input index: `size` 'n')."""

    size: str = "T"

    def ok(self, value, sizes):
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < sizes[self.size]

    def __str__(self):
        return f"an index in [0, {self.size})"


@dataclass(frozen=True)
class ListOf(Constraint):
    """A list of items each meeting `item`; `length` a size name ('n', 'T', 'd') or None, else
    between lo and hi items; `distinct`: no repeats."""

    item: Constraint
    length: str | None = None
    lo: int = 0
    hi: int = 64
    distinct: bool = False

    def ok(self, value, sizes):
        if not isinstance(value, list):
            return False
        if self.length is not None and len(value) != sizes[self.length]:
            return False
        if not self.lo <= len(value) <= max(self.hi, sizes.get(self.length, 0)):
            return False
        if self.distinct and len({repr(v) for v in value}) != len(value):
            return False
        return all(self.item.ok(v, sizes) for v in value)

    def __str__(self):
        size = f"{self.length}" if self.length else f"{self.lo} to {self.hi}"
        return f"a list of {size} {'distinct ' if self.distinct else ''}items, each {self.item}"


class _Any(Constraint):
    def ok(self, value, sizes):
        return True

    def __str__(self):
        return "any JSON value"


ANY = _Any()


@dataclass(frozen=True)
class Nullable(Constraint):
    inner: Constraint

    def ok(self, value, sizes):
        return value is None or self.inner.ok(value, sizes)

    def __str__(self):
        return f"null or {self.inner}"


@dataclass(frozen=True)
class Either(Constraint):
    options: tuple[Constraint, ...]

    def ok(self, value, sizes):
        return any(c.ok(value, sizes) for c in self.options)

    def __str__(self):
        return " or ".join(map(str, self.options))


def message(name: str, constraint: Constraint, value: Any) -> str:
    """The one message format: `name must be <constraint>, got <value>`."""
    return f"{name} must be {constraint}, got {printable(repr(value), 80)}"


def why_not(spec: dict[str, Constraint], params: dict, sizes: dict[str, int]) -> str | None:
    """The first way `params` breaks `spec` (unknown or missing key, a value out of its
    constraint), or None."""
    unknown = sorted(set(params) - set(spec))
    if unknown:
        return f"unknown parameter(s) {unknown}; the instances have {sorted(spec)}"
    missing = sorted(set(spec) - set(params))
    if missing:
        return f"missing parameter(s) {missing}"
    for key, c in spec.items():
        if not c.ok(params[key], sizes):
            return message(f"parameter {key!r}", c, params[key])
    return None


def check(name: str, value: Any, constraint: Constraint, sizes: dict[str, int] | None = None) -> Any:
    """`value` when it meets `constraint`, else a one-line UserError in the one message format."""
    if not constraint.ok(value, sizes or {}):
        raise UserError(message(name, constraint, value))
    return value


# ---- the manifest ----------------------------------------------------------------------------

LOSS = Options(("correlation", "exponential", "logistic"))
SEED = Number(0, 2**32 - 1, integer=True)
STEP = Number(0, 1e3, open_lo=True)
FACTOR = Number(0, 1e4, open_lo=True)
SCALE = Number(0, 1e3)
STEPS = Number(1, 10**5, integer=True)
EXACT = Number(-1e300, 1e300, exact=True)
REAL = Number(-1e300, 1e300)
SELECTION = ListOf(Index(), length="n")
VECTOR = ListOf(EXACT, length="d")
SETS = ListOf(ListOf(Index(), lo=1, hi=64, distinct=True), length="n")
RATES = {"init_alpha": Nullable(SELECTION), "init_scale": SCALE, "steps": STEPS, "seed": SEED, "eta": STEP}
KQ = {"param": Options(("W", "KQ")), "m": Nullable(Number(1, 64, integer=True)), "eta": STEP, "steps": STEPS,
      "init_scale": SCALE, "seed": SEED, "starts": Number(1, 64, integer=True)}
SEQ = {"labels": ListOf(ListOf(Options((1, -1)), length="T"), length="n"),
       "part": Options(("gd", "path", "feasibility")), "svm": Options(("seq", "causal", "single", "full")),
       "seed": SEED, "starts": Number(1, 64, integer=True)}
THEOREM2 = {"loss": LOSS, "rule": Options(("gd", "ngd")), "eta_factor": FACTOR,
            "starts": ListOf(VECTOR, lo=1, hi=64), "part": Options(("a", "b"))}
JOINT = {"alpha": Nullable(SELECTION), "loss": LOSS, "seed": SEED, "r_over_R": Number(0, 1e6, open_lo=True, exact=True)}

DECLARED: dict[str, dict[str, Constraint]] = {
    "lemma1": {"u": ListOf(REAL, length="d"), "p0": ListOf(REAL, length="d"),
               "W0": ListOf(ListOf(REAL, length="d"), length="d"), "eta": STEP, "eta_W": STEP, "loss": LOSS,
               "head": Options(("linear", "mlp")), "head_seed": SEED},
    "lemma2": {},
    "lemma3": {"seed": SEED, "ref": Number(0, 64, integer=True)},
    "lemma4": {"loss": LOSS, "seed": SEED, "points": Number(1, 1024, integer=True)},
    "lemma5": {"loss": LOSS, "seed": SEED, "points": Number(1, 1024, integer=True)},
    "lemma6": {"loss": LOSS, "eta_factor": FACTOR, "seed": SEED},
    "lemma7": {"loss": LOSS, "seed": SEED, "pick": Number(0, 1024, integer=True),
               "points": Number(1, 1024, integer=True),
               "alpha": Nullable(SELECTION)},
    "lemma8": {"q": VECTOR, "loss": LOSS, "p": VECTOR},
    "lemma9": {"q": VECTOR, "loss": LOSS},
    "lemma10": {"q": VECTOR},
    "lemma12": {"p": VECTOR, "alpha": SELECTION},
    "lemma13": {"alpha": Nullable(SELECTION), "eps": Number(0, 1, open_lo=True, exact=True)},
    "lemma14": {"loss": LOSS, "head": Options(("linear", "tanh", "cubic")), "mu": Number(0, 64, open_lo=True),
                "seed": SEED, "sets": SETS},
    "theorem1": {"loss": LOSS, "seed": SEED},
    "theorem2": THEOREM2,
    "theorem2-tightness": {**THEOREM2, "rule": Options(("gd",)), "part": None},
    "theorem3": {"alpha": Nullable(SELECTION), "loss": LOSS, "seed": SEED, "points": Number(1, 1024, integer=True),
                 "starts": Number(1, 64, integer=True)},
    "theorem4": {"q": VECTOR, "mu": Number(0, 1, open_lo=True), "R0": Number(0, 1e6, open_lo=True), "loss": LOSS,
                 "seed": SEED},
    "theorem5": JOINT,
    "theorem6": JOINT,
    "theorem8": {"loss": LOSS, "head": Options(("linear", "tanh", "cubic")), "seed": SEED, "sets": SETS},
    "example-attsvm-prime-nonconvex": {"sets": SETS},
    "tfsvm-frobenius": KQ,
    "tfsvm-nuclear": KQ,
    "tfsvm-feasibility": {"alpha": SELECTION},
    "tfsvm-rank": {"alpha": SELECTION},
    "tfsvm-mlp": {"head_seed": SEED, "width": Number(1, 256, integer=True), "eta": STEP, "steps": STEPS},
    "tfsvm-regpath-w": {"alpha": SELECTION, "region": Options(("ball", "cone")), "loss": LOSS, "seed": SEED},
    "tfsvm-regpath-kq": {"m": Number(1, 64, integer=True), "param": Options(("W", "KQ")), "loss": LOSS, "seed": SEED},
    "tfsvm-seq2seq": SEQ,
    "tfsvm-causal": SEQ,
    "tfsvm-landscape": {"loss": LOSS, "seed": SEED, "ladder": ListOf(Number(0, 16, open_lo=True), hi=8)},
    "tfsvm-global": {"loss": LOSS},
    "rates-global": RATES,
    "rates-ngd": RATES,
    "rates-polyak": RATES,
    "rates-sparsity": RATES,
    "rates-speedup": {**RATES, "gd_factor": FACTOR},
    "rates-joint": {"rule": Options(("gd", "ngd")), "eta": STEP, "steps": STEPS, "init_scale": SCALE, "seed": SEED},
}
DECLARED = {k: {name: c for name, c in spec.items() if c is not None} for k, spec in DECLARED.items()}


def sizes_of(ds) -> dict[str, int]:
    return {"n": ds.n, "T": ds.T, "d": ds.d}
