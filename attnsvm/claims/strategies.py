"""Hypothesis strategies for datasets and instances. Small integer coordinates shrink to
readable, exactly representable witnesses; Gaussian datasets come from a drawn seed."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from attnsvm.attention.data import Dataset
from attnsvm.claims.engine import Instance


def _size(x):
    return x if isinstance(x, st.SearchStrategy) else st.just(x)


@st.composite
def integer_datasets(draw, n=st.integers(1, 3), T=st.integers(2, 4), d=st.integers(1, 3),
                     lo: int = -3, hi: int = 3, labels: str = "any", W: str = "identity") -> Dataset:
    """X, v with integer entries in [lo, hi]; labels 'any' or 'positive'; W 'identity' or
    'integer' (entries in [lo, hi])."""
    n, T, d = draw(_size(n)), draw(_size(T)), draw(_size(d))
    ints = st.integers(lo, hi)
    X = np.array(draw(st.lists(ints, min_size=n * T * d, max_size=n * T * d))).reshape(n, T, d)
    Y = [1] * n if labels == "positive" else draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n))
    v = draw(st.lists(ints, min_size=d, max_size=d))
    Wm = None if W == "identity" else np.array(draw(st.lists(ints, min_size=d * d, max_size=d * d))).reshape(d, d)
    return Dataset.from_arrays(X, Y, v, Wm, name="hypothesis-integer")


def gaussian_dataset(seed: int, n: int, T: int, d: int, labels: str = "any", sphere: bool = False,
                     W: str = "identity") -> Dataset:
    """Rows of X and v standard Gaussian (or uniform on the unit sphere), Y uniform in {-1,+1}."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, T, d))
    v = rng.normal(size=d)
    if sphere:
        X /= np.linalg.norm(X, axis=-1, keepdims=True)
        v /= np.linalg.norm(v)
    Y = np.ones(n) if labels == "positive" else rng.choice([-1.0, 1.0], n)
    Wm = None if W == "identity" else rng.normal(size=(d, d))
    return Dataset.from_arrays(X, Y, v, Wm, name=f"gaussian-seed{seed}")


@st.composite
def gaussian_datasets(draw, n=st.integers(1, 4), T=st.integers(2, 5), d=st.integers(1, 4), **kw) -> Dataset:
    seed = draw(st.integers(0, 2**31 - 1))
    return gaussian_dataset(seed, draw(_size(n)), draw(_size(T)), draw(_size(d)), **kw)


def instances(datasets: st.SearchStrategy, **params: st.SearchStrategy) -> st.SearchStrategy:
    """Instances from a dataset strategy and one strategy per JSON-ready parameter."""
    return st.builds(lambda ds, p: Instance(ds, p), datasets, st.fixed_dictionaries(params))


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


@st.composite
def keyed_datasets(draw, n=st.integers(1, 2), T=st.integers(2, 4), dk=st.just(2), lo: int = -2, hi: int = 2,
                   scores: str = "any", score_lo: int = -2, score_hi: int = 2, labels: str = "any") -> Dataset:
    """`keyed_dataset`s with integer keys in [lo, hi]. scores 'any': integers in [score_lo, score_hi];
    'B': Assumption B by construction (one optimal token per input, every other token one score
    below it by a gap in [1, score_hi - score_lo])."""
    n, T, dk = draw(_size(n)), draw(_size(T)), draw(_size(dk))
    ints = st.integers(lo, hi)
    keys = np.array(draw(st.lists(ints, min_size=n * T * dk, max_size=n * T * dk))).reshape(n, T, dk)
    if scores == "B":
        g = []
        for _ in range(n):
            opt = draw(st.integers(0, T - 1))
            base = draw(st.integers(score_lo, score_hi - 1))
            gap = draw(st.integers(1, score_hi - base))
            g.append([base + gap * (t == opt) for t in range(T)])
    else:
        g = [draw(st.lists(st.integers(score_lo, score_hi), min_size=T, max_size=T)) for _ in range(n)]
    Y = None if labels == "positive" else draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n))
    return keyed_dataset(keys.tolist(), g, Y, name="hypothesis-keyed")
