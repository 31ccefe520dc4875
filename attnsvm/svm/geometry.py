"""Token geometry (docs/statements.md#definition2): GMM, SVM-neighbours, local optimality, LMMs, cones.

Each selection alpha is decided one of three ways (`Selection.decision`):
- 'exact': a verified certificate (KKT: p_mm, its exact active set and so the exact score gap;
  Farkas: infeasible);
- 'numeric': the numeric classification is robust (`robust_non_lmm`: every row clearly active
  with a clearly positive dual or clearly inactive, an active row with a lower-or-equal exact
  score) and it is not an LMM; used only to screen a sampled search;
- 'uncertain': neither (no certificate verified: not the float solves', and the exact solve of
  `exact.solve_exact` was out of reach, or its answer is not representable in float64); the
  selection is reported undecided (`to_json`: feasible null) and the LMM set is not exact.
A certificate comes from the float solve (quadprog, else cvxpy), or where both fail (scales that
float64 cannot hold together) from the exact solve, so no answer depends on the data's scale.
`search` enumerates [T]^n (or samples it, bounded by count and time) and says whether the LMM
set it found is exact: every candidate decided exactly and all of [T]^n covered.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.svm.certificates import Certificate, certify
from attnsvm.svm.exact import EXACT_ENTRIES, SMALL_ENTRIES, solve_exact
from attnsvm.svm.margin import SVMResult, att_svm, att_svm_problem

ROBUST = 1e-6          # unit-scale slack / relative dual separating "clearly" active from inactive


@dataclass(frozen=True, eq=False)
class Selection:
    """Everything Definition 2 says about a token choice alpha.

    feasible: (ATT-SVM) has a solution; p_mm its solution; neighbors[i] = T_i, the active
    constraints of input i; gap = min_i min_{t in T_i} (gamma_{i,alpha_i} - gamma_it) exactly
    (None with no neighbours or when infeasible), score_gap the same as a float (+inf with no
    neighbours, nan when infeasible); locally_optimal: feasible and gap > 0; is_gmm: alpha
    selects the (strictly) optimal tokens; certified: the certificate verified; decision:
    'exact' | 'numeric' | 'uncertain' (module docstring)."""

    alpha: tuple[int, ...]
    result: SVMResult
    certificate: Certificate
    neighbors: tuple[tuple[int, ...], ...]
    score_gap: float
    locally_optimal: bool
    is_gmm: bool
    gap: Fraction | None = None
    decision: str = "exact"

    @property
    def feasible(self) -> bool:
        return self.result.ok

    @property
    def certified(self) -> bool:
        return self.certificate.verified and self.decision == "exact"

    @property
    def p_mm(self) -> np.ndarray | None:
        return self.result.solution

    def to_json(self, max_exact_chars: int = 20_000) -> dict:
        """JSON-safe: no inf or nan (a missing gap is null, with the reason in `score_gap_exact`);
        the exact p_mm is omitted (null, `p_mm_exact_omitted` says its size) past max_exact_chars."""
        exact = None
        omitted = None
        if self.certificate.kind == "kkt" and self.certified:
            size = self.certificate.x_size()
            if size > max_exact_chars:
                omitted = f"about {size} characters as fractions"
            else:
                exact = [str(q) for q in self.certificate.x]
        gap_exact = (_text(self.gap) if self.gap is not None else
                     "none: no SVM-neighbours" if self.feasible else "none: infeasible")
        undecided = self.decision == "uncertain"        # never 'infeasible' (nor feasible) without a proof
        why = {"undecided_because": self.certificate.reason or self.result.message,
               "numeric_status": self.result.status} if undecided else {}
        return {"alpha": list(self.alpha), "feasible": None if undecided else self.feasible,
                "status": "undecided" if undecided else self.result.status, **why,
                "p_mm": None if self.p_mm is None else self.p_mm.tolist(),
                "p_mm_exact": exact, **({"p_mm_exact_omitted": omitted} if omitted else {}),
                "neighbors": [list(t) for t in self.neighbors],
                "score_gap": self.score_gap if math.isfinite(self.score_gap) else None, "score_gap_exact": gap_exact,
                "locally_optimal": self.locally_optimal, "is_gmm": self.is_gmm, "certified": self.certified,
                "decision": self.decision}


def _text(q: Fraction) -> str:
    """q as 'p/q', or its size where Python will not print integers that long (MAX_DIGITS)."""
    try:
        return str(q)
    except ValueError:
        return f"a fraction of about {int((q.numerator.bit_length() + q.denominator.bit_length()) * 0.302)} digits"


def _float(q: Fraction) -> float:
    try:
        return float(q)
    except OverflowError:
        return math.inf if q > 0 else -math.inf


def _classify(ds: Dataset, alpha: tuple, res: SVMResult, cert: Certificate, rows, decision: str) -> Selection:
    """Definition 2 from the active rows `rows` of a feasible result (exact scores)."""
    is_opt = model.strict_optimality(ds) and tuple(model.optimal_tokens(ds)) == alpha
    if not res.ok:
        return Selection(alpha, res, cert, tuple(() for _ in alpha), float("nan"), False, False, None, decision)
    gam = model.exact_scores(ds)
    nb = [[] for _ in alpha]
    for j in rows:
        i, t = res.problem.tags[j]
        nb[i].append(t)
    gaps = [gam[i][alpha[i]] - gam[i][t] for i in range(len(alpha)) for t in nb[i]]
    gap = min(gaps) if gaps else None
    fgap = _float(gap) if gap is not None else float("inf")
    return Selection(alpha, res, cert, tuple(tuple(sorted(x)) for x in nb), fgap, gap is None or gap > 0, is_opt,
                     gap, decision)


def select(ds: Dataset, alpha: Sequence[int], solver: str = "quadprog", exact: bool = True) -> Selection:
    """Solve (ATT-SVM) for alpha, certify it (unless exact=False: numeric answer only, with
    certified=False), and classify alpha (Definition 2). A certificate that does not verify is
    re-examined once with the other solver (cvxpy / quadprog) before the answer is 'uncertain'.
    Memoized on the dataset: a hypothesis and a conclusion share one certificate."""
    alpha = tuple(int(a) for a in alpha)
    return ds.memo(("select", alpha, solver, exact), lambda: _select(ds, alpha, solver, exact))


def _select(ds: Dataset, alpha: tuple[int, ...], solver: str, exact: bool) -> Selection:
    if exact:                                   # small problems: the exact solve is the fastest exact answer
        problem = att_svm_problem(ds, alpha)
        if problem.A.size <= SMALL_ENTRIES:
            decided = solve_exact(problem)
            if decided is not None and decided[0].status != "error":
                return _classify(ds, alpha, decided[0], decided[1], decided[1].active, "exact")
    res = att_svm(ds, alpha, solver)
    if not exact:
        decision = "numeric" if robust_non_lmm(ds, alpha, res) else "uncertain"
        return _classify(ds, alpha, res, Certificate("none", False, "not requested"), res.active, decision)
    cert = certify(res)
    if not cert.verified and res.problem.A.size <= 200_000:
        other = att_svm(ds, alpha, "cvxpy" if solver == "quadprog" else "quadprog")
        other_cert = certify(other)
        if other_cert.verified:
            res, cert = other, other_cert
    if not cert.verified:                   # scales float64 cannot hold together: decide in exact arithmetic
        decided = solve_exact(res.problem)
        if decided is not None:
            res, cert = decided
        else:
            cert = Certificate(cert.kind, False, f"{cert.reason}; the exact solve is out of reach (over "
                               f"{EXACT_ENTRIES} row entries, or past its work bound)")
    if cert.verified and res.status != "error":
        return _classify(ds, alpha, res, cert, cert.active, "exact")
    return _classify(ds, alpha, res, cert, res.active, "uncertain")


def robust_non_lmm(ds: Dataset, alpha: Sequence[int], res: SVMResult) -> bool:
    """The numeric answer settles that alpha is not locally optimal beyond solver error: optimal,
    KKT residual small, every row either clearly inactive (unit-scale slack > ROBUST) or clearly
    active with a clearly positive dual, and some clearly active row has an exact score gap
    <= 0. (Infeasibility is never screened: it takes a Farkas certificate.)"""
    if not res.ok or res.slack is None or res.kkt_residual > 1e-8:
        return False
    mu = res.duals_unit
    top = float(mu.max()) if mu.size else 0.0
    clear_active = np.isin(np.arange(len(mu)), res.active) & (mu > ROBUST * top)
    clear_inactive = res.slack > ROBUST
    if top <= 0 or not np.all(clear_active | clear_inactive):
        return False
    gam = model.exact_scores(ds)
    return any(gam[i][alpha[i]] <= gam[i][t] for i, t in (res.problem.tags[j] for j in np.flatnonzero(clear_active)))


def svm_neighbors(ds: Dataset, alpha: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """T_i = {t != alpha_i : (k_{i,alpha_i} - k_it)^T p_mm = 1} for each input i."""
    return select(ds, alpha).neighbors


def locally_optimal(ds: Dataset, alpha: Sequence[int]) -> bool:
    """Definition 2: feasible and gamma_{i,alpha_i} > gamma_it for all t in T_i."""
    return select(ds, alpha).locally_optimal


def gmm(ds: Dataset) -> Selection:
    """p_mm(opt): the global max-margin direction (needs strict optimality to be the GMM)."""
    return select(ds, model.optimal_tokens(ds))


def candidate_alphas(ds: Dataset, limit: int = 4096,
                     rng: np.random.Generator | None = None) -> Iterator[tuple[int, ...]]:
    """Every alpha in [T]^n when T^n <= limit, else `limit` distinct random ones (seeded), the
    optimal tokens first."""
    if exhaustive(ds, limit):
        yield from itertools.product(range(ds.T), repeat=ds.n)
        return
    rng = rng or np.random.default_rng(0)
    seen = {tuple(int(a) for a in model.optimal_tokens(ds))}
    yield next(iter(seen))
    while len(seen) < limit:
        a = tuple(int(x) for x in rng.integers(0, ds.T, ds.n))
        if a not in seen:
            seen.add(a)
            yield a


@dataclass(eq=False)
class Search:
    """An LMM search over [T]^n: the selections decided, what was covered and how."""

    selections: list[Selection] = field(default_factory=list)
    space: str = ""                 # "T^n"
    exhaustive: bool = False        # all of [T]^n was enumerated (not sampled, not cut short)
    sampled: bool = False
    stopped: str = ""               # why the search ended early ("" when it ran to its end)
    seconds: float = 0.0

    @property
    def lmms(self) -> list[Selection]:
        return [s for s in self.selections if s.locally_optimal]

    def count(self, decision: str) -> int:
        return sum(s.decision == decision for s in self.selections)

    @property
    def exact(self) -> bool:
        """The LMM set is exact: every candidate of [T]^n decided by a certificate."""
        return self.exhaustive and self.count("exact") == len(self.selections)

    def why_not_exact(self) -> str | None:
        if self.exact:
            return None
        bits = []
        if self.sampled:
            bits.append(f"sampled {len(self.selections)} of {self.space} selections, not exhaustive")
        elif not self.exhaustive:
            bits.append(f"covered {len(self.selections)} of {self.space} selections ({self.stopped})")
        if self.count("numeric"):
            bits.append(f"{self.count('numeric')} screened numerically")
        if self.count("uncertain"):
            bits.append(f"{self.count('uncertain')} undecided (no certificate verified)")
        return "; ".join(bits)

    def summary(self) -> str:
        """One line: how the LMM set was found and whether it is exact."""
        head = (f"all {self.space} selections" if self.exhaustive else
                f"sampled {len(self.selections)} of {self.space} selections" if self.sampled else
                f"{len(self.selections)} of {self.space} selections")
        tail = "" if not self.stopped else f", stopped by {self.stopped}"
        return (f"LMM set exact ({head}, each decided by a certificate)" if self.exact else
                f"LMM set NOT exact: {self.why_not_exact()}{tail}")


def search(ds: Dataset, limit: int = 4096, rng: np.random.Generator | None = None, seconds: float | None = None,
           screen: bool | None = None, known: Sequence[Selection] = (),
           progress: Callable[[int, int], None] | None = None) -> Search:
    """Decide every candidate of `candidate_alphas` (all of [T]^n when T^n <= limit, else a
    sample of `limit`), stopping after `seconds`. screen: skip the certificate of candidates
    whose numeric answer is robustly 'not an LMM' (default: only when sampling, where the set
    cannot be exact anyway). `known` selections are reused; progress(done, planned) is called
    after each candidate."""
    total = ds.T ** ds.n
    full = exhaustive(ds, limit)
    screen = (not full) if screen is None else screen
    planned = total if full else limit
    cache = {s.alpha: s for s in known}
    out = Search(space=f"{ds.T}^{ds.n}", sampled=not full)
    t0 = time.perf_counter()
    for a in candidate_alphas(ds, limit, rng):
        if seconds is not None and time.perf_counter() - t0 > seconds:
            out.stopped = f"time limit ({seconds:g} s)"
            break
        s = cache.get(a)
        if s is None:
            s = select(ds, a, exact=False) if screen else None
            if s is None or s.decision != "numeric":
                s = select(ds, a)
        out.selections.append(s)
        if progress:
            progress(len(out.selections), planned)
    out.exhaustive = full and not out.stopped
    out.seconds = time.perf_counter() - t0
    return out


def selections(ds: Dataset, limit: int = 4096, rng: np.random.Generator | None = None) -> Iterator[Selection]:
    """Every candidate alpha (exhaustive when T^n <= limit, else sampled), each decided by an
    exact certificate where one verifies (`select`)."""
    for a in candidate_alphas(ds, limit, rng):
        yield select(ds, a)


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
