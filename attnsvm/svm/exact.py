"""Margin problems solved in exact rational arithmetic, for data whose scales float64 cannot hold
together (one entry 1e200 beside O(1) ones, '1e-400', a 4000-digit denominator): there the
float solve's active set is wrong, its certificate fails, and only an exact solve decides.

`solve_exact(problem)` runs Goldfarb and Idnani's dual active-set method (Math. Programming 27,
1983) on min ||x||^2 / 2 s.t. A x >= b with the identity Hessian, every quantity a FLINT
rational: from x = 0, add a violated row, step along its direction projected off the active
rows, drop a row whose multiplier reaches 0. The dual objective rises at every step, so it ends
in finitely many steps with either the optimum (KKT exactly: a `Certificate` 'kkt') or a row
that no step can satisfy, whose projection coefficients are a Farkas vector ('farkas'). It
returns None past `EXACT_ENTRIES` (rows x columns), past its work bound (MAX_STEPS_PER_ROW
steps per row and column, iterates of at most MAX_BITS bits), or past `seconds` when a caller
gives one: the answer is then undecided. The work bound, not the clock, is what verdicts rest
on, so the same data are decided the same way on every machine.

On small problems (at most SMALL_ENTRIES row entries) it is also the fastest exact answer: a
few rational steps instead of a float solve and its certificate (`geometry.select`).
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from attnsvm.svm.certificates import Certificate, exact_rhs
from attnsvm.svm.margin import MarginProblem, SVMResult

EXACT_ENTRIES = 200_000     # rows x columns past which the exact solve is not tried
SMALL_ENTRIES = 64          # rows x columns up to which the exact solve is the first answer, not a fallback
MAX_STEPS_PER_ROW = 8       # work bound: at most this many steps per row and column (then undecided)
MAX_BITS = 100_000          # work bound: an iterate's entries of more bits than this leave it undecided


def solve_exact(problem: MarginProblem, seconds: float | None = None) -> tuple[SVMResult, Certificate] | None:
    """The problem's answer decided exactly (result and verified certificate), or None when it
    is larger than EXACT_ENTRIES, past the work bound, or (given `seconds`) not decided in time."""
    import flint

    rows = problem.exact()
    m, dim = rows.m, rows.dim
    if m * dim > EXACT_ENTRIES:
        return None
    deadline = math.inf if seconds is None else time.monotonic() + seconds
    steps = MAX_STEPS_PER_ROW * (m + dim) + 64
    N = flint.fmpq_mat(rows.numerators(range(m))) if m else flint.fmpq_mat(0, dim)
    b = exact_rhs(problem)
    c = flint.fmpq_mat(m, 1, [flint.fmpq(q.numerator * rows.den, q.denominator) for q in b])   # N x >= den b
    scale = [max((abs(int(v)) for v in row), default=1) or 1 for row in _int_rows(rows, m)]
    x = flint.fmpq_mat(dim, 1)
    act: list[int] = []
    u: list = []                                        # multipliers of the active rows
    while True:
        s = N * x - c                                   # slacks, exactly
        viol = [j for j in range(m) if s[j, 0] < 0 and j not in act]
        if not viol:
            return _optimum(problem, rows, N, x, s, act, u)
        p = min(viol, key=lambda j: (_ratio(s[j, 0], scale[j]), j))     # the most violated, relative to its row
        ap = _column(N, p)
        up = flint.fmpq(0)
        while True:
            steps -= 1
            if steps < 0 or time.monotonic() > deadline or _bits(x) > MAX_BITS:
                return None
            r, z = _project(N, act, ap)
            partial = [(u[k] / r[k], k) for k in range(len(act)) if r[k] > 0]
            t1, k = min(partial) if partial else (None, None)
            zz = (z.transpose() * z)[0, 0]
            if zz == 0:
                if t1 is None:                          # a_p = sum r_k a_k with every r_k <= 0: Farkas
                    return _infeasible(problem, rows, m, p, act, r)
                u = [u[i] - t1 * r[i] for i in range(len(act))]
                up += t1
                del act[k], u[k]
                continue
            sp = (_row(N, p) * x)[0, 0] - c[p, 0]
            t2 = -sp / zz
            t = t2 if t1 is None or t2 <= t1 else t1
            x = x + z * t
            u = [u[i] - t * r[i] for i in range(len(act))]
            up += t
            if t == t2:
                act.append(p)
                u.append(up)
                break
            del act[k], u[k]


def _bits(x) -> int:
    """The most bits of a numerator or denominator among x's entries."""
    return max((max(int(v.p).bit_length(), int(v.q).bit_length()) for v in x.entries()), default=0)


