"""Instance spaces that can be searched three ways from one generator: exhaustively over small
scopes (SmallCheck / Nitpick style), at random and targeted (Hypothesis).

A `Space` wraps a generator `generate(choose) -> value` that makes every decision through a
`Chooser`: `choose.integer(lo, hi, role)` and `choose.sampled_from(options)`. Run under
Hypothesis (`Space.strategy()`), each choice is a draw, so random search, targeting and
shrinking work as usual. Run under an enumerating chooser (`Space.enumerate(scope)`), the
generator is replayed depth first over every choice sequence inside the scope:

- role "size" (n, T, d, ...): values above their minimum lo by increments that add up to at
  most scope.size over all size choices (SmallCheck's depth);
- role "entry" (data values): values of magnitude <= scope.radius, smallest first;
- role "index" and `sampled_from`: every option;
- role "seed" (a random seed: no structure to enumerate): lo only.

`Space.scopes()` is a ladder of scopes, smallest first. A scope whose enumeration completes
without narrowing any choice (and with no seed choice) has covered the whole space: the
space is then exhausted (`Enumeration.exhausted`), which is what CERTIFIED needs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import hypothesis
from hypothesis import strategies as st
from hypothesis.strategies._internal.strategies import SearchStrategy

ROLES = ("size", "entry", "index", "seed")


class Chooser:
    """The decisions a generator may make."""

    def integer(self, lo: int, hi: int, role: str = "entry") -> int:
        raise NotImplementedError

    def sampled_from(self, options: Sequence) -> Any:
        raise NotImplementedError

    def strategy(self, strategy: st.SearchStrategy) -> Any:
        """A value of a Hypothesis strategy: random and targeted search only (not enumerable)."""
        raise NotImplementedError

    def reject(self) -> None:
        """This choice sequence gives no value (a filter failed)."""
        raise NotImplementedError


class _Rejected(Exception):
    pass


class NotEnumerable(Exception):
    """The generator drew from a Hypothesis strategy, which has no finite enumeration."""


class _Draw(Chooser):
    def __init__(self, draw):
        self.draw = draw

    def integer(self, lo, hi, role="entry"):
        return self.draw(st.integers(int(lo), int(hi)))

    def sampled_from(self, options):
        return self.draw(st.sampled_from(list(options)))

    def strategy(self, strategy):
        return self.draw(strategy)

    def reject(self):
        hypothesis.reject()


@dataclass(frozen=True)
class Scope:
    """Sizes at most `size` above their minimum in all, entries of magnitude at most `radius`."""

    size: int
    radius: int

    def describe(self) -> str:
        return (f"sizes at most {self.size} above their minimum in all, integer entries in "
                f"[-{self.radius}, {self.radius}], seeds fixed")


class _Narrowed(Exception):
    pass


class _Enumerate(Chooser):
    """Replays `prefix` (indices into each choice point's options) and extends it with 0s (or,
    given `rng`, with random indices), recording each choice point's number of options."""

    def __init__(self, scope: Scope, prefix: list[int], rng=None):
        self.scope, self.prefix, self.counts, self.taken, self.rng = scope, prefix, [], [], rng
        self.values: list = []  # the record of what was chosen (see `_Sample`)
        self.narrowed = False
        self.seeded = False
        self.grown = 0          # size increments used so far

    def _pick(self, options: list, integer: bool = True):
        k = len(self.counts)
        i = self.prefix[k] if k < len(self.prefix) else (int(self.rng.integers(len(options))) if self.rng else 0)
        self.counts.append(len(options))
        self.taken.append(i)
        self.values.append(options[i] if integer else (PICK, i))
        return options[i]

    def integer(self, lo, hi, role="entry"):
        lo, hi = int(lo), int(hi)
        if hi < lo:
            raise ValueError(f"empty integer range [{lo}, {hi}]")
        if role == "size":
            options = list(range(lo, min(hi, lo + self.scope.size - self.grown) + 1))
        elif role == "entry":
            options = entry_options(lo, hi, self.scope.radius)
        elif role == "seed":
            options = [lo]
            self.seeded = True
        elif role == "index":
            options = list(range(lo, hi + 1))
        else:
            raise ValueError(f"unknown role {role!r}; one of {ROLES}")
        if len(options) < hi - lo + 1 and role != "seed":
            self.narrowed = True
        value = self._pick(options)
        if role == "size":
            self.grown += value - lo
        return value

    def sampled_from(self, options):
        options = list(options)
        if not options:
            raise ValueError("sampled_from: no options")
        return self._pick(options, integer=False)

    def strategy(self, strategy):
        raise NotEnumerable(f"draws from the Hypothesis strategy {strategy!r:.60}")

    def reject(self):
        raise _Rejected()


