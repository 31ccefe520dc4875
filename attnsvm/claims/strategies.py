"""Instance spaces for claims (`attnsvm.claims.spaces.Space`): datasets with small integer
coordinates (enumerable over small scopes, shrinking to readable, exactly representable
witnesses), the paper's keyed construction of Figure 1, Gaussian datasets from a drawn seed,
and instances = a dataset plus parameters.

Sizes and parameters are given as an int (fixed), a (lo, hi) tuple (a size range), a `Space`
(`integers`, `sampled_from`, `just`, `seeds`) or a Hypothesis strategy; a Hypothesis strategy
anywhere makes the space searchable at random and targeted only, not exhaustively.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

from attnsvm.attention.data import Dataset
from attnsvm.claims.claim import Instance
from attnsvm.claims.spaces import Chooser, Space

# ---- parameters -----------------------------------------------------------------------------

def just(value: Any) -> Space:
    return Space(lambda c: value, f"{value!r}", values=(value,))


def sampled_from(options: Sequence) -> Space:
    options = list(options)
    return Space(lambda c: c.sampled_from(options), f"one of {options}", values=tuple(options))


def one_of(*options) -> Space:
    """A value of one of several spaces (or fixed values); the choice itself is enumerable."""
    def generate(c: Chooser):
        pick = c.sampled_from(range(len(options)))
        return options[pick].generate(c) if isinstance(options[pick], Space) else options[pick]

    return Space(generate, " | ".join(getattr(o, "description", "") or getattr(o, "name", repr(o)) for o in options))


def integers(lo: int, hi: int, role: str = "index") -> Space:
    """An integer in [lo, hi]; role 'index' (enumerated fully), 'size' or 'entry' (see spaces)."""
    return Space(lambda c: c.integer(lo, hi, role), f"integer in [{lo}, {hi}]", range=(lo, hi))


def seeds(lo: int = 0, hi: int = 2**16) -> Space:
    """A random seed: drawn at random, fixed to `lo` in exhaustive scopes."""
    return Space(lambda c: c.integer(lo, hi, "seed"), f"seed in [{lo}, {hi}]", range=(lo, hi))


def _choose(c: Chooser, x, role: str = "size"):
    """A value from a size/parameter specification (see the module docstring)."""
    if isinstance(x, Space):
        return x.generate(c)
    if isinstance(x, st.SearchStrategy):
        return c.strategy(x)
    if isinstance(x, tuple) and len(x) == 2:
        return c.integer(x[0], x[1], role)
    return x


def _ints(c: Chooser, count: int, lo: int, hi: int) -> list[int]:
    return [c.integer(lo, hi, "entry") for _ in range(count)]


# ---- datasets -------------------------------------------------------------------------------

def integer_datasets(n=(1, 3), T=(2, 4), d=(1, 3), lo: int = -3, hi: int = 3, labels: str = "any",
                     W: str = "identity") -> Space:
    """X, v with integer entries in [lo, hi]; labels 'any' or 'positive'; W 'identity' or
    'integer' (entries in [lo, hi])."""

    def generate(c: Chooser) -> Dataset:
        nn, TT, dd = _choose(c, n), _choose(c, T), _choose(c, d)
        X = np.array(_ints(c, nn * TT * dd, lo, hi)).reshape(nn, TT, dd)
        Y = [1] * nn if labels == "positive" else [c.sampled_from([1, -1]) for _ in range(nn)]
        v = _ints(c, dd, lo, hi)
        Wm = None if W == "identity" else np.array(_ints(c, dd * dd, lo, hi)).reshape(dd, dd)
        return Dataset.from_arrays(X, Y, v, Wm, name="integer")

    return Space(generate, f"integer datasets n {n}, T {T}, d {d}, entries in [{lo}, {hi}], labels {labels}, W {W}")


def gaussian_dataset(seed: int, n: int, T: int, d: int, labels: str = "any", sphere: bool = False,
                     W: str = "identity", cross_queries: bool = False) -> Dataset:
    """Rows of X and v standard Gaussian (or uniform on the unit sphere), Y uniform in {-1,+1};
    with `cross_queries`, Gaussian queries z_i (cross-attention) from the seed after `seed`."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, T, d))
    v = rng.normal(size=d)
    if sphere:
        X /= np.linalg.norm(X, axis=-1, keepdims=True)
        v /= np.linalg.norm(v)
    Y = np.ones(n) if labels == "positive" else rng.choice([-1.0, 1.0], n)
    Wm = None if W == "identity" else rng.normal(size=(d, d))
    ds = Dataset.from_arrays(X, Y, v, Wm, name=f"gaussian-seed{seed}")
    return ds.with_(z=np.random.default_rng(seed + 1).normal(size=(n, d))) if cross_queries else ds


