"""The W-SVM as a p-SVM (Transformers as SVMs, Section 2; docs/statements.md#notation): the logits x_it^T W z_i are
linear in p = vec(W) with keys vec(x_it z_i^T), so (Att-SVM) for W is the core (ATT-SVM) in
dimension d^2 and Definition 2 (SVM-neighbours, local optimality) carries over verbatim.
`lifted(ds)` builds that p-problem as an exact `Dataset` (the keyed construction of
`claims.strategies.keyed_dataset`: keys vec(x_it z_i^T), scores gamma_it), so the exact LMM
machinery of `svm.geometry` (certificates, neighbours, LMM enumeration) decides W-problems.

`rank_constrained_svm` is the (K, Q) problem with width m < d (Section 3: the (K, Q) path
converges to the nuclear-norm SVM with rank(W) <= m): min (||K||_F^2 + ||Q||_F^2)/2 s.t. the
W-SVM rows on vec(K Q^T) >= 1, a non-convex problem solved by multi-start SLSQP (best found,
not certified)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.svm import geometry


def exact_queries(ds: Dataset) -> np.ndarray:
    """z_i exactly: the dataset's z, else z_i = x_i1 (self-attention)."""
    return ds.exact["z"] if ds.z is not None else ds.exact["X"][:, 0, :]


def lifted(ds: Dataset) -> Dataset:
    """The p-problem equivalent to ds's W-problem, exactly: token t of input i is
    (vec(x_it z_i^T), Y_i gamma_it) with W = diag(1, .., 1, 0) and v = e_last, so its keys are
    vec(x_it z_i^T) (row-major, as `dynamics.cross.w_keys`) and its scores are ds's gamma_it."""
    from attnsvm.claims.strategies import keyed_dataset

    def compute():
        X, Z = ds.exact["X"], exact_queries(ds)
        keys = [[[x * z for x in X[i, t] for z in Z[i]] for t in range(ds.T)] for i in range(ds.n)]
        g = model.exact_scores(ds)
        return keyed_dataset(keys, g.tolist(), [int(y) for y in ds.exact["Y"]], name=f"W-lift({ds.name})")
    return ds.memo("w_lifted", compute)


def w_matrix(ds: Dataset, p_lifted) -> np.ndarray:
    """W (d, d) from a lifted direction (its last coordinate, the score's, carries no key)."""
    p = np.asarray(p_lifted, dtype=np.float64)
    return p[: ds.d * ds.d].reshape(ds.d, ds.d)


def w_select(ds: Dataset, alpha: Sequence[int]) -> geometry.Selection:
    """Definition 2 for the W-problem: W-SVM(alpha), certified, with neighbours and local optimality
    (computed once per dataset and alpha)."""
    alpha = tuple(int(a) for a in alpha)
    return ds.memo(f"w_select{alpha}", lambda: geometry.select(lifted(ds), alpha))


def w_feasible(ds: Dataset, alpha: Sequence[int]) -> bool:
    """The W-SVM for alpha is feasible, by an exact KKT certificate on its exact rows (the answer
    `w_select(ds, alpha)` gives for `feasible and certified`, without Definition 2's neighbours and
    the lifted dataset: about 5x cheaper), computed once per dataset and alpha."""
    from attnsvm.svm import certificates
    from attnsvm.svm.margin import w_svm

    alpha = tuple(int(a) for a in alpha)

    def compute():
        res = w_svm(ds, alpha)
        if not res.ok:
            return False
        cert = certificates.certify(res)
        return bool(cert.verified and cert.kind == "kkt")
    return ds.memo(f"w_feasible{alpha}", compute)


def w_lmms(ds: Dataset, limit: int = 4096) -> list[geometry.Selection]:
    """Every locally optimal selection of the W-problem (exhaustive when T^n <= limit)."""
    return [s for s in w_selections(ds, limit) if s.locally_optimal]


