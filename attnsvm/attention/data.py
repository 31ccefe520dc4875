"""Datasets `(X, Y, v, W, u, z)` of the papers (docs/statements.md#notation), JSON I/O, validation.

JSON format::

    {"X": [[[..]]], "Y": [..], "v": [..], "W": [[..]], "u": [..], "z": [[..]], "name": ".."}

Numbers may be JSON numbers or exact rational strings such as ``"-3/7"``; exact values are
kept (`Dataset.exact`) so certificates are checked in rational arithmetic.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from attnsvm.errors import DatasetError, printable
from attnsvm.files import MAX_DIGITS, MAX_FILE_BYTES, read_json

FIELDS = ("X", "Y", "v", "W", "u", "z")
MAX_NAME = 200          # characters of a dataset's name


def _to_fraction(x: Any, where: str) -> Fraction:
    if isinstance(x, bool):
        raise DatasetError(f"{where}: expected a number, got a boolean")
    if isinstance(x, int):
        return Fraction(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            raise DatasetError(f"{where}: non-finite value {x}")
        return Fraction(x)
    if isinstance(x, str):
        return parse_exact(x, where)
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (np.floating, np.integer)):
        return _to_fraction(x.item(), where)
    raise DatasetError(f"{where}: expected a number, got {type(x).__name__}")


_EXACT = re.compile(r"[+-]?(?:(\d+)/(\d+)|(\d*)\.?(\d*)(?:[eE]([+-]?\d+))?)")


def parse_exact(text: str, where: str) -> Fraction:
    """An exact number written as a string ('-3/7', '0.1', '1e-400'), its digits and exponent
    bounded by `files.MAX_DIGITS` before any number is built ('1e999999999' would be a
    billion-digit integer)."""
    s = text.strip()
    m = _EXACT.fullmatch(s) if len(s) <= 2 * MAX_DIGITS + 16 else None
    if m is None or not any(m.group(k) for k in (1, 3, 4)):
        if s.lower().lstrip("+-") in {"nan", "inf", "infinity"}:
            raise DatasetError(f"{where}: non-finite value {text!r}")
        raise DatasetError(f"{where}: {printable(repr(text), 40)} is not a number or rational like '-3/7' or '1e-400'")
    num, den, whole, frac, exp = m.groups()
    digits = len(num or "") + len(den or "") + len(whole or "") + len(frac or "")
    if digits > MAX_DIGITS or (exp is not None and (len(exp) > 8 or abs(int(exp)) > MAX_DIGITS)):
        raise DatasetError(f"{where}: {printable(repr(text), 40)} is beyond the exact numbers accepted (at most "
                           f"{MAX_DIGITS} digits and exponents within +-{MAX_DIGITS})")
    if den is not None and int(den) == 0:
        raise DatasetError(f"{where}: {text!r} has a zero denominator")
    return Fraction(s)


_FAST = {int: Fraction, float: lambda x: Fraction(x) if math.isfinite(x) else None}


def _exact_array_fast(value: Any, ndim: int) -> np.ndarray | None:
    """The common case (a regular array of JSON ints and finite floats) without per-element
    paths; None for anything else, which the checked path below converts or reports."""
    try:
        arr = np.array(value, dtype=object)
        if arr.ndim != ndim or arr.size == 0:
            return None
        items = [_FAST[type(x)](x) for x in arr.ravel()]
    except (KeyError, ValueError, TypeError):
        return None
    if any(q is None for q in items):
        return None
    out = np.empty(arr.size, dtype=object)
    out[:] = items
    return out.reshape(arr.shape)


def _exact_array(value: Any, ndim: int, name: str) -> np.ndarray:
    """Nested lists -> object array of Fractions with exactly `ndim` dimensions."""

    def depth_shape(v, path):
        if isinstance(v, (list, tuple)):
            if len(v) == 0:
                raise DatasetError(f"{name}{path}: empty list")
            shapes = [depth_shape(e, f"{path}[{i}]") for i, e in enumerate(v)]
            if any(s != shapes[0] for s in shapes):
                raise DatasetError(f"{name}{path}: ragged array (rows of different lengths)")
            return (len(v),) + shapes[0]
        return ()

    if isinstance(value, np.ndarray):
        value = value.tolist()
    fast = _exact_array_fast(value, ndim)
    if fast is not None:
        return fast
    shape = depth_shape(value, "")
    if len(shape) != ndim:
        raise DatasetError(f"{name}: expected a {ndim}-D array, got {len(shape)}-D with shape {shape}")
    flat = np.empty(int(np.prod(shape)), dtype=object)
    items = []
    def collect(v, path):
        if isinstance(v, (list, tuple)):
            for i, e in enumerate(v):
                collect(e, f"{path}[{i}]")
        else:
            items.append(_to_fraction(v, f"{name}{path}"))
    collect(value, "")
    flat[:] = items
    return flat.reshape(shape)


def to_integers(values) -> tuple[np.ndarray, int]:
    """Rationals (Fractions, ints or floats, any shape) as (object array of ints N, den) with
    values == N / den exactly; den is the lcm of the denominators."""
    a = np.asarray(values, dtype=object)
    flat = [v if isinstance(v, Fraction) else Fraction(v) for v in a.ravel()]
    den = math.lcm(*{q.denominator for q in flat}) if flat else 1
    out = np.empty(len(flat), dtype=object)
    out[:] = [q.numerator * (den // q.denominator) if q.denominator != den else q.numerator for q in flat]
    return out.reshape(a.shape), den


def _float(q) -> float:
    try:
        return float(q)
    except OverflowError:
        return math.inf if q > 0 else -math.inf


def to_float(a: np.ndarray) -> np.ndarray:
    """Nearest floats (+-inf beyond float64's range)."""
    return (np.asarray(a, dtype=np.float64) if a.dtype != object
            else np.fromiter(map(_float, a.ravel()), np.float64, a.size).reshape(a.shape))


@dataclass(frozen=True, eq=False)
class Dataset:
    """n inputs of T tokens in R^d, labels in {-1,+1}, head v, key-query W, optional query u / z.

    Float64 arrays for numerics; `exact` holds the same values as Fractions (object arrays).
    Construct with `Dataset.from_arrays` (validates) or `load_dataset`.
    """

    X: np.ndarray
    Y: np.ndarray
    v: np.ndarray
    W: np.ndarray
    u: np.ndarray | None = None
    z: np.ndarray | None = None
    name: str = "dataset"
    exact: dict = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def T(self) -> int:
        return self.X.shape[1]

    @property
    def d(self) -> int:
        return self.X.shape[2]

    @classmethod
    def from_arrays(cls, X, Y, v=None, W=None, u=None, z=None, name: str = "dataset") -> Dataset:
        """Validate and build. `v` defaults to e_1 only if omitted; `W` defaults to identity."""
        raw = {"X": X, "Y": Y, "v": v, "W": W, "u": u, "z": z}
        return cls._from_raw(raw, name)

    @classmethod
    def _from_raw(cls, raw: dict, name: str) -> Dataset:
        if not isinstance(name, str) or len(name) > MAX_NAME:
            raise DatasetError(f"name: expected a string of at most {MAX_NAME} characters")
        if raw.get("X") is None:
            raise DatasetError("X: missing (expected an n x T x d array)")
        if raw.get("Y") is None:
            raise DatasetError("Y: missing (expected n labels in {-1, +1})")
        exact = {"X": _exact_array(raw["X"], 3, "X"), "Y": _exact_array(raw["Y"], 1, "Y")}
        n, T, d = exact["X"].shape
        if n < 1:
            raise DatasetError("X: need at least one input (n >= 1)")
        if T < 2:
            raise DatasetError(f"X: need at least two tokens per input (T >= 2), got T = {T}")
        if exact["Y"].shape != (n,):
            raise DatasetError(f"Y: expected {n} labels, got shape {exact['Y'].shape}")
        bad = [y for y in exact["Y"] if y not in (1, -1)]
        if bad:
            raise DatasetError(f"Y: labels must be -1 or +1, got {bad[0]}")
        if raw.get("v") is None:
            raise DatasetError("v: missing (expected the linear head, a vector of length d)")
        exact["v"] = _exact_array(raw["v"], 1, "v")
        if exact["v"].shape != (d,):
            raise DatasetError(f"v: expected length d = {d}, got {exact['v'].shape[0]}")
        if raw.get("W") is None:
            W = np.full((d, d), Fraction(0), dtype=object)       # one shared 0 and 1: d = 5000 is 25M entries
            np.fill_diagonal(W, Fraction(1))
            exact["W"] = W
        else:
            exact["W"] = _exact_array(raw["W"], 2, "W")
            if exact["W"].shape != (d, d):
                raise DatasetError(f"W: expected shape ({d}, {d}), got {exact['W'].shape}")
        if raw.get("u") is not None:
            exact["u"] = _exact_array(raw["u"], 1, "u")
            if exact["u"].shape != (d,):
                raise DatasetError(f"u: expected length d = {d}, got {exact['u'].shape[0]}")
            if all(x == 0 for x in exact["u"]):
                raise DatasetError("u: must be nonzero")
        if raw.get("z") is not None:
            exact["z"] = _exact_array(raw["z"], 2, "z")
            if exact["z"].shape != (n, d):
                raise DatasetError(f"z: expected shape ({n}, {d}), got {exact['z'].shape}")
        floats = {k: np.eye(d) if k == "W" and raw.get("W") is None else to_float(a) for k, a in exact.items()}
        for k, a in floats.items():
            if not np.all(np.isfinite(a)):
                raise DatasetError(f"{k}: values overflow float64")
        ds = cls(X=floats["X"], Y=floats["Y"], v=floats["v"], W=floats["W"],
                 u=floats.get("u"), z=floats.get("z"), name=name, exact=exact)
        if raw.get("W") is None:
            ds.memo("W_is_identity", lambda: True)      # known without looking at d^2 entries
        return ds

    def memo(self, key: str, compute):
        """A value derived from this (immutable) dataset, computed once: exact keys and
        scores are reused by every SVM solve and certificate on the same data."""
        cache = self.__dict__.setdefault("_memo", {})
        if key not in cache:
            cache[key] = compute()
        return cache[key]

    def with_(self, name: str | None = None, **changes) -> Dataset:
        """A validated copy with some fields replaced (arrays or nested lists)."""
        raw = {k: self.exact.get(k) for k in FIELDS}
        raw.update(changes)
        return Dataset._from_raw(raw, self.name if name is None else name)

    def to_json(self) -> dict:
        """JSON-ready dict; values are exact (ints, or rational strings when not integral)."""
        def enc(a):
            if isinstance(a, np.ndarray):
                return [enc(x) for x in a]
            q = Fraction(a)
            return int(q) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"
        out = {"name": self.name}
        for k in FIELDS:
            if k in self.exact:
                out[k] = enc(self.exact[k])
        return out


def dataset_from_json(obj: Any, where: str = "dataset") -> Dataset:
    if not isinstance(obj, dict):
        raise DatasetError(f"{where}: expected a JSON object with keys X, Y, v")
    unknown = set(obj) - set(FIELDS) - {"name"}
    if unknown:
        raise DatasetError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {list(FIELDS) + ['name']}")
    return Dataset._from_raw(obj, obj.get("name", str(where)[-MAX_NAME:]))


def load_dataset(path: str | os.PathLike, max_bytes: int | None = MAX_FILE_BYTES,
                 admit: Callable[[Any], None] | None = None) -> Dataset:
    """A dataset from a JSON file of at most `max_bytes` (`files.read_json`); `admit(obj)` sees the
    parsed JSON before any array is built (to refuse it on its sizes)."""
    obj = read_json(path, max_bytes)
    if admit is not None:
        admit(obj)
    try:
        return dataset_from_json(obj, where=str(path))
    except DatasetError as e:
        raise DatasetError(f"{path}: {e}") from None
