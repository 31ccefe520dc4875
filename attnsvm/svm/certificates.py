"""Exact certificates for margin problems, in rational arithmetic (floats are exact rationals).

`certify(result)`: from a solved `MarginProblem` (A x >= b, b = 1 unless given), take the rows
with positive numeric duals (else the numeric active rows), keep a linearly independent subset
S, re-solve the KKT system `x = A_S^T mu, A_S x = b_S` exactly (`rational.solve`, FLINT), and
verify dual nonnegativity `mu >= 0` and primal feasibility `A x >= b` on every row (stationarity
and `A_S x = b_S` hold by construction); x = 0 when b <= 0 is feasible.
KKT is sufficient for this convex QP, so a verified certificate proves x is THE optimum and
its exact active set `{j : A_j x = b_j}` (SVM-neighbours, Definition 2) is known exactly.
Feasibility of the other rows is decided from x rounded to 200 bits with a rigorous bound on
the rounding error (`||N_j||_1` times half a unit), and exactly for the rows that bound leaves
open, so the cost is one integer matrix-vector product, not m big rational dot products.
`certify(result)` on an infeasible result verifies the Farkas vector: `lam >= 0`,
`A^T lam = 0`, `b^T lam > 0` exactly, after re-deriving lam from its support's null space.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np
from sympy import QQ
from sympy.polys.matrices import DomainMatrix

from attnsvm.svm import rational
from attnsvm.svm.margin import SVMResult

PRECISION_BITS = 200     # rounded point used to decide the rows' inequalities (with its error bound)


@dataclass(frozen=True)
class Certificate:
    """kind: 'kkt' | 'farkas'. verified: the exact checks all passed. For KKT, `x` (Fractions,
    x = xnum / xden) and `active` (rows with A_j x = b_j exactly); for Farkas, `lam` (Fractions).
    `reason` says which check failed when not verified."""

    kind: str
    verified: bool
    reason: str = ""
    xnum: tuple = ()
    xden: int = 1
    active: tuple[int, ...] = ()
    lam: tuple = ()

    @functools.cached_property
    def x(self) -> tuple:
        return tuple(Fraction(v, self.xden) for v in self.xnum)

    def x_size(self) -> int:
        """About how many characters x takes as reduced fractions (at most this many)."""
        den = len(str(self.xden)) if self.xden.bit_length() < 4000 else int(self.xden.bit_length() * 0.302) + 1
        return sum(int(abs(v).bit_length() * 0.302) + 2 + den for v in self.xnum)


def _dm(rows) -> DomainMatrix:
    rows = [[QQ(int(Fraction(a).numerator), int(Fraction(a).denominator)) for a in r] for r in rows]
    return DomainMatrix(rows, (len(rows), len(rows[0]) if rows else 0), QQ)


def exact_rhs(problem) -> list[Fraction]:
    """A margin problem's right-hand side b as exact values (floats are exact rationals)."""
    b = problem.b
    return [Fraction(1)] * problem.A.shape[0] if b is None else [Fraction(float(x)) for x in np.ravel(b)]


def _frac(q) -> Fraction:
    return Fraction(int(q.numerator), int(q.denominator))


def certify(result: SVMResult) -> Certificate:
    if result.status == "optimal":
        return _certify_kkt(result)
    if result.status == "infeasible":
        return _certify_farkas(result)
    return Certificate("none", False, f"solver status {result.status}: {result.message}")


