"""Instances with a selection alpha (params['alpha']): drawn among a dataset's feasible selections
of one kind, locally optimal (Definition 2) or not, each decided by an exact certificate
(`svm.geometry.select`; selections with a zero (ATT-SVM) row are skipped without a solve,
`svm.screens.zero_row`: exactly infeasible), or drawn freely with a small-integer dataset of
given sizes (`integer_selections`)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from attnsvm.attention.data import Dataset
from attnsvm.claims.claim import Instance
from attnsvm.claims.spaces import Space
from attnsvm.svm import geometry, screens

CACHE = 4096           # datasets whose pools are remembered (a search replays the same data under other params)
_pools: OrderedDict = OrderedDict()


def _content(ds) -> tuple:
    """The dataset's exact content, hashable (equal data give equal pools)."""
    return tuple((k, a.shape, tuple(a.ravel().tolist())) for k, a in sorted(ds.exact.items()))


def pool(ds, locally_optimal: bool, limit: int = 64) -> list[list[int]]:
    """The feasible, certified selections of `ds` that are (not) locally optimal, in candidate order
    (remembered for the last CACHE datasets: a pure function of the data)."""
    key = (_content(ds), locally_optimal, limit)
    if key in _pools:
        _pools.move_to_end(key)
        return _pools[key]
    out = _pool(ds, locally_optimal, limit)
    _pools[key] = out
    if len(_pools) > CACHE:
        _pools.popitem(last=False)
    return out


def _pool(ds, locally_optimal: bool, limit: int) -> list[list[int]]:
    out = []
    for a in geometry.candidate_alphas(ds, limit):
        if screens.zero_row(ds, a):
            continue
        s = geometry.select(ds, a)
        if s.feasible and s.certified and s.locally_optimal == locally_optimal:
            out.append(list(s.alpha))
    return out


def with_alpha(space: Space, locally_optimal: bool = True) -> Space:
    """`space`'s instances (params with 'pick') with alpha = the pick-th selection of `pool` (cyclically);
    alpha None when the pool is empty (the hypotheses then reject the instance)."""
    def f(inst: Instance) -> Instance:
        found = pool(inst.dataset, locally_optimal)
        alpha = list(found[inst.params["pick"] % len(found)]) if found else None
        return Instance(inst.dataset, {**inst.params, "alpha": alpha})
    return space.map(f)


def integer_selections(sizes) -> Space:
    """Small-integer datasets (entries in [-3, 3]) of the sizes `sizes(c) -> (n, T, d)` draws, half
    of them with cross-attention queries z, and one selection alpha (params['alpha'])."""
    def generate(c) -> Instance:
        n, T, d = sizes(c)
        X = np.array([c.integer(-3, 3, "entry") for _ in range(n * T * d)]).reshape(n, T, d)
        Y = [c.sampled_from([1, -1]) for _ in range(n)]
        v = [c.integer(-3, 3, "entry") for _ in range(d)]
        cross = c.sampled_from([False, True])
        z = np.array([c.integer(-3, 3, "entry") for _ in range(n * d)]).reshape(n, d) if cross else None
        alpha = [c.integer(0, T - 1, "index") for _ in range(n)]
        return Instance(Dataset.from_arrays(X, Y, v, z=z, name="integer"), {"alpha": alpha})

    return Space(generate, "integer datasets (entries in [-3, 3], half with queries z) and one alpha")