PICK = "#"          # a record entry (PICK, i): option i of a sampled_from


def smallest(lo: int, hi: int, role: str) -> int:
    """The simplest value of a choice: the value nearest 0 for entries, else lo."""
    return min(max(0, lo), hi) if role == "entry" else lo


class _Sample(Chooser):
    """Uniformly random choices inside `scope` (None: anywhere in their ranges), or the replay
    of a `record` (integers as values, picks as (PICK, i)), extended by the simplest choices and
    clamped into each choice's range. `values` is the record of what was taken."""

    def __init__(self, rng=None, scope: Scope | None = None, record=None):
        self.rng, self.scope, self.record = rng, scope, record
        self.values: list = []
        self.grown = 0

    def _recorded(self):
        k = len(self.values)
        return self.record[k] if self.record is not None and k < len(self.record) else None

    def integer(self, lo, hi, role="entry"):
        lo, hi = int(lo), int(hi)
        if hi < lo:
            raise ValueError(f"empty integer range [{lo}, {hi}]")
        r = self._recorded()
        if isinstance(r, int):
            v = min(max(r, lo), hi)
        elif self.rng is None or self.record is not None:
            v = smallest(lo, hi, role)
        elif self.scope is not None and role == "size":
            v = int(self.rng.integers(lo, max(lo, min(hi, lo + self.scope.size - self.grown)) + 1))
        elif self.scope is not None and role == "entry":
            options = entry_options(lo, hi, min(self.scope.radius, 10_000))
            v = options[int(self.rng.integers(len(options)))]
        else:
            v = int(self.rng.integers(lo, hi + 1))
        if role == "size":
            self.grown += v - lo
        self.values.append(v)
        return v

    def sampled_from(self, options):
        options = list(options)
        if not options:
            raise ValueError("sampled_from: no options")
        r = self._recorded()
        if isinstance(r, tuple) and r and r[0] == PICK:
            i = min(max(int(r[1]), 0), len(options) - 1)
        elif self.rng is None or self.record is not None:
            i = 0
        else:
            i = int(self.rng.integers(len(options)))
        self.values.append((PICK, i))
        return options[i]

    def strategy(self, strategy):
        raise NotEnumerable(f"draws from the Hypothesis strategy {strategy!r:.60}")

    def reject(self):
        raise _Rejected()


@functools.lru_cache(maxsize=4096)
def entry_options(lo: int, hi: int, radius: int) -> list[int]:
    """Integers of [lo, hi] by increasing magnitude (0, 1, -1, 2, -2, ...) up to `radius`; when
    the range holds none of them, its `2 radius + 1` values nearest to 0."""
    inside = [x for m in range(radius + 1) for x in ((m, -m) if m else (0,)) if lo <= x <= hi]
    if inside:
        return inside
    near = range(lo, min(hi, lo + 2 * radius) + 1) if lo > 0 else range(hi, max(lo, hi - 2 * radius) - 1, -1)
    return list(near)


@dataclass
class Enumeration:
    """What an exhaustive pass covered: `scopes` completed (descriptions), `instances` enumerated,
    `exhausted`: a completed scope narrowed no choice, so the whole space was covered."""

    scopes: list[str]
    instances: int = 0
    complete: bool = True
    exhausted: bool = False


