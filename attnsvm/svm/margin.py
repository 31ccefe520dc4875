"""Hard-margin SVMs as values (CVXPY style): a `MarginProblem` `min ||x|| s.t. A x >= b`
(b = 1 unless given) and a `solve` that always returns an `SVMResult` with an explicit
status, never raises on infeasibility.

(ATT-SVM) `p_mm(alpha) = argmin ||p|| s.t. (k_{i,alpha_i} - k_it)^T p >= 1` (SPEC.md A), the
Frobenius W-SVM of SPEC.md B and the label SVM for v (Section 3) are all this one problem
with different rows; the hot path is quadprog's dense dual active-set method (Goldfarb-
Idnani), cross-checked against cvxpy. The nuclear-norm W-SVM is not a QP: cvxpy only.
Infeasible problems carry a Farkas vector `lam >= 0, A^T lam = 0, b^T lam = 1` from an LP.
A right-hand side other than 1 expresses relaxed problems such as the paper's (10), where
the rows of non-support inputs only need `>= 0` (`relaxed_att_svm`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

import numpy as np
import quadprog
import scipy.optimize

from attnsvm.attention import model
from attnsvm.attention.data import Dataset

ACTIVE_TOL = 1e-9


@dataclass(frozen=True, eq=False)
class MarginProblem:
    """min ||x||^2/2 s.t. A x >= b. `tags[j]` names row j (e.g. (i, t)); `exact_A` holds the
    rows as Fractions when known (for certificates); `shape` reshapes x (e.g. (d, d)); `b`
    the right-hand side (None: every row >= 1; floats are exact rationals for certificates)."""

    A: np.ndarray
    tags: tuple = ()
    exact_A: np.ndarray | None = field(default=None, repr=False)
    shape: tuple | None = None
    name: str = "svm"
    b: np.ndarray | None = None

    @property
    def dim(self) -> int:
        return self.A.shape[1]

    @property
    def rhs(self) -> np.ndarray:
        """The right-hand side b as floats (ones by default)."""
        return np.ones(self.A.shape[0]) if self.b is None else np.asarray(self.b, dtype=float)


@dataclass(frozen=True, eq=False)
class SVMResult:
    """status: 'optimal' | 'infeasible' | 'error'. `solution` in the problem's shape;
    `duals` per row; `active` rows with A x - b <= ACTIVE_TOL (numeric; certificates decide
    exactly); `farkas` when infeasible."""

    problem: MarginProblem
    status: str
    solver: str
    solution: np.ndarray | None = None
    duals: np.ndarray | None = None
    active: tuple[int, ...] = ()
    farkas: np.ndarray | None = None
    message: str = ""

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


def _finish(problem: MarginProblem, x: np.ndarray, duals: np.ndarray, solver: str) -> SVMResult:
    resid = problem.A @ x - problem.rhs
    if resid.min() < -1e-7:
        return SVMResult(problem, "error", solver, message=f"solution violates a constraint by {-resid.min():.2e}")
    active = tuple(int(j) for j in np.flatnonzero(resid <= ACTIVE_TOL * max(1.0, np.abs(x).max())))
    sol = x.reshape(problem.shape) if problem.shape else x
    return SVMResult(problem, "optimal", solver, sol, duals, active)


def farkas_vector(A: np.ndarray, b: np.ndarray | None = None) -> np.ndarray | None:
    """A vertex lam >= 0 with A^T lam = 0, b^T lam = 1 (proves A x >= b infeasible; b = 1
    by default, then sum lam = 1), or None."""
    m, D = A.shape
    b = np.ones(m) if b is None else np.asarray(b, dtype=float)
    res = scipy.optimize.linprog(np.zeros(m), A_eq=np.vstack([A.T, b[None, :]]),
                                 b_eq=np.r_[np.zeros(D), 1.0], bounds=(0, None), method="highs-ds")
    return res.x if res.status == 0 else None


def _infeasible(problem: MarginProblem, solver: str, message: str) -> SVMResult:
    lam = farkas_vector(problem.A, problem.rhs)
    if lam is None:
        return SVMResult(problem, "error", solver, message=f"{message}; no Farkas vector found by LP")
    return SVMResult(problem, "infeasible", solver, farkas=lam, message=message)


def solve(problem: MarginProblem, solver: str = "quadprog") -> SVMResult:
    """Solve with 'quadprog' (fast dense path) or 'cvxpy' (reference)."""
    A = problem.A
    if A.shape[0] == 0:
        return _finish(problem, np.zeros(problem.dim), np.zeros(0), solver)
    if solver == "quadprog":
        try:
            x, _, _, _, lam, _ = quadprog.solve_qp(np.eye(problem.dim), np.zeros(problem.dim), A.T, problem.rhs, 0)
        except ValueError as e:
            if "inconsistent" in str(e):
                return _infeasible(problem, solver, "constraints inconsistent")
            return SVMResult(problem, "error", solver, message=str(e))
        return _finish(problem, x, lam, solver)
    if solver == "cvxpy":
        return _solve_cvxpy(problem, norm="fro")
    raise ValueError(f"unknown solver {solver!r}")


def _solve_cvxpy(problem: MarginProblem, norm: str) -> SVMResult:
    import cvxpy as cp

    if norm == "nuclear":
        X = cp.Variable(problem.shape)
        flat = cp.vec(X, order="C")
        objective = cp.normNuc(X)
    else:
        flat = X = cp.Variable(problem.dim)
        objective = 0.5 * cp.sum_squares(X)
    cons = [problem.A @ flat >= problem.rhs]
    prob = cp.Problem(cp.Minimize(objective), cons)
    try:
        prob.solve(solver=cp.CLARABEL)
    except cp.error.SolverError as e:
        return SVMResult(problem, "error", f"cvxpy/{norm}", message=str(e).splitlines()[0])
    if prob.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return _infeasible(problem, f"cvxpy/{norm}", f"cvxpy status {prob.status}")
    if prob.status != cp.OPTIMAL:
        return SVMResult(problem, "error", f"cvxpy/{norm}", message=f"cvxpy status {prob.status}")
    x = np.asarray(X.value).reshape(-1)
    return _finish(problem, x, np.asarray(cons[0].dual_value).reshape(-1), f"cvxpy/{norm}")


def _rows_for(K: np.ndarray, alpha: Sequence[int], exact: np.ndarray | None):
    n, T, _ = K.shape
    tags = tuple((i, t) for i in range(n) for t in range(T) if t != alpha[i])
    A = np.array([K[i, alpha[i]] - K[i, t] for i, t in tags]).reshape(len(tags), K.shape[-1])
    eA = None if exact is None else np.array([exact[i, alpha[i]] - exact[i, t] for i, t in tags], dtype=object)
    return A, tags, eA


def att_svm_problem(ds: Dataset, alpha: Sequence[int]) -> MarginProblem:
    """(ATT-SVM) for token indices alpha (one per input), keys k_it = W^T x_it."""
    alpha = _check_alpha(ds, alpha)
    A, tags, eA = _rows_for(model.keys(ds), alpha, model.exact_keys(ds))
    return MarginProblem(A, tags, eA, None, f"ATT-SVM(alpha={list(alpha)})")


def att_svm(ds: Dataset, alpha: Sequence[int], solver: str = "quadprog") -> SVMResult:
    return solve(att_svm_problem(ds, alpha), solver)


def relaxed_att_svm_problem(ds: Dataset, alpha: Sequence[int], support: Sequence[int]) -> MarginProblem:
    """The relaxed (ATT-SVM) of the paper's problem (10) (Theorem 6): rows of inputs i in
    `support` need (k_{i,alpha_i} - k_it)^T p >= 1, the other inputs' rows only >= 0."""
    prob = att_svm_problem(ds, alpha)
    keep = set(int(i) for i in support)
    b = np.array([1.0 if i in keep else 0.0 for i, _ in prob.tags])
    return MarginProblem(prob.A, prob.tags, prob.exact_A, None, f"relaxed-ATT-SVM(alpha={list(alpha)}, S={sorted(keep)})", b)


