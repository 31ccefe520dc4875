"""Transformers as SVMs, claim 5 (paper B;
docs/statements.md#tfsvm-rank): rank(W_mm(alpha)) <= n, checked numerically on
an independently solved W_mm.

The exact KKT certificate cannot serve as the measurement: its point is W = A_S^T mu =
sum_i (sum_t mu_it (x_{i,alpha_i} - x_it)) z_i^T, of rank <= n by construction for any data.
So W_mm is solved again as a primal problem on the d x d matrix W itself (`primal_w_mm`:
cvxpy/Clarabel, min ||W||_F^2 s.t. (x_{i,alpha_i} - x_it)^T W z_i >= 1, the constraints built
from the tokens and queries directly, not from `svm.w_svm_problem`'s rows or the certificate),
and its numerical rank is read: singular values above FRO_RANK_TOL * sigma_1. The exact
certificate only confirms that this solve is the optimum: its ||W||_F^2 must match the exact
||W_mm||_F^2 within OPT_TOL (relative) and it may violate no constraint by more than OPT_TOL,
else the instance is undecided. The rank of the nuclear-norm solution W*_mm (cvxpy) is measured
alongside: singular values above RANK_TOL * sigma_1 (interior-point accuracy ~1e-8 relative)."""

import math

import numpy as np
from hypothesis import strategies as st
from sympy import QQ
from sympy.polys.matrices import DomainMatrix

from attnsvm.attention import model
from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims.strategies import gaussian_dataset, integer_datasets
from attnsvm.svm import w_svm
from attnsvm.svm.certificates import certify
from attnsvm.svm.margin import unit_scale

RANK_TOL = 1e-5          # W*_mm (nuclear norm, cvxpy): rank = #singular values > RANK_TOL * sigma_1
FRO_RANK_TOL = 1e-6      # W_mm (independent primal solve): rank = #singular values > FRO_RANK_TOL * sigma_1
OPT_TOL = 1e-6           # the primal solve must match the exact ||W_mm||_F^2 and the constraints to this (relative)
CLARABEL_TOL = 1e-10     # gap and feasibility tolerances of the primal solve


def numerical_rank(W: np.ndarray, tol: float = RANK_TOL) -> int:
    s = np.linalg.svd(W, compute_uv=False)
    return int((s > tol * s[0]).sum()) if s[0] > 0 else 0


def exact_rank(x, d: int) -> int:
    rows = [[QQ(q.numerator, q.denominator) for q in x[r * d:(r + 1) * d]] for r in range(d)]
    return DomainMatrix(rows, (d, d), QQ).rank()


def _alpha(inst):
    return tuple(inst.params["alpha"])


def feasible(inst) -> bool:
    """(Att-SVM) for alpha is feasible (exact certificate)."""
    cert = certify(w_svm(inst.dataset, _alpha(inst)))
    return cert.verified and cert.kind == "kkt"


def _margins(ds, alpha, W: np.ndarray) -> np.ndarray:
    """(x_{i,alpha_i} - x_it)^T W z_i for every i and t != alpha_i."""
    Z = model.queries(ds)
    return np.array([(ds.X[i, alpha[i]] - ds.X[i, t]) @ W @ Z[i]
                     for i in range(ds.n) for t in range(ds.T) if t != alpha[i]])


def primal_w_mm(ds, alpha) -> tuple[str, np.ndarray | None]:
    """(status, W): the Frobenius W-SVM solved as a primal problem on the d x d variable W
    (cvxpy/Clarabel QP, min ||W||_F^2, tolerances CLARABEL_TOL), with tokens and queries scaled by
    powers of two to unit size (exact; W is scaled back). Nothing in it restricts W to the span
    of the queries: a low rank can only come from optimality."""
    import cvxpy as cp

    X, Z = ds.X, model.queries(ds)
    ex, ez = unit_scale(X), unit_scale(Z)
    Xs, Zs = np.ldexp(X, -ex), np.ldexp(Z, -ez)
    pairs = [(i, t) for i in range(ds.n) for t in range(ds.T) if t != alpha[i]]
    D = np.array([Xs[i, alpha[i]] - Xs[i, t] for i, t in pairs])
    Q = np.array([Zs[i] for i, _ in pairs])
    W = cp.Variable((ds.d, ds.d))
    prob = cp.Problem(cp.Minimize(cp.sum_squares(W)), [cp.sum(cp.multiply(D @ W, Q), axis=1) >= 1])
    try:
        prob.solve(solver=cp.CLARABEL, tol_gap_abs=CLARABEL_TOL, tol_gap_rel=CLARABEL_TOL, tol_feas=CLARABEL_TOL)
    except cp.error.SolverError as err:
        return f"error: {str(err).splitlines()[0]}", None
    if prob.status != cp.OPTIMAL or W.value is None:
        return str(prob.status), None
    return "optimal", np.ldexp(np.asarray(W.value, dtype=float), -(ex + ez))