def _int_rows(rows, m: int):
    M = rows.numerators(range(m))
    cols = M.ncols()
    ent = M.entries()
    return [ent[j * cols:(j + 1) * cols] for j in range(m)]


def _ratio(q, scale: int) -> float:
    """q / scale as a float for ranking (exactness is not needed to choose a row)."""
    try:
        return float(Fraction(int(q.p), int(q.q) * scale))
    except OverflowError:
        return float("-inf") if q < 0 else float("inf")


def _row(N, j: int):
    import flint

    return flint.fmpq_mat(1, N.ncols(), [N[j, c] for c in range(N.ncols())])


def _column(N, j: int):
    import flint

    return flint.fmpq_mat(N.ncols(), 1, [N[j, c] for c in range(N.ncols())])


def _project(N, act: list[int], ap):
    """(r, z): the coefficients of a_p on the active rows (least squares; exact when a_p is in
    their span) and a_p minus that combination."""
    import flint

    if not act:
        return [], ap
    NA = flint.fmpq_mat(len(act), N.ncols(), [N[j, c] for j in act for c in range(N.ncols())])
    r = (NA * NA.transpose()).solve(NA * ap)
    return [r[k, 0] for k in range(len(act))], ap - NA.transpose() * r


def _optimum(problem: MarginProblem, rows, N, x, s, act: list[int], u: list) -> tuple[SVMResult, Certificate] | None:
    """The KKT point, checked once more before it is trusted (fail closed): x = N_A^T u with
    u >= 0 and every slack >= 0, exactly."""
    import flint

    NA = flint.fmpq_mat(len(act), N.ncols(), [N[j, c] for j in act for c in range(N.ncols())])
    if any(q < 0 for q in u) or any(s[j, 0] < 0 for j in range(rows.m)) or \
            (act and NA.transpose() * flint.fmpq_mat(len(u), 1, u) != x) or \
            (not act and any(v != 0 for v in x.entries())):
        return None
    dim = rows.dim
    num = [Fraction(int(x[k, 0].p), int(x[k, 0].q)) for k in range(dim)]
    den = math.lcm(*(q.denominator for q in num)) if num else 1
    xnum = tuple(q.numerator * (den // q.denominator) for q in num)
    active = tuple(j for j in range(rows.m) if s[j, 0] == 0)
    cert = Certificate("kkt", True, xnum=xnum, xden=den, active=active)
    floats = _floats(num)
    if floats is None:
        return (SVMResult(problem, "error", "exact", message="the solution is not representable in float64 at this "
                          "scale of the data"), cert)
    duals = np.zeros(rows.m)                            # N x >= den b: the multipliers of A = N / den are den u
    for j, mu in zip(act, u):
        duals[j] = _ratio(mu * rows.den, 1)
    sol = np.array(floats).reshape(problem.shape) if problem.shape else np.array(floats)
    return SVMResult(problem, "optimal", "exact", sol, duals, active, dual_support=tuple(sorted(act))), cert


def _infeasible(problem: MarginProblem, rows, m: int, p: int, act: list[int], r: list) -> tuple[SVMResult, Certificate]:
    """lam_p = 1, lam_k = -r_k on the active rows: lam >= 0, A^T lam = 0, b^T lam > 0 (normalised
    to b^T lam = 1 as `certify` does)."""
    b = exact_rhs(problem)
    lam = [Fraction(0)] * m
    lam[p] = Fraction(1)
    for j, rk in zip(act, r):
        lam[j] = -Fraction(int(rk.p), int(rk.q))
    total = sum(lam[j] * b[j] for j in range(m))
    lam = [q / total for q in lam]
    farkas = np.array([_float(q) for q in lam])
    return (SVMResult(problem, "infeasible", "exact", farkas=farkas, message="exact: constraints inconsistent"),
            Certificate("farkas", True, lam=tuple(lam)))


def _float(q: Fraction) -> float:
    try:
        return float(q)
    except OverflowError:
        return float("inf")


def _floats(values: list[Fraction]) -> list[float] | None:
    """The floats of exact values, or None where one overflows or a nonzero one underflows to 0."""
    out = []
    for q in values:
        try:
            f = float(q)
        except OverflowError:
            return None
        if f == 0 and q != 0:
            return None
        out.append(f)
    return out