def relaxed_att_svm(ds: Dataset, alpha: Sequence[int], support: Sequence[int], solver: str = "quadprog") -> SVMResult:
    return solve(relaxed_att_svm_problem(ds, alpha, support), solver)


def att_svm_keys(K: np.ndarray, alpha: Sequence[int], solver: str = "quadprog") -> SVMResult:
    """(ATT-SVM) straight from float keys (n, T, d): the hot path of sweeps, no exact rows."""
    A, tags, _ = _rows_for(K, alpha, None)
    return solve(MarginProblem(A, tags, None, None, "ATT-SVM"), solver)


def w_svm_arrays(X: np.ndarray, Z: np.ndarray, alpha: Sequence[int], norm: str = "fro", solver: str = "quadprog") -> SVMResult:
    """W-SVM (SPEC.md B) straight from float tokens X (n, T, d) and queries Z (n, d): rows
    vec((x_{i,alpha_i} - x_it) z_i^T), no exact rows (sweeps); W_mm (fro) or W*_mm (nuclear, cvxpy)."""
    n, T, d = X.shape
    A, tags, _ = _rows_for(np.einsum("ntd,ne->ntde", X, Z).reshape(n, T, d * d), alpha, None)
    prob = MarginProblem(A, tags, None, (d, d), "W-SVM")
    return _solve_cvxpy(prob, norm="nuclear") if norm == "nuclear" else solve(prob, solver)


def w_svm_problem(ds: Dataset, alpha: Sequence[int]) -> MarginProblem:
    """W-SVM (SPEC.md B): rows vec((x_{i,alpha_i} - x_it) z_i^T), z_i = dataset's z or x_i1."""
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
    eA = None if exact_R is None else np.array([[Fraction(int(y)) * x for x in r] for y, r in zip(Y, exact_R)], dtype=object)
    return solve(MarginProblem(A, tuple(range(len(Y))), eA, None, "label-SVM"), solver)


def _check_alpha(ds: Dataset, alpha) -> tuple[int, ...]:
    from attnsvm.errors import UserError

    alpha = tuple(int(a) for a in alpha)
    if len(alpha) != ds.n or any(not 0 <= a < ds.T for a in alpha):
        raise UserError(f"alpha must give one token index in [0, {ds.T}) for each of the {ds.n} inputs, got {list(alpha)}")
    return alpha