def gaussian_datasets(n=(1, 4), T=(2, 5), d=(1, 4), **kw) -> Space:
    """`gaussian_dataset`s from a drawn seed (exhaustive scopes fix the seed: sizes only)."""
    def generate(c: Chooser) -> Dataset:
        seed = c.integer(0, 2**31 - 1, "seed")
        return gaussian_dataset(seed, _choose(c, n), _choose(c, T), _choose(c, d), **kw)

    return Space(generate, f"Gaussian datasets n {n}, T {T}, d {d} {kw or ''}".rstrip())


def keyed_dataset(keys, scores, labels=None, name: str = "keyed") -> Dataset:
    """The construction of the paper's Figure 1: token t of input i is x_it = (k_it, Y_i gamma_it)
    in R^(dk+1), W = diag(1, .., 1, 0) and v = e_(dk+1), so keys are k_it and scores are exactly
    gamma_it (Definition 1), chosen independently of each other. keys (n, T, dk), scores (n, T)."""
    keys = np.asarray(keys, dtype=object)
    n, T, dk = keys.shape
    Y = [1] * n if labels is None else list(labels)
    X = [[list(keys[i, t]) + [Y[i] * scores[i][t]] for t in range(T)] for i in range(n)]
    W = np.diag([1] * dk + [0])
    return Dataset.from_arrays(X, Y, [0] * dk + [1], W, name=name)


def keyed_datasets(n=(1, 2), T=(2, 4), dk=2, lo: int = -2, hi: int = 2, scores: str = "any",
                   score_lo: int = -2, score_hi: int = 2, labels: str = "any") -> Space:
    """`keyed_dataset`s with integer keys in [lo, hi]. scores 'any': integers in [score_lo, score_hi];
    'B': Assumption B by construction (one optimal token per input, every other token one score
    below it by a gap in [1, score_hi - score_lo])."""

    def generate(c: Chooser) -> Dataset:
        nn, TT, dd = _choose(c, n), _choose(c, T), _choose(c, dk)
        keys = np.array(_ints(c, nn * TT * dd, lo, hi)).reshape(nn, TT, dd)
        if scores == "B":
            g = []
            for _ in range(nn):
                opt = c.integer(0, TT - 1, "index")
                base = c.integer(score_lo, score_hi - 1, "entry")
                gap = c.integer(1, score_hi - base, "entry")
                g.append([base + gap * (t == opt) for t in range(TT)])
        else:
            g = [_ints(c, TT, score_lo, score_hi) for _ in range(nn)]
        Y = None if labels == "positive" else [c.sampled_from([1, -1]) for _ in range(nn)]
        return keyed_dataset(keys.tolist(), g, Y, name="keyed")

    return Space(generate, f"keyed datasets n {n}, T {T}, dk {dk}, keys in [{lo}, {hi}], scores {scores} "
                           f"in [{score_lo}, {score_hi}], labels {labels}")


def _param(c: Chooser, x):
    if isinstance(x, Space):
        return x.generate(c)
    if isinstance(x, st.SearchStrategy):
        return c.strategy(x)
    return x


def instances(datasets, **params) -> Space:
    """Instances from a dataset space and one specification per JSON-ready parameter (a `Space`
    such as `sampled_from`, a Hypothesis strategy, or a constant)."""
    def generate(c: Chooser) -> Instance:
        ds = _choose(c, datasets)
        return Instance(ds, {k: _param(c, v) for k, v in params.items()})

    desc = getattr(datasets, "description", repr(datasets))
    return Space(generate, desc + ("; params " + ", ".join(params) if params else ""), params=dict(params))