def w_lmms_screened(ds: Dataset, limit: int = 4096) -> list[geometry.Selection]:
    """`w_lmms` (the same selections, in the same order, each decided exactly by `w_select`),
    without the exact solve of a candidate whose float W-SVM (`fro_w_svm`) already shows it is not
    locally optimal beyond solver error (`geometry.robust_non_lmm`: every row clearly active with a
    clearly positive dual or clearly inactive, and a clearly active row with an exact score gap
    <= 0; the screen `geometry` uses for sampled LMM searches; infeasibility is never screened).
    For start directions: most candidates are such, and an exact solve costs about 5x the float
    one."""
    out = []
    for alpha in geometry.candidate_alphas(lifted(ds), limit):
        res = fro_w_svm(ds, alpha)
        if res.ok and geometry.robust_non_lmm(ds, alpha, res):
            continue
        sel = w_select(ds, alpha)
        if sel.locally_optimal:
            out.append(sel)
    return out


def w_selections(ds: Dataset, limit: int = 4096) -> list[geometry.Selection]:
    """`w_select` of every candidate alpha (all of [T]^n when T^n <= limit, else a seeded sample)."""
    return [w_select(ds, a) for a in geometry.candidate_alphas(lifted(ds), limit)]


def rank_constrained_svm(ds: Dataset, alpha: Sequence[int], m: int, starts: int = 8, seed: int = 0):
    """min (||K||^2 + ||Q||^2)/2 s.t. (x_{i,alpha_i} - x_it)^T K Q^T z_i >= 1, K, Q in R^{d x m}, by
    SLSQP from `starts` seeded starts; at a minimiser (||K||^2 + ||Q||^2)/2 = ||K Q^T||_* (balanced
    factors), so the value is the least nuclear norm over rank <= m feasible W. Returns
    (value, W) of the best start that met the constraints (to 1e-8), else (inf, None)."""
    from scipy.optimize import minimize

    from attnsvm.svm.margin import w_svm_problem

    A = w_svm_problem(ds, alpha).A
    d = ds.d
    rng = np.random.default_rng(seed)

    def W_of(th):
        return th[: d * m].reshape(d, m) @ th[d * m:].reshape(d, m).T

    def cons(th):
        return A @ W_of(th).ravel() - 1

    def cons_jac(th):
        K, Q = th[: d * m].reshape(d, m), th[d * m:].reshape(d, m)
        G = A.reshape(-1, d, d)
        return np.concatenate([(G @ Q).reshape(len(A), -1), (G.transpose(0, 2, 1) @ K).reshape(len(A), -1)], 1)

    best, best_W = np.inf, None
    for _ in range(starts):
        th0 = rng.normal(size=2 * d * m)
        scale = cons(th0) + 1
        if scale.min() > 0:
            th0 = th0 / np.sqrt(scale.min())
        res = minimize(lambda th: 0.5 * th @ th, th0, jac=lambda th: th, method="SLSQP",
                       constraints=[{"type": "ineq", "fun": cons, "jac": cons_jac}],
                       options={"maxiter": 500, "ftol": 1e-12})
        if cons(res.x).min() >= -1e-8 and res.fun < best:
            best, best_W = float(res.fun), W_of(res.x)
    return best, best_W


@functools.lru_cache(maxsize=16)
def _psd_map(d: int):
    """The linear map x = (vec W, svec U, svec V) -> svec [[U, W], [W^T, V]] (Clarabel's PSD triangle:
    upper triangle, column-major, off-diagonals times sqrt 2), as a dense (2d(2d+1)/2, d^2 + d(d+1)) matrix,
    and the objective (tr U + tr V)/2 over x."""
    tri = [(r, c) for c in range(d) for r in range(c + 1)]            # svec order of a d x d symmetric block
    index = {rc: k for k, rc in enumerate(tri)}
    D, S = d * d, len(tri)
    rows = []
    for c in range(2 * d):
        for r in range(c + 1):
            row = np.zeros(D + 2 * S)
            scale = 1.0 if r == c else math.sqrt(2.0)
            if c < d:
                row[D + index[(r, c)]] = scale
            elif r < d:
                row[r * d + (c - d)] = scale
            else:
                row[D + S + index[(r - d, c - d)]] = scale
            rows.append(row)
    q = np.zeros(D + 2 * S)
    for j in range(d):
        q[D + index[(j, j)]] = q[D + S + index[(j, j)]] = 0.5
    return np.array(rows), q