def _independent(result: SVMResult, rows: list[int]) -> list[int]:
    """A linearly independent subset of `rows` spanning the same space: pivoted QR of the unit-
    scale float rows (numeric; a singular pick is caught by the exact solve)."""
    import scipy.linalg

    if len(rows) <= 1:
        return rows
    A = result.problem.A[rows]
    A = A / np.abs(A).max(axis=1, keepdims=True)
    _, R, piv = scipy.linalg.qr(A.T, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int(np.sum(diag > 1e-10 * diag[0])) if diag.size and diag[0] > 0 else 0
    return sorted(rows[k] for k in piv[:rank])


def _certify_kkt(result: SVMResult) -> Certificate:
    rows = result.problem.exact()
    b = exact_rhs(result.problem)
    if all(bj <= 0 for bj in b):
        return Certificate("kkt", True, xnum=(0,) * result.problem.dim,
                           active=tuple(j for j, bj in enumerate(b) if bj == 0))
    tried = []
    for support in (list(result.dual_support), list(result.active)):
        if support and support not in tried:
            tried.append(support)
            cert = _kkt_on(rows, b, _independent(result, support), support)
            if cert is not None:
                return cert
    return Certificate("kkt", False, "no exact KKT point from the numeric support (degenerate or inaccurate solve)")


def _kkt_on(rows: rational.ExactRows, b: list[Fraction], S: list[int], support: list[int]) -> Certificate | None:
    """The KKT point whose multipliers live on the independent rows S (from `support`), verified
    exactly, or None."""
    if not S:
        return None
    den = rows.den
    bden = math.lcm(*(b[j].denominator for j in S))
    rhs = lambda S: flint.fmpz_mat(len(S), 1, [int(b[j] * bden) * den * den for j in S])   # G mu = den^2 b_S
    NS = rows.numerators(S)                                  # A_S = NS / den, x = NS^T mu / den
    sol = rational.solve(NS * NS.transpose(), rhs(S))
    if sol is None:                                          # the numeric pick was singular: exact pivots
        S = [support[k] for k in rational.pivot_rows(rows.numerators(support))]
        NS = rows.numerators(S)
        sol = rational.solve(NS * NS.transpose(), rhs(S))
    if sol is None:
        return None
    M, L = sol                                               # mu = M / (L bden)
    if any(v < 0 for v in M.entries()):
        return None
    xnum = np.array([int(v) for v in (NS.transpose() * M).entries()], dtype=object)
    Dx = int(L) * bden * den                                 # x = xnum / Dx; A x = N xnum / (den Dx)
    active = _check_rows(rows, b, xnum, Dx, set(S))
    if active is None:
        return None
    return Certificate("kkt", True, xnum=tuple(int(v) for v in xnum), xden=Dx, active=tuple(active))


def _check_rows(rows: rational.ExactRows, b: list[Fraction], xnum: np.ndarray, Dx: int, S: set) -> list[int] | None:
    """Every row's A_j x >= b_j exactly (None if one fails), and the rows where it is an equality."""
    bits = max((abs(int(v)).bit_length() for v in xnum), default=0)
    shift = max(0, bits - PRECISION_BITS)
    z = np.array([(int(v) + (1 << (shift - 1))) >> shift if shift else int(v) for v in xnum], dtype=object)
    approx = rows.times(z)                                   # N z, with |2^shift N z - N xnum| <= 2^(shift-1) ||N_j||_1
    err = rows.l1_bounds()
    bden = math.lcm(*(q.denominator for q in b)) if b else 1
    target = [int(q * bden) for q in b]                      # compare bden 2^shift N z with target * den * Dx
    scale = rows.den * Dx
    open_rows = []
    for j in range(rows.m):
        if j in S:
            continue
        diff = (int(approx[j]) << shift) * bden - target[j] * scale
        slack = (int(err[j]) << max(shift - 1, 0)) * bden if shift else 0
        if diff > slack:
            continue
        if diff < -slack:
            return None
        open_rows.append(j)
    active = sorted(S)
    if open_rows:
        vals = rows.numerators(open_rows) * flint.fmpz_mat(len(xnum), 1, [int(v) for v in xnum])
        for j, v in zip(open_rows, vals.entries()):
            lhs, rhs = int(v) * bden, target[j] * scale
            if lhs < rhs:
                return None
            if lhs == rhs:
                active.append(j)
    return sorted(active)


def _certify_farkas(result: SVMResult) -> Certificate:
    rows = result.problem.exact()
    b = exact_rhs(result.problem)
    lam = np.asarray(result.farkas, dtype=float)
    support = np.flatnonzero(lam > 1e-12 * lam.max()).tolist()
    NS = rows.numerators(support)                            # |S| x D; exact null space of NS^T
    for vec in rational.nullspace(NS.transpose()):
        total = sum(q * b[j] for q, j in zip(vec, support))
        if total == 0:
            continue
        if total < 0:
            vec = [-q for q in vec]
        if all(q >= 0 for q in vec):
            check = NS.transpose() * flint.fmpz_mat(len(vec), 1, vec)
            if not all(v == 0 for v in check.entries()):
                continue
            s = abs(total)
            full = [Fraction(0)] * rows.m
            for j, q in zip(support, vec):
                full[j] = Fraction(q) / s
            return Certificate("farkas", True, lam=tuple(full))
    return Certificate("farkas", False, "Farkas vector did not round to an exact certificate")


def positive_dual(rows, x) -> tuple | None:
    """Exact multipliers lam > 0 (every one strictly) with sum_j lam_j rows_j = x, or None when
    no such vector exists: strict complementarity of the active rows `rows` (Fractions or
    floats, taken exactly) at a KKT point x of a margin problem. Each lam_j is maximised by an
    LP, its vertex re-solved exactly on its support; the average of the vertices is strictly
    positive exactly when every row is positive at some optimal multiplier."""
    import scipy.optimize

    R = [[Fraction(a) for a in r] for r in rows]
    X = [Fraction(a) for a in x]
    m, d = len(R), len(X)
    if m == 0:
        return () if all(a == 0 for a in X) else None
    Af = np.array([[float(a) for a in r] for r in R]).T            # d x m
    vertices = []
    for j in range(m):
        c = np.zeros(m)
        c[j] = -1.0
        res = scipy.optimize.linprog(c, A_eq=Af, b_eq=np.array([float(a) for a in X]), bounds=(0, None),
                                     method="highs-ds")
        if res.status != 0 or res.x[j] <= 0:
            return None
        supp = [k for k in np.flatnonzero(res.x > 1e-12 * max(1.0, res.x.max())).tolist()]
        M = _dm([R[k] for k in supp])                                  # |supp| x d
        try:
            sol = (M * M.transpose()).lu_solve(M * _dm([[a] for a in X]))
        except Exception:
            return None
        lam = [Fraction(0)] * m
        for idx, k in enumerate(supp):
            lam[k] = _frac(sol[idx, 0].element)
        if any(q < 0 for q in lam) or lam[j] <= 0:
            return None
        if any(sum((lam[k] * R[k][c] for k in range(m)), Fraction(0)) != X[c] for c in range(d)):
            return None
        vertices.append(lam)
    return tuple(sum((v[k] for v in vertices), Fraction(0)) / m for k in range(m))
