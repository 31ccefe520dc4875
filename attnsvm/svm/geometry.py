"""Token geometry (SPEC.md, Definition 2): GMM, SVM-neighbours, local optimality, LMMs, cones.

Answers that depend on which constraints are active come from the exact KKT certificate
when it verifies (`certified=True`), otherwise from the numeric active set (tolerance
`svm.ACTIVE_TOL`) with `certified=False`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.svm.certificates import Certificate, certify
from attnsvm.svm.margin import SVMResult, att_svm, att_svm_keys


@dataclass(frozen=True, eq=False)
class Selection:
    """Everything Definition 2 says about a token choice alpha.

    feasible: (ATT-SVM) has a solution; p_mm its solution; neighbors[i] = T_i, the active
    constraints of input i; score_gap = min_i min_{t in T_i} (gamma_{i,alpha_i} - gamma_it)
    (+inf with no neighbours); locally_optimal: feasible and score_gap > 0; is_gmm: alpha
    selects the (strictly) optimal tokens; certified: feasibility/infeasibility and the
    neighbour sets are exact."""

    alpha: tuple[int, ...]
    result: SVMResult
    certificate: Certificate
    neighbors: tuple[tuple[int, ...], ...]
    score_gap: float
    locally_optimal: bool
    is_gmm: bool

    @property
    def feasible(self) -> bool:
        return self.result.ok

    @property
    def certified(self) -> bool:
        return self.certificate.verified

    @property
    def p_mm(self) -> np.ndarray | None:
        return self.result.solution

    def to_json(self) -> dict:
        return {"alpha": list(self.alpha), "feasible": self.feasible, "status": self.result.status,
                "p_mm": None if self.p_mm is None else self.p_mm.tolist(),
                "p_mm_exact": [str(q) for q in self.certificate.x] if self.certificate.kind == "kkt" and self.certified else None,
                "neighbors": [list(t) for t in self.neighbors], "score_gap": self.score_gap,
                "locally_optimal": self.locally_optimal, "is_gmm": self.is_gmm, "certified": self.certified}


def select(ds: Dataset, alpha: Sequence[int], solver: str = "quadprog", exact: bool = True) -> Selection:
    """Solve (ATT-SVM) for alpha, certify it (unless exact=False: numeric answer only, from
    float rows, with certified=False), and classify alpha (Definition 2)."""
    alpha = tuple(int(a) for a in alpha)
    if exact:
        res = att_svm(ds, alpha, solver)
        cert = certify(res)
    else:
        res = att_svm_keys(model.keys(ds), alpha, solver)
        cert = Certificate("none", False, "not requested")
    gam = model.exact_scores(ds)
    opt = model.optimal_tokens(ds)
    is_opt = model.strict_optimality(ds) and tuple(opt) == alpha
    if not res.ok:
        return Selection(alpha, res, cert, tuple(() for _ in alpha), float("nan"), False, False)
    rows = cert.active if cert.verified else res.active
    nb = [[] for _ in alpha]
    for j in rows:
        i, t = res.problem.tags[j]
        nb[i].append(t)
    gaps = [gam[i][alpha[i]] - gam[i][t] for i in range(len(alpha)) for t in nb[i]]
    gap = float(min(gaps)) if gaps else float("inf")
    return Selection(alpha, res, cert, tuple(tuple(sorted(x)) for x in nb), gap, gap > 0, is_opt)


def svm_neighbors(ds: Dataset, alpha: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """T_i = {t != alpha_i : (k_{i,alpha_i} - k_it)^T p_mm = 1} for each input i."""
    return select(ds, alpha).neighbors


def locally_optimal(ds: Dataset, alpha: Sequence[int]) -> bool:
    """Definition 2: feasible and gamma_{i,alpha_i} > gamma_it for all t in T_i."""
    return select(ds, alpha).locally_optimal


def gmm(ds: Dataset) -> Selection:
    """p_mm(opt): the global max-margin direction (needs strict optimality to be the GMM)."""
    return select(ds, model.optimal_tokens(ds))


def candidate_alphas(ds: Dataset, limit: int = 4096, rng: np.random.Generator | None = None) -> Iterator[tuple[int, ...]]:
    """Every alpha in [T]^n when T^n <= limit, else `limit` distinct random ones (seeded)."""
    if ds.T ** ds.n <= limit:
        yield from itertools.product(range(ds.T), repeat=ds.n)
        return
    rng = rng or np.random.default_rng(0)
    seen = {tuple(model.optimal_tokens(ds))}
    yield next(iter(seen))
    while len(seen) < limit:
        a = tuple(int(x) for x in rng.integers(0, ds.T, ds.n))
        if a not in seen:
            seen.add(a)
            yield a


BORDERLINE = 1e-9   # numeric score gaps above -BORDERLINE are re-decided exactly


def selections(ds: Dataset, limit: int = 4096, rng: np.random.Generator | None = None) -> Iterator[Selection]:
    """Every candidate alpha (exhaustive when T^n <= limit, else sampled), classified numerically;
    the ones that may be locally optimal (feasible, score gap > -BORDERLINE) are re-decided by
    exact certificates, so every LMM reported is certified whenever its certificate verifies.
    (A selection the QP solver calls infeasible is not re-examined.)"""
    for a in candidate_alphas(ds, limit, rng):
        s = select(ds, a, exact=False)
        yield select(ds, a) if s.feasible and s.score_gap > -BORDERLINE else s


def lmms(ds: Dataset, limit: int = 4096, rng: np.random.Generator | None = None) -> list[Selection]:
    """All locally optimal selections (exhaustive when T^n <= limit, else sampled)."""
    return [s for s in selections(ds, limit, rng) if s.locally_optimal]


def exhaustive(ds: Dataset, limit: int = 4096) -> bool:
    return ds.T ** ds.n <= limit


def corr(p, q) -> float:
    """corr(p, q) = <p, q> / (||p|| ||q||)."""
    p, q = np.ravel(p), np.ravel(q)
    den = np.linalg.norm(p) * np.linalg.norm(q)
    return float(p @ q / den) if den > 0 else 0.0


def in_cone(p, q, mu: float, R: float = 0.0) -> bool:
    """p in C_{mu,R}(q) = {corr(p, q) >= 1 - mu, ||p|| >= R}."""
    return corr(p, q) >= 1 - mu and np.linalg.norm(p) >= R


def sample_cone(q, mu: float, R: float, rng: np.random.Generator, size: int = 1) -> np.ndarray:
    """`size` points of C_{mu,R}(q): norm R * (1 + U[0,1]), correlation uniform in [1-mu, 1]."""
    q = np.ravel(q) / np.linalg.norm(q)
    out = []
    for _ in range(size):
        c = rng.uniform(1 - mu, 1)
        w = rng.normal(size=q.shape)
        w -= (w @ q) * q
        nw = np.linalg.norm(w)
        w = w / nw if nw > 0 else w
        out.append(R * (1 + rng.uniform()) * (c * q + np.sqrt(max(0.0, 1 - c * c)) * w))
    return np.array(out)
