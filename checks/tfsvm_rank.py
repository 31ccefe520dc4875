"""Transformers as SVMs, claim 5 (paper B;
docs/statements.md#tfsvm-rank): rank(W_mm(alpha)) <= n, checked numerically on
an independently solved W_mm.

The exact KKT certificate cannot serve as the measurement: its point is W = A_S^T mu =
sum_i (sum_t mu_it (x_{i,alpha_i} - x_it)) z_i^T, of rank <= n by construction for any data.
So W_mm is solved again as a primal problem on the d x d matrix W itself (`primal_w_mm`: the
QP min ||W||_F^2 s.t. (x_{i,alpha_i} - x_it)^T W z_i >= 1 in the d^2 entries of W, by quadprog's
dual active-set method in float64, the constraints built from the tokens and queries directly,
not from `svm.w_svm_problem`'s rows or the certificate), and its numerical rank is read:
singular values above FRO_RANK_TOL * sigma_1. The exact certificate only confirms that this
solve is the optimum: its ||W||_F^2 must match the exact ||W_mm||_F^2 within OPT_TOL (relative)
and it may violate no constraint by more than OPT_TOL, else the instance is undecided. (Any
solver's optimum is a combination of the constraint rows up to rounding, as the KKT conditions
say; what the check can catch is a solve whose W leaves the queries' span, tests pin that.)
The nuclear-norm solution W*_mm's rank is the sweep's (`reproduce tfsvm-rank`), not this check's."""

import math

import numpy as np

from attnsvm import status
from attnsvm.attention import model
from attnsvm.claims import Claim, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.selections import integer_selections
from attnsvm.numerics import EPS
from attnsvm.svm import w_svm
from attnsvm.svm.certificates import certify
from attnsvm.svm.margin import unit_scale

FRO_RANK_TOL = 1e-6      # W_mm (independent primal solve): rank = #singular values > FRO_RANK_TOL * sigma_1
OPT_TOL = 1e-6           # the primal solve must match the exact ||W_mm||_F^2 and the constraints to this (relative)


def numerical_rank(W: np.ndarray, tol: float = FRO_RANK_TOL) -> int:
    s = np.linalg.svd(W, compute_uv=False)
    return int((s > tol * s[0]).sum()) if s[0] > 0 else 0


def _margins(ds, alpha, W: np.ndarray) -> np.ndarray:
    """(x_{i,alpha_i} - x_it)^T W z_i for every i and t != alpha_i."""
    Z = model.queries(ds)
    return np.array([(ds.X[i, alpha[i]] - ds.X[i, t]) @ W @ Z[i]
                     for i in range(ds.n) for t in range(ds.T) if t != alpha[i]])


def primal_w_mm(ds, alpha) -> tuple[str, np.ndarray | None]:
    """(status, W): the Frobenius W-SVM solved as a primal QP on the d x d variable W (quadprog:
    min (1/2) w^T (2 I) w s.t. C^T w >= 1 with w = vec(W) and a column vec((x_{i,alpha_i} - x_it) z_i^T)
    per constraint), tokens and queries scaled by powers of two to unit size (exact; W is scaled
    back). Nothing in it restricts W to the span of the queries: a low rank can only come from
    optimality."""
    import quadprog

    X, Z = ds.X, model.queries(ds)
    ex, ez = unit_scale(X), unit_scale(Z)
    Xs, Zs = np.ldexp(X, -ex), np.ldexp(Z, -ez)
    pairs = [(i, t) for i in range(ds.n) for t in range(ds.T) if t != alpha[i]]
    C = np.stack([np.outer(Xs[i, alpha[i]] - Xs[i, t], Zs[i]).ravel() for i, t in pairs], axis=1)
    d2 = ds.d * ds.d
    try:
        w = quadprog.solve_qp(2 * np.eye(d2), np.zeros(d2), C, np.ones(len(pairs)))[0]
    except ValueError as err:                      # quadprog: 'constraints are inconsistent' and the like
        return f"{status.SOLVER_ERROR}: {err}", None
    return status.OPTIMAL, np.ldexp(w.reshape(ds.d, ds.d), -(ex + ez))


def rank_one(inst) -> Outcome:
    ds = inst.dataset
    alpha = tuple(inst.params["alpha"])
    cert = certify(w_svm(ds, alpha))
    if not (cert.verified and cert.kind == "kkt"):
        return Outcome(None, reason=f"no exact KKT certificate: {cert.reason}")
    solved, W = primal_w_mm(ds, alpha)
    if W is None:
        return Outcome(None, detail={"primal_status": solved}, reason=f"primal W-SVM solve not optimal ({solved})")
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
    margin = math.log10(FRO_RANK_TOL / max(tail, EPS / 16))          # decades sigma_{n+1} lies below the cutoff
    return Outcome(r <= ds.n, detail=detail, margin=margin)


@batched
def rank_at_most_n(insts, budget) -> list[Outcome]:
    return [rank_one(inst) for inst in insts]


def _sizes(c):
    """n 1..3, T 2..4 and d = n+1..n+3 (d > n: the bound says something)."""
    n, T = c.integer(1, 3, "size"), c.integer(2, 4, "size")
    return n, T, c.integer(n + 1, n + 3, "size")


claim = Claim(
    name="tfsvm-rank",
    evaluations=1000,
    statement="if the W-SVM for alpha is feasible, rank(W_mm(alpha)) <= n",
    hypotheses=hyp.of("tfsvm-rank"),
    conclusion=rank_at_most_n,
    instances=lambda dropped: integer_selections(_sizes),
    measures=("rank_W_mm", "n_minus_rank_W_mm", "sigma_n_plus_1_rel", "optimality_gap"),
    proxy=f"numeric: rank = #singular values > {FRO_RANK_TOL:g} sigma_1 of W_mm solved independently (quadprog primal "
          f"QP on the d^2 entries of W, constraints built from the tokens; nothing keeps W in the queries' span); "
          f"the exact KKT point (rank <= n by construction) only confirms that solve: ||W||_F^2 within {OPT_TOL:g} "
          f"(relative) of the exact optimum, no constraint violated by more than {OPT_TOL:g}, else undecided; "
          f"margin = log10({FRO_RANK_TOL:g} sigma_1 / sigma_(n+1)); instances have d > n",
    tolerance=f"rank: sigma > {FRO_RANK_TOL:g} sigma_1; optimality: {OPT_TOL:g} relative",
    tolerances={"rank_relative": FRO_RANK_TOL, "optimality_relative": OPT_TOL},
)
