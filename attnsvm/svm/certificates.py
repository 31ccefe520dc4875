"""Exact certificates for margin problems, in rational arithmetic (floats are exact rationals).

`certify(result)`: from a solved `MarginProblem` (A x >= b, b = 1 unless given), take the rows
with positive numeric duals, re-solve the KKT system `x = A_S^T mu, A_S x = b_S` exactly, and
verify dual nonnegativity `mu >= 0`, primal feasibility `A x >= b` on every row, and
stationarity (by construction); x = 0 when b <= 0 is feasible.
KKT is sufficient for this convex QP, so a verified certificate proves x is THE optimum and
its exact active set `{j : A_j x = 1}` (SVM-neighbours, Definition 2) is known exactly.
`certify(result)` on an infeasible result verifies the Farkas vector: `lam >= 0`,
`A^T lam = 0`, `b^T lam > 0` exactly, after re-deriving lam from its support's null space.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from sympy import QQ
from sympy.polys.matrices import DomainMatrix

from attnsvm.svm.margin import SVMResult


@dataclass(frozen=True)
class Certificate:
    """kind: 'kkt' | 'farkas'. verified: the exact checks all passed. For KKT, `x` (Fractions)
    and `active` (rows with A_j x = 1 exactly); for Farkas, `lam` (Fractions). `reason` says
    which check failed when not verified."""

    kind: str
    verified: bool
    reason: str = ""
    x: tuple = ()
    active: tuple[int, ...] = ()
    lam: tuple = ()


def _exact_rows(result: SVMResult) -> np.ndarray:
    eA = result.problem.exact_A
    if eA is None:
        eA = np.vectorize(Fraction, otypes=[object])(result.problem.A)
    return eA


def _dm(rows) -> DomainMatrix:
    rows = [[QQ(int(Fraction(a).numerator), int(Fraction(a).denominator)) for a in r] for r in rows]
    return DomainMatrix(rows, (len(rows), len(rows[0]) if rows else 0), QQ)


def _exact_rhs(result: SVMResult) -> list:
    b = result.problem.b
    return [Fraction(1)] * result.problem.A.shape[0] if b is None else [Fraction(float(x)) for x in np.ravel(b)]


def _frac(q) -> Fraction:
    return Fraction(int(q.numerator), int(q.denominator))


def certify(result: SVMResult) -> Certificate:
    if result.status == "optimal":
        return _certify_kkt(result)
    if result.status == "infeasible":
        return _certify_farkas(result)
    return Certificate("none", False, f"solver status {result.status}: {result.message}")


def _independent(rows: list[int], eA: np.ndarray) -> list[int]:
    """A maximal linearly independent subset of the given rows (exact rref pivots)."""
    if not rows:
        return []
    M = _dm([eA[j] for j in rows]).transpose()
    _, pivots = M.rref()
    return [rows[k] for k in pivots]


def _certify_kkt(result: SVMResult) -> Certificate:
    eA = _exact_rows(result)
    m = eA.shape[0]
    b = _exact_rhs(result)
    if all(bj <= 0 for bj in b):
        return Certificate("kkt", True, x=tuple(Fraction(0) for _ in range(result.problem.dim)),
                           active=tuple(j for j, bj in enumerate(b) if bj == 0))
    duals = np.asarray(result.duals, dtype=float)
    scale = max(1.0, float(np.abs(duals).max()))
    for support in (np.flatnonzero(duals > 1e-9 * scale).tolist(), list(result.active)):
        S = _independent(support, eA)
        if not S:
            continue
        AS = _dm([eA[j] for j in S])
        gram = AS * AS.transpose()
        try:
            mu = gram.lu_solve(DomainMatrix([[QQ(b[j].numerator, b[j].denominator)] for j in S], (len(S), 1), QQ))
        except Exception:
            continue
        mu_f = [_frac(mu[k, 0].element) for k in range(len(S))]
        if any(q < 0 for q in mu_f):
            continue
        x = [sum((mu_f[k] * eA[S[k]][c] for k in range(len(S))), Fraction(0)) for c in range(eA.shape[1])]
        vals = [sum((eA[j][c] * x[c] for c in range(len(x)) if x[c] != 0), Fraction(0)) for j in range(m)]
        if all(v >= bj for v, bj in zip(vals, b)):
            return Certificate("kkt", True, x=tuple(x), active=tuple(j for j, (v, bj) in enumerate(zip(vals, b)) if v == bj))
    return Certificate("kkt", False, "no exact KKT point from the numeric support (degenerate or inaccurate solve)")


def _certify_farkas(result: SVMResult) -> Certificate:
    eA = _exact_rows(result)
    b = _exact_rhs(result)
    lam = np.asarray(result.farkas, dtype=float)
    support = np.flatnonzero(lam > 1e-12 * lam.max()).tolist()
    # Exact null space of A_S^T restricted to the support: lam_S with A_S^T lam_S = 0.
    M = _dm([eA[j] for j in support]).transpose()          # D x |S|
    null = M.nullspace()                                   # rows span the null space
    for k in range(null.shape[0]):
        vec = [_frac(null[k, c].element) for c in range(len(support))]
        total = sum(q * b[j] for q, j in zip(vec, support))
        if total == 0:
            continue
        if total < 0:
            vec = [-q for q in vec]
        if all(q >= 0 for q in vec):
            s = abs(total)
            vec = [q / s for q in vec]
            full = [Fraction(0)] * eA.shape[0]
            for j, q in zip(support, vec):
                full[j] = q
            ok = all(sum((full[j] * eA[j][c] for j in support), Fraction(0)) == 0 for c in range(eA.shape[1]))
            if ok:
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
        res = scipy.optimize.linprog(c, A_eq=Af, b_eq=np.array([float(a) for a in X]), bounds=(0, None), method="highs-ds")
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
