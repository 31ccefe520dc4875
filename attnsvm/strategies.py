"""Hypothesis strategies for datasets and instances. Small integer coordinates shrink to
readable, exactly representable witnesses; Gaussian datasets come from a drawn seed."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .claims import Instance
from .data import Dataset


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
