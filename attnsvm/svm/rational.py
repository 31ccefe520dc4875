"""Exact rational linear algebra for certificates, fast at attention sizes (d in the thousands).

A rational matrix is held as Python-int numerators over one common denominator (`to_integers`);
products with a vector are numpy object-array dot products of ints, square solves and null
spaces go through FLINT (python-flint: multi-modular / p-adic Dixon solvers), which is what
makes an exact KKT certificate of a few hundred active rows take seconds, not hours.

`ExactRows` is the interface certificates need from a margin problem's rows: numerators of a
few rows (`numerators`), every row times an integer vector (`times`) and upper bounds of each
row's l1 norm (`l1_bounds`, to decide most inequalities from a rounded point). `DenseRows`
holds any rational matrix; `KeyDifferenceRows` holds (ATT-SVM) rows (x_{i,alpha_i} - x_it)^T W
without forming them: only the rows a certificate touches are built.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from attnsvm.attention.data import to_integers

if TYPE_CHECKING:                   # FLINT is imported where it runs: sweeps that never certify skip it
    import flint


def fractions(N: np.ndarray, den: int) -> np.ndarray:
    """The object array of Fractions N / den."""
    out = np.empty(N.shape, dtype=object)
    out.ravel()[:] = [Fraction(int(v), den) for v in N.ravel()]
    return out


def fmpz_rows(rows: Sequence[Sequence[int]]) -> flint.fmpz_mat:
    import flint

    rows = [list(r) for r in rows]
    return flint.fmpz_mat(len(rows), len(rows[0]) if rows else 0, [int(v) for r in rows for v in r])


def solve(G: flint.fmpz_mat, rhs: flint.fmpz_mat) -> tuple[flint.fmpz_mat, flint.fmpz] | None:
    """The exact solution of G y = rhs (G square, rhs a column, both integer) as (numerators, one
    common denominator > 0), or None when G is singular. No Python Fractions: their gcds on
    numbers of 10^5 bits would cost more than the solve."""
    import flint

    k = G.nrows()
    if k == 0:
        return flint.fmpz_mat(0, 1, []), flint.fmpz(1)
    try:
        y = G.solve(rhs)                 # FLINT picks its method (measured ~25% faster than forcing Dixon)
    except ZeroDivisionError:
        return None
    return y.numer_denom()


def nullspace(M: flint.fmpz_mat) -> list[list[int]]:
    """An integer basis of {y : M y = 0} (lists of ints, one per basis vector)."""
    X, nullity = M.nullspace()
    cols = X.ncols()
    ent = [int(v) for v in X.entries()]
    return [[ent[r * cols + c] for r in range(X.nrows())] for c in range(nullity)]


def pivot_rows(M: flint.fmpz_mat) -> list[int]:
    """Indices of a maximal linearly independent set of rows of M (exact: rref of M^T)."""
    R, _, rank = M.transpose().rref()
    cols = R.ncols()
    ent = R.entries()
    piv = []
    for r in range(rank):
        for c in range(cols):
            if ent[r * cols + c] != 0:
                piv.append(c)
                break
    return piv


class ExactRows:
    """Rows A_j = N_j / den of an exact rational matrix (m rows, `dim` columns)."""

    m: int
    dim: int
    den: int

    def numerators(self, idx: Sequence[int]) -> flint.fmpz_mat:
        """N restricted to the rows idx (|idx| x dim)."""
        raise NotImplementedError

    def times(self, z: np.ndarray) -> np.ndarray:
        """N z for an integer vector z (object array of ints, length dim): every row."""
        raise NotImplementedError

    def l1_bounds(self) -> np.ndarray:
        """Integers B_j >= ||N_j||_1 (object array)."""
        raise NotImplementedError

    def fractions(self) -> np.ndarray:
        """All rows as an (m, dim) object array of Fractions (small problems, tests)."""
        N = np.array([[int(v) for v in self.numerators([j]).entries()] for j in range(self.m)], dtype=object)
        return fractions(N.reshape(self.m, self.dim), self.den)


class DenseRows(ExactRows):
    """Any rational matrix, numerators stored."""

    def __init__(self, values):
        self.N, self.den = to_integers(values)
        if self.N.ndim != 2:
            self.N = self.N.reshape(self.N.shape[0], -1)
        self.m, self.dim = self.N.shape
        self._l1 = None

    def numerators(self, idx):
        return fmpz_rows(self.N[list(idx)].tolist())

    def times(self, z):
        return self.N.dot(np.asarray(z, dtype=object)) if self.m else np.zeros(0, dtype=object)

    def l1_bounds(self):
        if self._l1 is None:
            self._l1 = np.abs(self.N).sum(axis=1) if self.m else np.zeros(0, dtype=object)
        return self._l1

    def fractions(self):
        return fractions(self.N, self.den)


class KeyData:
    """Exact integer form of a dataset's tokens and key-query matrix: X = Xn / dx (rows x_it,
    flattened to (n T, d)), W = Wn / dw (W None: the identity, Wn None), computed once per dataset."""

    def __init__(self, Xn: np.ndarray, dx: int, W=None):
        self.Xn, self.dx = Xn, dx
        self.Wn, self.dw = (None, 1) if W is None else to_integers(W)
        self._bounds = None

    def key_bounds(self) -> np.ndarray:
        """Integers >= ||Xn_r Wn||_1 for each token row r."""
        if self._bounds is None:
            absX = np.abs(self.Xn)
            self._bounds = absX.sum(axis=1) if self.Wn is None else absX.dot(np.abs(self.Wn).sum(axis=1))
        return self._bounds

    def keys_times(self, z: np.ndarray) -> np.ndarray:
        """Xn Wn z (the key numerators times an integer vector), one int per token row."""
        w = z if self.Wn is None else self.Wn.dot(z)
        return self.Xn.dot(w)


def is_identity(W) -> bool:
    """W (exact) is the identity (its floats may say so while a tiny entry underflowed)."""
    d = W.shape[0]
    return W.shape == (d, d) and all(W[k, k] == 1 for k in range(d)) and np.count_nonzero(W) == d


class KeyDifferenceRows(ExactRows):
    """(ATT-SVM) rows k_{r} - k_{s} for pairs (r, s) of token rows, k_r = W^T x_r; den = dx dw."""

    def __init__(self, data: KeyData, pairs: Sequence[tuple[int, int]], dim: int):
        self.data = data
        self.pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        self.m, self.dim = len(self.pairs), dim
        self.den = data.dx * data.dw

    def numerators(self, idx):
        P = self.pairs[list(idx)]
        D = self.data.Xn[P[:, 0]] - self.data.Xn[P[:, 1]]
        if self.data.Wn is not None:
            D = D.dot(self.data.Wn)
        return fmpz_rows(D.tolist())

    def times(self, z):
        y = self.data.keys_times(np.asarray(z, dtype=object))
        return y[self.pairs[:, 0]] - y[self.pairs[:, 1]]

    def l1_bounds(self):
        b = self.data.key_bounds()
        return b[self.pairs[:, 0]] + b[self.pairs[:, 1]]
