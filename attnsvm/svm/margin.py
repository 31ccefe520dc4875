"""Hard-margin SVMs as values (CVXPY style): a `MarginProblem` `min ||x|| s.t. A x >= b`
(b = 1 unless given) and a `solve` that always returns an `SVMResult` with an explicit
status, never raises on infeasibility.

(ATT-SVM) `p_mm(alpha) = argmin ||p|| s.t. (k_{i,alpha_i} - k_it)^T p >= 1` (docs/statements.md#definition1), the
Frobenius W-SVM of paper B and the label SVM for v (Section 3) are all this one problem
with different rows; the hot path is quadprog's dense dual active-set method (Goldfarb-
Idnani), cross-checked against cvxpy. The nuclear-norm W-SVM is not a QP: cvxpy only.
Infeasible problems carry a Farkas vector `lam >= 0, A^T lam = 0, b^T lam = 1` from an LP.
A right-hand side other than 1 expresses relaxed problems such as the paper's (10), where
the rows of non-support inputs only need `>= 0` (`relaxed_att_svm`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import quadprog

from attnsvm.attention.data import Dataset
from attnsvm.svm.rational import DenseRows, ExactRows, KeyData, KeyDifferenceRows, is_identity

ACTIVE_TOL = 1e-9


@dataclass(frozen=True, eq=False)
class MarginProblem:
    """min ||x||^2/2 s.t. A x >= b. `tags[j]` names row j (e.g. (i, t)); `exact_A` holds the
    rows as Fractions when known, `exact_rows` the same as an `rational.ExactRows` (large
    problems: rows built only where a certificate needs them); `shape` reshapes x (e.g.
    (d, d)); `b` the right-hand side (None: every row >= 1; floats are exact rationals for
    certificates); the true rows are `A * 2**exp2` (exp2 != 0 only where the rows at their
    own scale would overflow or underflow float64)."""

    A: np.ndarray
    tags: tuple = ()
    exact_A: np.ndarray | None = field(default=None, repr=False)
    shape: tuple | None = None
    name: str = "svm"
    b: np.ndarray | None = None
    exact_rows: ExactRows | None = field(default=None, repr=False)
    exp2: int = 0

    @property
    def dim(self) -> int:
        return self.A.shape[1]

    @property
    def rhs(self) -> np.ndarray:
        """The right-hand side b as floats (ones by default)."""
        return np.ones(self.A.shape[0]) if self.b is None else np.asarray(self.b, dtype=float)

    def exact(self) -> ExactRows:
        """The rows in exact arithmetic (`exact_rows`, else `exact_A`, else the floats of A as
        the exact rationals they are), built once."""
        cache = self.__dict__.setdefault("_exact", [])
        if not cache:
            if self.exact_rows is not None:
                cache.append(self.exact_rows)
            elif self.exact_A is not None:
                cache.append(DenseRows(self.exact_A))
            else:
                cache.append(DenseRows(self.A if self.exp2 == 0 else
                                       [[Fraction(a) * Fraction(2) ** self.exp2 for a in r] for r in self.A.tolist()]))
        return cache[0]


@dataclass(frozen=True, eq=False)
class SVMResult:
    """status: 'optimal' | 'infeasible' | 'error'. `solution` in the problem's shape;
    `duals` per row; `active` rows with A x - b <= ACTIVE_TOL and `dual_support` rows with a
    positive dual, both read on the problem normalised to unit scale (numeric; certificates
    decide exactly); `farkas` when infeasible; `slack` (A x - b) / max(1, |x|_inf) and
    `duals_unit` at unit scale (what screens read, free of the data's scale)."""

    problem: MarginProblem
    status: str
    solver: str
    solution: np.ndarray | None = None
    duals: np.ndarray | None = None
    active: tuple[int, ...] = ()
    farkas: np.ndarray | None = None
    message: str = ""
    dual_support: tuple[int, ...] = ()
    slack: np.ndarray | None = field(default=None, repr=False)
    duals_unit: np.ndarray | None = field(default=None, repr=False)
    kkt_residual: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "optimal"

    @property
    def x(self) -> np.ndarray:
        """The solution as a flat vector."""
        return self.solution.reshape(-1)

    @property
    def active_tags(self) -> list:
        return [self.problem.tags[j] for j in self.active] if self.problem.tags else list(self.active)


def unit_scale(A: np.ndarray) -> int:
    """The power of two e with max |A| * 2**-e in [1/2, 1) (0 for a zero or empty A)."""
    amax = float(np.abs(A).max()) if A.size else 0.0
    return int(np.frexp(amax)[1]) if amax > 0 and math.isfinite(amax) else 0


def _finish(problem: MarginProblem, e: int, Au: np.ndarray, b: np.ndarray, y: np.ndarray, mu: np.ndarray,
            solver: str) -> SVMResult:
    """Map a solution y of the unit-scale problem (rows Au = A 2**-e) back: x = y 2**-(e + exp2),
    duals mu 2**-2(e + exp2); active set, dual support and checks at unit scale."""
    resid = Au @ y - b
    size = max(1.0, float(np.abs(y).max()) if y.size else 0.0)
    if resid.size and resid.min() < -1e-7 * size:
        return SVMResult(problem, "error", solver, message=f"solution violates a constraint by {-resid.min():.2e}")
    shift = e + problem.exp2
    mu = np.asarray(mu, dtype=float).reshape(-1)
    if shift == 0:
        x, duals = y, mu
    else:
        with np.errstate(over="ignore", under="ignore"):
            x, duals = np.ldexp(y, -shift), np.ldexp(mu, -2 * shift)
        if not np.all(np.isfinite(x)) or (np.any(y != 0) and not np.any(x != 0)):
            return SVMResult(problem, "error", solver,
                             message=f"the solution (about 2^{-shift}) is not representable in "
                                     "float64 at this scale of the data")
    top = float(mu.max()) if mu.size else 0.0
    support = tuple(np.flatnonzero(mu > 1e-9 * top).tolist()) if top > 0 else ()
    active = tuple(np.flatnonzero(resid <= ACTIVE_TOL * size).tolist())
    kkt = float(np.abs(y - Au.T @ mu).max() / size) if y.size else 0.0
    sol = x.reshape(problem.shape) if problem.shape else x
    return SVMResult(problem, "optimal", solver, sol, duals, active, dual_support=support,
                     slack=resid / size, duals_unit=mu, kkt_residual=kkt)


def farkas_vector(A: np.ndarray, b: np.ndarray | None = None) -> np.ndarray | None:
    """A vertex lam >= 0 with A^T lam = 0, b^T lam = 1 (proves A x >= b infeasible; b = 1
    by default, then sum lam = 1), or None. Scale-free: A is normalised to unit scale first."""
    import scipy.optimize

    m, D = A.shape
    b = np.ones(m) if b is None else np.asarray(b, dtype=float)
    A = np.ldexp(A, -unit_scale(A))
    res = scipy.optimize.linprog(np.zeros(m), A_eq=np.vstack([A.T, b[None, :]]),
                                 b_eq=np.r_[np.zeros(D), 1.0], bounds=(0, None), method="highs-ds")
    return res.x if res.status == 0 else None


def _infeasible(problem: MarginProblem, solver: str, message: str) -> SVMResult:
    lam = farkas_vector(problem.A, problem.rhs)
    if lam is None:
        return SVMResult(problem, "error", solver, message=f"{message}; no Farkas vector found by LP")
    return SVMResult(problem, "infeasible", solver, farkas=lam, message=message)


def _quadprog(Au: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """min ||y||^2/2 s.t. Au y >= b by Goldfarb-Idnani, in the span of the rows: with fewer
    rows than columns, y = Q z for the thin QR Au^T = Q R (the solution lies in the row span),
    a QP in at most m variables. Raises ValueError as quadprog does."""
    m, D = Au.shape
    if m < D:
        Q, R = np.linalg.qr(Au.T)
        z, _, _, _, mu, _ = quadprog.solve_qp(np.eye(m), np.zeros(m), R, b, 0, factorized=True)
        return Q @ z, mu
    y, _, _, _, mu, _ = quadprog.solve_qp(np.eye(D), np.zeros(D), Au.T, b, 0, factorized=True)
    return y, mu


def solve(problem: MarginProblem, solver: str = "quadprog") -> SVMResult:
    """Solve with 'quadprog' (fast dense path) or 'cvxpy' (reference), on the rows normalised by
    a power of two (exact), so the answer does not depend on the data's scale."""
    A = problem.A
    amax = float(np.abs(A).max()) if A.size else 0.0
    if not math.isfinite(amax):
        return SVMResult(problem, "error", solver, message="constraint rows overflow float64")
    if solver == "cvxpy":
        return _solve_cvxpy(problem, norm="fro")
    if solver != "quadprog":
        raise ValueError(f"unknown solver {solver!r}")
    e = int(np.frexp(amax)[1]) if amax > 0 else 0
    Au = np.ldexp(A, -e) if e else A
    b = problem.rhs
    if A.shape[0] == 0:
        return _finish(problem, e, Au, b, np.zeros(problem.dim), np.zeros(0), solver)
    try:
        y, mu = _quadprog(Au, b)
    except ValueError as err:
        if "inconsistent" in str(err):
            return _infeasible(problem, solver, "constraints inconsistent")
        return SVMResult(problem, "error", solver, message=str(err))
    return _finish(problem, e, Au, b, y, mu, solver)


def _solve_cvxpy(problem: MarginProblem, norm: str) -> SVMResult:
    import cvxpy as cp

    e = unit_scale(problem.A)
    if norm == "nuclear":
        X = cp.Variable(problem.shape)
        flat = cp.vec(X, order="C")
        objective = cp.normNuc(X)
    else:
        flat = X = cp.Variable(problem.dim)
        objective = 0.5 * cp.sum_squares(X)
    cons = [np.ldexp(problem.A, -e) @ flat >= problem.rhs]
    prob = cp.Problem(cp.Minimize(objective), cons)
    try:
        prob.solve(solver=cp.CLARABEL)
    except cp.error.SolverError as err:
        return SVMResult(problem, "error", f"cvxpy/{norm}", message=str(err).splitlines()[0])
    if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return _infeasible(problem, f"cvxpy/{norm}", f"cvxpy status {prob.status}")
    if prob.status != cp.OPTIMAL:
        return SVMResult(problem, "error", f"cvxpy/{norm}", message=f"cvxpy status {prob.status}")
    y = np.asarray(X.value).reshape(-1)
    Au = np.ldexp(problem.A, -e)
    return _finish(problem, e, Au, problem.rhs, y, np.asarray(cons[0].dual_value).reshape(-1), f"cvxpy/{norm}")


def _rows_for(K: np.ndarray, alpha: Sequence[int]) -> tuple[np.ndarray, tuple, np.ndarray, np.ndarray]:
    """Rows k_{i,alpha_i} - k_it for every i and t != alpha_i (in that order), their tags and
    the index arrays (i, t)."""
    n, T = K.shape[:2]
    alpha = np.asarray(alpha, dtype=np.int64)
    ii, tt = np.nonzero(np.arange(T)[None, :] != alpha[:, None])
    A = (K[ii, alpha[ii]] - K[ii, tt]).reshape(len(ii), -1)
    return A, tuple(zip(ii.tolist(), tt.tolist())), ii, tt


def unit_keys(ds: Dataset) -> tuple[np.ndarray, int]:
    """(K', e) with keys K = X W = K' 2**e exactly where float64 allows and K' of unit scale: X and
    W are scaled by powers of two before the product, so keys never overflow (answers
    do not depend on the scale of the data). Computed once per dataset."""
    from attnsvm.attention import model

    def compute():
        X, ex = _unit_floats(ds.X, ds.exact["X"], np.count_nonzero(model.integer_tokens(ds)[0]))
        W, ew = (ds.W, 0) if w_is_identity(ds) else _unit_floats(ds.W, ds.exact["W"], np.count_nonzero(ds.exact["W"]))
        K = X @ W
        ek = unit_scale(K)
        return np.ldexp(K, -ek), ex + ew + ek
    return ds.memo("unit_keys", compute)


def _unit_floats(F: np.ndarray, exact: np.ndarray, exact_nonzeros: int) -> tuple[np.ndarray, int]:
    """F (the floats of `exact`, which has `exact_nonzeros` nonzero entries) times 2**-e, of unit
    scale. Where F lost values to underflow (subnormal or flushed to zero) the floats are
    recomputed from the exact values."""
    nonzero = np.abs(F[F != 0])
    if nonzero.size == exact_nonzeros and (nonzero.size == 0 or nonzero.min() >= 2.0 ** -1021):
        e = unit_scale(F)
        return np.ldexp(F, -e), e
    top = max(abs(q) for q in exact.ravel())
    e = math.floor(math.log2(top.numerator) - math.log2(top.denominator)) + 1 if top else 0
    scale = Fraction(2) ** -e
    return np.array([float(q * scale) for q in exact.ravel()]).reshape(exact.shape), e


def w_is_identity(ds: Dataset) -> bool:
    """W is exactly the identity (known at load for the default W; else checked once)."""
    return ds.memo("W_is_identity", lambda: np.array_equal(ds.W, np.eye(ds.d)) and is_identity(ds.exact["W"]))


def key_data(ds: Dataset) -> KeyData:
    """The dataset's tokens and W as integers over common denominators (for certificates)."""
    from attnsvm.attention import model

    return ds.memo("key_data", lambda: KeyData(*model.integer_tokens(ds), None if w_is_identity(ds) else ds.exact["W"]))


def att_svm_problem(ds: Dataset, alpha: Sequence[int]) -> MarginProblem:
    """(ATT-SVM) for token indices alpha (one per input), keys k_it = W^T x_it. The float rows
    are at the data's scale unless that overflows or underflows float64 (then `exp2` says the
    scale); the exact rows are built on demand (`rational.KeyDifferenceRows`)."""
    alpha = _check_alpha(ds, alpha)
    K, ek = unit_keys(ds)
    A, tags, ii, tt = _rows_for(K, alpha)
    exp2 = ek
    if -960 < ek + unit_scale(A) < 960:
        A, exp2 = np.ldexp(A, ek), 0
    pairs = np.stack([ii * ds.T + np.asarray(alpha)[ii], ii * ds.T + tt], axis=1)
    return MarginProblem(A, tags, None, None, f"ATT-SVM(alpha={list(alpha)})",
                         exact_rows=KeyDifferenceRows(key_data(ds), pairs, ds.d), exp2=exp2)


def att_svm(ds: Dataset, alpha: Sequence[int], solver: str = "quadprog") -> SVMResult:
    return solve(att_svm_problem(ds, alpha), solver)


def relaxed_att_svm_problem(ds: Dataset, alpha: Sequence[int], support: Sequence[int]) -> MarginProblem:
    """The relaxed (ATT-SVM) of the paper's problem (10) (Theorem 6): rows of inputs i in
    `support` need (k_{i,alpha_i} - k_it)^T p >= 1, the other inputs' rows only >= 0."""
    prob = att_svm_problem(ds, alpha)
    keep = set(int(i) for i in support)
    b = np.array([1.0 if i in keep else 0.0 for i, _ in prob.tags])
    return MarginProblem(prob.A, prob.tags, None, None, f"relaxed-ATT-SVM(alpha={list(alpha)}, S={sorted(keep)})", b,
                         exact_rows=prob.exact_rows, exp2=prob.exp2)


def relaxed_att_svm(ds: Dataset, alpha: Sequence[int], support: Sequence[int], solver: str = "quadprog") -> SVMResult:
    return solve(relaxed_att_svm_problem(ds, alpha, support), solver)


def att_svm_keys(K: np.ndarray, alpha: Sequence[int], solver: str = "quadprog") -> SVMResult:
    """(ATT-SVM) straight from float keys (n, T, d): the hot path of sweeps, no exact rows."""
    A, tags, _, _ = _rows_for(K, alpha)
    return solve(MarginProblem(A, tags, None, None, "ATT-SVM"), solver)


def w_svm_arrays(X: np.ndarray, Z: np.ndarray, alpha: Sequence[int], norm: str = "fro",
                 solver: str = "quadprog") -> SVMResult:
    """W-SVM (paper B) straight from float tokens X (n, T, d) and queries Z (n, d): rows
    vec((x_{i,alpha_i} - x_it) z_i^T), no exact rows (sweeps); W_mm (fro) or W*_mm (nuclear, cvxpy)."""
    n, T, d = X.shape
    A, tags, _, _ = _rows_for(np.einsum("ntd,ne->ntde", X, Z).reshape(n, T, d * d), alpha)
    prob = MarginProblem(A, tags, None, (d, d), "W-SVM")
    return _solve_cvxpy(prob, norm="nuclear") if norm == "nuclear" else solve(prob, solver)


def w_svm_problem(ds: Dataset, alpha: Sequence[int]) -> MarginProblem:
    """W-SVM (paper B): rows vec((x_{i,alpha_i} - x_it) z_i^T), z_i = dataset's z or x_i1."""
    from attnsvm.attention import model

    alpha = _check_alpha(ds, alpha)
    Z = model.queries(ds)
    eX = ds.exact["X"]
    eZ = ds.exact["z"] if ds.z is not None else eX[:, 0, :]
    tags = tuple((i, t) for i in range(ds.n) for t in range(ds.T) if t != alpha[i])
    A = np.array([np.outer(ds.X[i, alpha[i]] - ds.X[i, t], Z[i]).ravel() for i, t in tags])
    eA = np.array([np.outer(eX[i, alpha[i]] - eX[i, t], eZ[i]).ravel() for i, t in tags], dtype=object)
    return MarginProblem(A.reshape(len(tags), ds.d * ds.d), tags, eA, (ds.d, ds.d), f"W-SVM(alpha={list(alpha)})")


def w_svm(ds: Dataset, alpha: Sequence[int], norm: str = "fro", solver: str = "quadprog") -> SVMResult:
    """W_mm (norm='fro', a QP) or W*_mm (norm='nuclear', cvxpy)."""
    prob = w_svm_problem(ds, alpha)
    if norm == "nuclear":
        return _solve_cvxpy(prob, norm="nuclear")
    return solve(prob, solver)


def label_svm(R: np.ndarray, Y: np.ndarray, exact_R: np.ndarray | None = None, solver: str = "quadprog") -> SVMResult:
    """v_mm = argmin ||v|| s.t. Y_i v^T r_i >= 1 (Section 3)."""
    A = Y[:, None] * R
    eA = (None if exact_R is None
          else np.array([[Fraction(int(y)) * x for x in r] for y, r in zip(Y, exact_R)], dtype=object))
    return solve(MarginProblem(A, tuple(range(len(Y))), eA, None, "label-SVM"), solver)


def _check_alpha(ds: Dataset, alpha) -> tuple[int, ...]:
    from attnsvm.errors import UserError

    alpha = tuple(int(a) for a in alpha)
    if len(alpha) != ds.n or any(not 0 <= a < ds.T for a in alpha):
        raise UserError(f"alpha must give one token index in [0, {ds.T}) for each of the {ds.n} "
                        f"inputs, got {list(alpha)}")
    return alpha