def nuclear_svm(problem):
    """W*_mm = argmin ||W||_* s.t. A vec(W) >= b for a (d, d)-shaped margin problem
    (`svm.w_svm_problem`), as the semidefinite program min (tr U + tr V)/2 s.t. [[U, W], [W^T, V]]
    PSD solved by Clarabel directly (the same solver cvxpy's `norm='nuclear'` path calls, without its
    modelling layer: about 1 ms instead of 35 ms at d = 3). Rows at unit scale (a power of two, exact);
    status 'optimal' only when Clarabel reports Solved, else 'error' (or 'infeasible' with a Farkas
    vector). W*_mm need not be unique: compare nuclear norms, not directions."""
    import clarabel
    from scipy import sparse

    from attnsvm.svm.margin import SVMResult, _finish, _infeasible, unit_scale

    d = problem.shape[0]
    e = unit_scale(problem.A)
    Au, b = np.ldexp(problem.A, -e), problem.rhs
    M, q = _psd_map(d)
    m = Au.shape[0]
    A = np.zeros((m + M.shape[0], len(q)))
    A[:m, : d * d] = -Au                                          # -A w + s = -b, s >= 0
    A[m:] = -M                                                    # -svec(M) + s = 0, s PSD
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    solver = clarabel.DefaultSolver(sparse.csc_matrix((len(q), len(q))), q, sparse.csc_matrix(A),
                                    np.concatenate([-b, np.zeros(M.shape[0])]),
                                    [clarabel.NonnegativeConeT(m), clarabel.PSDTriangleConeT(2 * d)], settings)
    sol = solver.solve()
    status = str(sol.status)
    if status in ("PrimalInfeasible", "AlmostPrimalInfeasible"):
        return _infeasible(problem, "clarabel/nuclear", f"clarabel status {status}")
    if status != "Solved":
        return SVMResult(problem, "error", "clarabel/nuclear", message=f"clarabel status {status}")
    x = np.asarray(sol.x)
    return _finish(problem, e, Au, b, x[: d * d], np.asarray(sol.z)[:m], "clarabel/nuclear")


def float_problem(ds: Dataset, alpha: Sequence[int]):
    """The W-SVM rows vec((x_{i,alpha_i} - x_it) z_i^T) in float64 only (`svm.w_svm_problem` without
    its exact rows, which only certificates read), shape (d, d)."""
    from attnsvm.svm.margin import MarginProblem, _rows_for

    alpha = tuple(int(a) for a in alpha)
    n, T, d = ds.X.shape
    A, tags, _, _ = _rows_for(np.einsum("ntd,ne->ntde", ds.X, model.queries(ds)).reshape(n, T, d * d), alpha)
    return MarginProblem(A, tags, None, (d, d), f"W-SVM(alpha={list(alpha)})")


def fro_w_svm(ds: Dataset, alpha: Sequence[int]):
    """W_mm(alpha) (the Frobenius W-SVM, a QP on `float_problem`), computed once per dataset and alpha."""
    from attnsvm.svm.margin import solve

    alpha = tuple(int(a) for a in alpha)
    return ds.memo(f"fro_w_svm{alpha}", lambda: solve(float_problem(ds, alpha)))


def nuclear_w_svm(ds: Dataset, alpha: Sequence[int]):
    """W*_mm(alpha) of the dataset's W-problem (`nuclear_svm` on `float_problem`), computed once per
    dataset and alpha."""
    alpha = tuple(int(a) for a in alpha)
    return ds.memo(f"nuclear_w_svm{alpha}", lambda: nuclear_svm(float_problem(ds, alpha)))