def rank_at_most_n(inst, budget) -> Outcome:
    ds = inst.dataset
    alpha = _alpha(inst)
    cert = certify(w_svm(ds, alpha))
    if not (cert.verified and cert.kind == "kkt"):
        return Outcome(None, reason=f"no exact KKT certificate: {cert.reason}")
    status, W = primal_w_mm(ds, alpha)
    if W is None:
        return Outcome(None, detail={"primal_status": status}, reason=f"primal W-SVM solve not optimal ({status})")
    norm2 = float(sum(q * q for q in cert.x))                      # exact ||W_mm||_F^2, rounded once
    gap = abs(float((W ** 2).sum()) - norm2) / norm2
    violation = max(0.0, 1.0 - float(_margins(ds, alpha, W).min()))
    s = np.linalg.svd(W, compute_uv=False)
    r = int((s > FRO_RANK_TOL * s[0]).sum())
    tail = float(s[ds.n] / s[0]) if ds.d > ds.n else 0.0           # sigma_{n+1} / sigma_1
    W_cert = np.array([float(q) for q in cert.x]).reshape(ds.d, ds.d)
    detail = {"n": ds.n, "d": ds.d, "rank_W_mm": r, "n_minus_rank_W_mm": ds.n - r, "sigma_n_plus_1_rel": tail,
              "optimality_gap": gap, "max_violation": violation,
              "distance_to_certificate": float(np.linalg.norm(W - W_cert) / np.linalg.norm(W_cert))}
    if gap > OPT_TOL or violation > OPT_TOL:
        return Outcome(None, detail=detail, reason=f"primal W-SVM solve not confirmed optimal by the exact certificate "
                       f"(objective gap or violation above {OPT_TOL:g})")
    nuc = w_svm(ds, alpha, norm="nuclear")
    detail["nuclear_status"] = nuc.status
    if nuc.ok:
        detail["rank_W_star_mm"] = numerical_rank(nuc.solution)
        detail["rank_W_mm_minus_rank_W_star_mm"] = r - detail["rank_W_star_mm"]
    margin = math.log10(FRO_RANK_TOL / max(tail, 1e-17))            # decades sigma_{n+1} lies below the cutoff
    return Outcome(r <= ds.n, detail=detail, margin=margin)


@st.composite
def _datasets(draw):
    n = draw(st.integers(1, 3))
    return draw(integer_datasets(n=st.just(n), T=st.integers(2, 4), d=st.integers(n + 1, n + 3)))


def _instances(dropped):
    def with_alpha(ds):
        return st.lists(st.integers(0, ds.T - 1), min_size=ds.n, max_size=ds.n).map(
            lambda a: Instance(ds, {"alpha": a}))
    return _datasets().flatmap(with_alpha)


def rank_table(ns=(2, 4), T: int = 4, dims=range(2, 9), trials: int = 3, seed: int = 0) -> dict:
    """Mean numerical ranks of W_mm (independent primal solve) and W*_mm against d, alpha = opt,
    Gaussian data (the authors' SVM-rank experiment in miniature; reported, not a pass/fail check)."""
    out = {}
    for n in ns:
        for d in dims:
            rf, rn = [], []
            for k in range(trials):
                ds = gaussian_dataset(seed + 1000 * d + k, n, T, d)
                a = model.optimal_tokens(ds)
                status, W = primal_w_mm(ds, a)
                if W is None:
                    continue
                rf.append(numerical_rank(W, FRO_RANK_TOL))
                nuc = w_svm(ds, a, norm="nuclear")
                if nuc.ok:
                    rn.append(numerical_rank(nuc.solution))
            out[f"n={n}, d={d}"] = {"W_mm": float(np.mean(rf)) if rf else None,
                                    "W*_mm": float(np.mean(rn)) if rn else None, "runs": len(rf)}
    return out


claim = Claim(
    name="tfsvm-rank",
    evaluations=40,
    statement="if the W-SVM for alpha is feasible, rank(W_mm(alpha)) <= n",
    hypotheses=(Hypothesis("feasible", "(Att-SVM) for alpha is feasible (exact KKT certificate)", feasible),),
    conclusion=rank_at_most_n,
    instances=_instances,
    measures=("rank_W_mm", "n_minus_rank_W_mm", "sigma_n_plus_1_rel", "optimality_gap", "rank_W_star_mm",
              "rank_W_mm_minus_rank_W_star_mm"),
    proxy=f"numeric: rank = #singular values > {FRO_RANK_TOL:g} sigma_1 of W_mm solved independently (cvxpy/Clarabel "
          f"primal QP on the d x d matrix W, constraints built from the tokens; nothing keeps W in the queries' span); "
          f"the exact KKT point (rank <= n by construction) only confirms that solve: ||W||_F^2 within {OPT_TOL:g} "
          f"(relative) of the exact optimum, no constraint violated by more than {OPT_TOL:g}, else undecided; "
          f"margin = log10({FRO_RANK_TOL:g} sigma_1 / sigma_(n+1)); instances have d > n. W*_mm rank at {RANK_TOL:g} sigma_1",
    tolerance=f"rank: sigma > {FRO_RANK_TOL:g} sigma_1; optimality: {OPT_TOL:g} relative",
)