class Space(SearchStrategy):
    """An instance space defined by a generator over a `Chooser` (see the module docstring).
    It is a Hypothesis strategy too (usable wherever one is), and `map`, `filter` and `flatmap`
    keep it enumerable. What is known of its values, for validating stored instances: `values`
    (finitely many), `range` (integers lo..hi), `params` (an `instances` space: one
    specification per key)."""

    def __init__(self, generate: Callable[[Chooser], Any], description: str = "", ladder: Sequence[Scope] | None = None,
                 *, values: tuple | None = None, range: tuple[int, int] | None = None, params: dict | None = None):
        super().__init__()
        self.generate = generate
        self.description = description
        self.ladder = tuple(ladder) if ladder is not None else DEFAULT_LADDER
        self.values, self.range, self.params = values, range, params

    def do_draw(self, data) -> Any:
        return self.generate(_Draw(data.draw))

    def __repr__(self) -> str:
        return f"Space({self.description or self.generate!r})"

    def strategy(self) -> st.SearchStrategy:
        return self

    def map(self, f: Callable[[Any], Any]) -> Space:
        return Space(lambda c: f(self.generate(c)), self.description, self.ladder)

    def filter(self, condition: Callable[[Any], Any]) -> Space:
        def generate(c: Chooser):
            value = self.generate(c)
            if not condition(value):
                c.reject()
            return value

        return Space(generate, self.description, self.ladder)

    def flatmap(self, expand: Callable[[Any], Any]) -> Space:
        def generate(c: Chooser):
            inner = expand(self.generate(c))
            return inner.generate(c) if isinstance(inner, Space) else c.strategy(inner)

        return Space(generate, self.description, self.ladder)

    def scopes(self) -> tuple[Scope, ...]:
        return self.ladder

    def enumerate(self, scope: Scope) -> Iterator[tuple[Any, tuple, bool]]:
        """Every value of the space inside `scope`, depth first; yields (value, record, cut) where
        the record (`_Sample`) identifies the value across scopes and cut says whether the scope
        narrowed one of its choices or fixed a seed."""
        prefix: list[int] = []
        while True:
            c = _Enumerate(scope, prefix)
            try:
                value = self.generate(c)
            except _Rejected:
                pass
            else:
                yield value, tuple(c.values), c.narrowed or c.seeded
            taken, counts = c.taken, c.counts
            k = len(taken) - 1
            while k >= 0 and taken[k] + 1 >= counts[k]:
                k -= 1
            if k < 0:
                return
            prefix = taken[:k] + [taken[k] + 1]


    def sample(self, rng, scope: Scope | None = None) -> tuple[Any, tuple] | None:
        """A uniformly random value inside `scope` (None: the whole space) and its record, or
        None when a filter rejected the draw."""
        c = _Sample(rng, scope)
        try:
            return self.generate(c), tuple(c.values)
        except _Rejected:
            return None

    def replay(self, record) -> tuple[Any, tuple] | None:
        """The value a record gives (clamped into the ranges it meets; simplest choices past
        its end) and the record actually taken, or None when a filter rejects it."""
        c = _Sample(record=list(record))
        try:
            return self.generate(c), tuple(c.values)
        except _Rejected:
            return None

    def size(self, scope: Scope, probes: int = 64, seed: int = 0) -> float:
        """Knuth's estimate of the number of choice sequences in `scope`: the mean over random
        root-to-leaf probes of the product of the option counts met on the way."""
        import numpy as np

        rng, total = np.random.default_rng(seed), 0.0
        for _ in range(probes):
            c = _Enumerate(scope, [], rng)
            try:
                self.generate(c)
            except _Rejected:
                pass
            total += float(np.prod([float(k) for k in c.counts]))
        return total / probes


DEFAULT_LADDER = (Scope(0, 1), Scope(1, 1), Scope(0, 2), Scope(2, 1), Scope(1, 2), Scope(3, 1), Scope(2, 2),
                  Scope(0, 3), Scope(4, 2), Scope(3, 3), Scope(8, 4), Scope(64, 64))


def space(generate: Callable[[Chooser], Any], description: str = "") -> Space:
    """A `Space` from a generator: `space(lambda c: c.integer(0, 3, "size"))`."""
    return Space(generate, description)


def as_strategy(x) -> st.SearchStrategy:
    return x


def check_params(space, params: dict) -> str | None:
    """Why `params` cannot come from `space` (an `instances(...)` space), or None. Parameters
    given as spaces of finitely many values, or as constants, are checked; unknown and missing
    keys are rejected (`parameters.why_not`)."""
    specs = space.params if isinstance(space, Space) else None
    if specs is None:
        return None
    from attnsvm.claims.parameters import why_not

    return why_not({k: _constraint(spec) for k, spec in specs.items()}, params, {})


def _constraint(spec):
    """What a parameter specification of `instances(...)` says its values are."""
    from attnsvm.claims.parameters import ANY, Number, Options

    if isinstance(spec, Space) and spec.values is not None:
        return Options(tuple(_jsonable(v) for v in spec.values))
    if isinstance(spec, Space) and spec.range is not None:
        return Number(*spec.range, integer=True)
    if not isinstance(spec, (Space, st.SearchStrategy)):
        return Options((_jsonable(spec),))          # a constant the claim fixes
    return ANY


def _jsonable(x):
    import json

    return json.loads(json.dumps(x, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)))
