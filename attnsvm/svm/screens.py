"""Exact screens that settle some (ATT-SVM) questions without a solve: cheap necessary conditions
that instance spaces use to skip draws a hypothesis would reject anyway (the hypotheses still
decide every instance with a certificate).

`zero_row(ds, alpha)`: some constraint row k_{i,alpha_i} - k_it (t != alpha_i) is 0, so
0^T p >= 1 is violated by every p and (ATT-SVM) for alpha is infeasible, exactly (integer keys
over a common denominator)."""

from __future__ import annotations

from collections.abc import Sequence

from attnsvm.attention import model
from attnsvm.attention.data import Dataset


def _keys(ds: Dataset) -> list:
    def compute():
        Xn, _ = model.integer_tokens(ds)
        Wn, _ = model.to_integers(ds.exact["W"])
        K = Xn.dot(Wn).reshape(ds.n, ds.T, ds.d)
        return [[tuple(int(x) for x in K[i, t]) for t in range(ds.T)] for i in range(ds.n)]
    return ds.memo("integer_keys", compute)


def zero_row(ds: Dataset, alpha: Sequence[int]) -> bool:
    """(ATT-SVM) for alpha has a zero row (a token sharing alpha_i's key): infeasible, exactly."""
    K = _keys(ds)
    return any(K[i][t] == K[i][a] for i, a in enumerate(alpha) for t in range(ds.T) if t != a)
