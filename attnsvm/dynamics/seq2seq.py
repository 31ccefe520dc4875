"""Sequence-to-sequence and causal self-attention (Transformers as SVMs, Section 7; docs/statements.md#tfsvm-seq2seq).
The formulas are our reconstruction: the summary in papers/ names the setting, not its
equations.

Every token x_ik of input i is a query: output k is f_k(X_i) = v^T X_i^T S(X_i W x_ik), over all T
tokens (sequence-to-sequence) or over the tokens t <= k only (causal), with a label Y_ik per
query and the risk L(W) = mean_{i,k} loss(Y_ik f_k(X_i)). Scores gamma_ikt = Y_ik v^T x_it. The
max-margin problem has one block of constraints per query:

    W_mm(alpha) = argmin ||W||_F  s.t.  (x_{i,alpha_ik} - x_it)^T W x_ik >= 1
                  for all i, k and t != alpha_ik (t <= k and alpha_ik <= k when causal).

The risk is the core linear-head risk of n T "inputs" (i, k) with keys vec(x_it x_ik^T) in
dimension d^2 (`problem`, a `dynamics.Problem`, so every rule and the regularization path run
on it with the cancellation-free gradient). Causal masking is exact: query k's k + 1 visible
tokens are each repeated T'/(k + 1) times, T' = lcm(1..T), and a softmax is unchanged when every
token is repeated equally often. The SVMs are built from the distinct visible tokens only, with
exact rows (`svm_problem`). Indices are 0-based: query k sees tokens 0..k.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import torch

from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.attention.losses import Loss, get_loss
from attnsvm.dynamics.problem import Problem, default_device
from attnsvm.svm.margin import MarginProblem

QUERIES = ("all", "first", "last")


@dataclass(frozen=True, eq=False)
class SeqData:
    """A dataset's tokens X (n, T, d) and head v, per-query labels Y (n, T) in {-1, +1}, and the
    mask (`causal`)."""

    ds: Dataset
    labels: np.ndarray
    causal: bool

    @classmethod
    def of(cls, ds: Dataset, labels: Sequence[Sequence[int]], causal: bool) -> SeqData:
        Y = np.asarray(labels, dtype=np.int64)
        if Y.shape != (ds.n, ds.T) or not np.all(np.abs(Y) == 1):
            raise ValueError(f"labels: expected an n x T = {ds.n} x {ds.T} array of +-1, got {Y.tolist()}")
        return cls(ds, Y, causal)

    @property
    def n(self) -> int:
        return self.ds.n

    @property
    def T(self) -> int:
        return self.ds.T

    @property
    def d(self) -> int:
        return self.ds.d

    def visible(self, k: int) -> range:
        """The tokens query k attends to."""
        return range(k + 1) if self.causal else range(self.T)

    def queries(self, which: str = "all") -> list[tuple[int, int]]:
        """(i, k) of the queries whose constraints a problem keeps: 'all' (every query with two or
        more visible tokens), 'first' (k = 0: the single-query self-attention of z_i = x_i1) or
        'last' (k = T - 1: the query that sees every token)."""
        ks = {"all": range(self.T), "first": [0], "last": [self.T - 1]}[which]
        return [(i, k) for i in range(self.n) for k in ks if len(self.visible(k)) >= 2]

    def exact_scores(self) -> np.ndarray:
        """gamma_ikt = Y_ik v^T x_it exactly (n, T, T) (Fractions)."""
        X, v = self.ds.exact["X"], self.ds.exact["v"]
        base = [[sum((X[i, t][c] * v[c] for c in range(self.d)), Fraction(0)) for t in range(self.T)]
                for i in range(self.n)]
        return np.array([[[int(self.labels[i, k]) * base[i][t] for t in range(self.T)] for k in range(self.T)]
                         for i in range(self.n)], dtype=object)

    def scores(self) -> np.ndarray:
        g = np.einsum("ntd,d->nt", self.ds.X, self.ds.v)
        return self.labels[:, :, None] * g[:, None, :]

    def optimal(self) -> np.ndarray:
        """alpha_ik = the first visible token of largest exact score (n, T)."""
        g = self.exact_scores()
        return np.array([[max(self.visible(k), key=lambda t: (g[i, k, t], -t)) for k in range(self.T)]
                         for i in range(self.n)])

    def strict_optimality(self) -> bool:
        """Every query's top visible score is attained once (exact)."""
        g = self.exact_scores()
        for i in range(self.n):
            for k in range(self.T):
                top = max(g[i, k, t] for t in self.visible(k))
                if len(self.visible(k)) >= 2 and sum(g[i, k, t] == top for t in self.visible(k)) > 1:
                    return False
        return True

    # ---- the risk ------------------------------------------------------------------------
    @property
    def padded(self) -> int:
        """T' tokens per (i, k) input of the risk: lcm(1..T) when causal, else T."""
        return math.lcm(*range(1, self.T + 1)) if self.causal else self.T

    def token_map(self) -> np.ndarray:
        """(T, T') the real token at each slot of query k's padded input."""
        Tp = self.padded
        return np.array([[list(self.visible(k))[s * len(self.visible(k)) // Tp] for s in range(Tp)]
                         for k in range(self.T)])

    def problem(self, loss: Loss | str = "logistic", batch: int = 1, device=None) -> Problem:
        """The risk as a `dynamics.Problem` on p = vec(W) (row-major), `batch` copies."""
        device = device or default_device()
        X, m = self.ds.X, self.token_map()
        toks = X[:, m]                                                      # (n, T, T', d): query k's slots
        keys = np.einsum("nksd,nke->nksde", toks, X).reshape(self.n * self.T, self.padded, self.d * self.d)
        g = self.scores()                                                   # (n, T, T)
        gamma = np.take_along_axis(g, np.broadcast_to(m, (self.n, self.T, self.padded)), axis=2)
        K = model.t(keys, device)[None].expand(batch, -1, -1, -1).contiguous()
        G = model.t(gamma.reshape(self.n * self.T, self.padded), device)[None].expand(batch, -1, -1).contiguous()
        return Problem(K, G, get_loss(loss))

    def logits(self, W) -> np.ndarray:
        """a_ikt = x_it^T W x_ik (n, T, T), -inf on tokens query k does not see."""
        W = np.asarray(W, dtype=np.float64).reshape(self.d, self.d)
        a = np.einsum("ntd,de,nke->nkt", self.ds.X, W, self.ds.X)
        if self.causal:
            a = np.where(np.tril(np.ones((self.T, self.T), bool))[None], a, -np.inf)
        return a

    def selected(self, W) -> np.ndarray:
        """alpha_ik = argmax of query k's visible logits (n, T)."""
        return self.logits(W).argmax(-1)

    def log_unselected_mass(self, W) -> float:
        """max over queries of log(1 - s_{ik, alpha_ik}) at W (log-sum-exp, exact at saturation)."""
        a = self.logits(W)
        top = a.max(-1, keepdims=True)
        sel = a == top
        rest = np.where(sel, -np.inf, a - top)
        with np.errstate(divide="ignore"):
            off = np.logaddexp.reduce(rest, axis=-1) - np.logaddexp.reduce(a - top, axis=-1)
        ks = [k for k in range(self.T) if len(self.visible(k)) >= 2]
        return float(off[:, ks].max())

    # ---- the SVMs --------------------------------------------------------------------------
    def svm_problem(self, alpha, which: str = "all") -> MarginProblem:
        """The max-margin problem of the module docstring for alpha (n, T), over the queries
        `which` ('all': one block per query; 'first' / 'last': a single query per input), with
        exact rows; the solution's shape is (d, d)."""
        alpha = np.asarray(alpha)
        eX = self.ds.exact["X"]
        tags = [(i, k, t) for i, k in self.queries(which) for t in self.visible(k) if t != alpha[i, k]]
        eA = np.array([[(eX[i, alpha[i, k]][a] - eX[i, t][a]) * eX[i, k][b]
                        for a in range(self.d) for b in range(self.d)]
                       for i, k, t in tags], dtype=object).reshape(len(tags), self.d * self.d)
        A = np.array([[float(q) for q in r] for r in eA]).reshape(len(tags), self.d * self.d)
        return MarginProblem(A, tuple(tags), eA, (self.d, self.d), f"seq-SVM({which}, causal={self.causal})")

    def difference_rows(self) -> list[list[Fraction]]:
        """vec((x_it - x_{i,r_k}) x_ik^T) for every query (i, k) with two or more visible tokens,
        r_k its first visible token and t its other visible tokens (exact). Full row rank means
        every logit difference is reachable: every alpha is feasible."""
        eX = self.ds.exact["X"]
        rows = []
        for i, k in self.queries("all"):
            vis = list(self.visible(k))
            for t in vis[1:]:
                rows.append([(eX[i, t][a] - eX[i, vis[0]][a]) * eX[i, k][b]
                             for a in range(self.d) for b in range(self.d)])
        return rows


def exact_rank(rows: list[list[Fraction]]) -> int:
    """Rank of a rational matrix (FLINT, exact)."""
    import flint

    if not rows:
        return 0
    return flint.fmpq_mat([[flint.fmpq(q.numerator, q.denominator) for q in r] for r in rows]).rank()


def target_problem(S: SeqData, alpha, which: str) -> MarginProblem:
    """The margin problem a statement predicts with: 'seq' / 'causal' one block per query (S's
    mask), 'single' one query per input (the first, or causal the last: the one that sees every
    token), 'full' every token visible (a causal run against the unmasked problem)."""
    if which == "single":
        return S.svm_problem(alpha, "last" if S.causal else "first")
    if which == "full":
        return SeqData(S.ds, S.labels, False).svm_problem(alpha, "all")
    return S.svm_problem(alpha, "all")


def certified(prob: MarginProblem) -> tuple[np.ndarray | None, str, list]:
    """(the solution as a flat float vector, or None when infeasible / not certified by an exact
    KKT certificate; the status; the tags of its exactly active rows)."""
    from attnsvm.svm import certificates, margin

    res = margin.solve(prob)
    cert = certificates.certify(res)
    if res.ok and cert.verified and cert.kind == "kkt":
        return np.array([float(q) for q in cert.x]), "optimal", [prob.tags[j] for j in cert.active]
    return None, res.status if cert.verified else f"{res.status}, certificate not verified", []


def solved(prob: MarginProblem) -> tuple[np.ndarray | None, str]:
    """`certified` without the active rows."""
    return certified(prob)[:2]


def rows_needed(S: SeqData) -> int:
    """The number of difference rows: one per visible token after the first, per query."""
    return sum(len(S.visible(k)) - 1 for _, k in S.queries("all"))


# ---- the checks' proxies, batched (each check passes its own constants) ------------------------

def of(inst, causal: bool) -> SeqData:
    """The sequence data of an instance (params 'labels')."""
    return SeqData.of(inst.dataset, inst.params["labels"], causal)


def certified_svm(inst, causal: bool, alpha, which: str) -> tuple[np.ndarray | None, str]:
    """`_certified` without the active rows."""
    x, status, _ = _certified(inst, causal, alpha, which)
    return x, status


def _certified(inst, causal: bool, alpha, which: str) -> tuple[np.ndarray | None, str, list]:
    """`certified(target_problem(...))`: (solution, status, active row tags), once per dataset,
    labels, mask, alpha and problem."""
    alpha = np.asarray(alpha)
    return inst.dataset.memo(f"seq_svm{causal}{which}{inst.params['labels']}{alpha.tolist()}",
                             lambda: certified(target_problem(of(inst, causal), alpha, which)))


def local_optimality(inst, causal: bool, alpha) -> tuple[bool | None, str]:
    """Definition 2 for the statement's own per-query SVM (S's mask, every query), exactly: alpha is
    locally optimal when W_mm(alpha) exists (exact KKT certificate) and every SVM-neighbour t of
    query (i, k) (an exactly active row) scores below alpha_ik: gamma_ik,alpha_ik > gamma_ikt. Only
    such directions are limits of the risk (the core Theorem 4 for the n T inputs (i, k)): a run
    selecting a non-locally-optimal alpha is passing it. Returns (True / False, or None when the
    SVM is not certified; the reason it is not locally optimal)."""
    alpha = np.asarray(alpha)
    x, status, active = _certified(inst, causal, alpha, "causal" if causal else "seq")
    if x is None:
        return (False, "its per-query SVM is infeasible") if status == "infeasible" else \
            (None, f"its per-query SVM is {status}")
    g = of(inst, causal).exact_scores()
    higher = [(i, k, t) for i, k, t in active if g[i, k, t] >= g[i, k, alpha[i, k]]]
    if higher:
        i, k, t = higher[0]
        return False, f"SVM-neighbour {t} of query ({i}, {k}) scores at least alpha's {int(alpha[i, k])}"
    return True, ""


def stacked(seqs: Sequence[SeqData], loss: Loss | str = "logistic", copies: int = 1) -> Problem:
    """The risks of sequence data of one shape and mask as one batch (`copies` rows each, in order)."""
    probs = [S.problem(loss) for S in seqs]
    K = torch.cat([p.K for p in probs]).repeat_interleave(copies, dim=0)
    G = torch.cat([p.gamma for p in probs]).repeat_interleave(copies, dim=0)
    return Problem(K, G, get_loss(loss))


def _row(steps, k: int) -> int:
    return min(range(len(steps)), key=lambda r: abs(steps[r] - steps[-1] / k))


def gd_reports(insts, budget, causal: bool, eta: float, steps: int, init: float,
               fall: float = math.log(2)) -> list[list[dict]]:
    """Per instance, one report per start (params 'starts', 'seed': inits N(0, init^2) from the
    instance's seed) of normalized GD (step eta, steps x horizon iterations) on its sequence risk,
    in the form `dynamics.wlimits.judge` reads: selected tokens alpha_H, the mass left off them,
    the run's status, the predicting SVM's status (params 'svm', exact KKT certificate) and
    gap = 1 - corr(W, W_mm(alpha_H)) at H, H/2, H/4, and whether alpha_H is locally optimal for the
    statement's own per-query SVM (`local_optimality`). `transit` says why a start is not at a limit
    W_mm(alpha_H) can predict, so that a gap above tolerance there is a transient, never a failure:
    alpha_H not locally optimal (no run ends at it), or the log unselected mass fell by less than
    `fall` over the last octave (a saturating run's falls like -||W||, which NGD doubles: one that
    does not is held by finite logit gaps, at a finite-norm stationary point of the risk or a limit
    mixing tokens, and selects nothing in the limit). Instances of one shape run as one batch."""
    from attnsvm import dynamics
    from attnsvm.dynamics.wlimits import grouped

    H = int(steps * budget.horizon)

    def run(ks):
        group = [insts[k] for k in ks]
        seqs = [of(inst, causal) for inst in group]
        starts = group[0].params["starts"]
        p0 = np.concatenate([np.random.default_rng(inst.params["seed"]).normal(scale=init, size=(starts, S.d * S.d))
                             for inst, S in zip(group, seqs)])
        tr = dynamics.run(stacked(seqs, "logistic", starts), dynamics.NormalizedGD(eta), p0, H, every=max(1, H // 4))
        out = []
        for j, (inst, S) in enumerate(zip(group, seqs)):
            reps = []
            for b in range(j * starts, (j + 1) * starts):
                W = tr.final[b].cpu().numpy()
                alpha = S.selected(W)
                lum = S.log_unselected_mass(W)
                lum_half = S.log_unselected_mass(tr.p[_row(tr.steps, 2), b].cpu().numpy())
                rep = {"alpha": alpha.tolist(), "is_opt": bool((alpha == S.optimal()).all()), "horizon": tr.steps[-1],
                       "log_unselected_mass": lum, "log_unselected_mass_half": lum_half, "run_status": tr.status[b]}
                lo, why = local_optimality(inst, causal, alpha)
                rep["locally_optimal"] = lo
                if not lo:
                    rep["transit"] = (f"selection {alpha.tolist()} not locally optimal ({why})" if lo is False else
                                      f"local optimality of {alpha.tolist()} undecided ({why})")
                elif not lum <= lum_half - fall:
                    rep["transit"] = (f"log unselected mass {lum:.3g} at H, {lum_half:.3g} at H/2: not saturating "
                                      "(finite logit gaps hold the selection)")
                x, status = certified_svm(inst, causal, alpha, inst.params["svm"])
                rep["status"] = status
                if x is not None:
                    for key, k in (("", 1), ("_half", 2), ("_quarter", 4)):
                        w = tr.p[_row(tr.steps, k), b].cpu().numpy()
                        rep["gap" + key] = 1 - float(w @ x / (np.linalg.norm(w) * np.linalg.norm(x)))
                    rep["w_mm"] = x.tolist()
                reps.append(rep)
            out.append(reps)
        return out

    return grouped([(i.dataset.n, i.dataset.T, i.dataset.d, i.params["starts"]) for i in insts], run)


def paths(insts, budget, causal: bool, grid: int, iters: int) -> list[dict]:
    """Per instance, the regularization path W(R) = argmin_{||W||_F <= R} L(W) of its sequence risk
    on R = 2^k ||W_mm(opt)|| (k < grid, one more per doubling of the horizon), started from
    W_mm(opt) of the predicting SVM (params 'svm'), the per-query and single-query SVMs' directions
    and two seeded random directions; all instances of one shape solved together
    (`dynamics.paths.linear_paths`). Returns per instance {'w_mm', 'solved'} or {'status'} when the
    predicting SVM for opt is not certified."""
    from attnsvm.dynamics import paths as P

    out: list[dict] = [{} for _ in insts]
    jobs, radii, starts = [], [], []
    mult = 2.0 ** np.arange(P.grid_size(grid, budget))
    for k, inst in enumerate(insts):
        S = of(inst, causal)
        opt = S.optimal()
        q, status = certified_svm(inst, causal, opt, inst.params["svm"])
        if q is None:
            out[k] = {"status": status}
            continue
        own, _ = certified_svm(inst, causal, opt, "causal" if causal else "seq")
        single, _ = certified_svm(inst, causal, opt, "single")
        rng = np.random.default_rng(inst.params["seed"])
        jobs.append(k)
        radii.append(float(np.linalg.norm(q)) * mult)
        starts.append(np.array([x for x in (q, own, single) if x is not None] + list(rng.normal(size=(2, S.d * S.d)))))
        out[k] = {"w_mm": q, "mult": mult}
    solved_paths = P.linear_paths([of(insts[k], causal) for k in jobs], ["logistic"] * len(jobs), radii, starts, iters,
                                  build=lambda group, loss: stacked(group, loss))
    for k, s in zip(jobs, solved_paths):
        out[k]["solved"] = s
    return out


def feasible_for_every_alpha(inst, causal: bool, max_alphas: int):
    """Part feasibility: W_mm(alpha) exists for every alpha, decided exactly: full row rank of the
    difference rows (every logit difference reachable), else alphas are searched (all when at most
    `max_alphas`, else a seeded sample) for an exact Farkas certificate of infeasibility. Returns
    (holds True/False/None, certified, detail, reason)."""
    import itertools

    from attnsvm.svm import certificates, margin

    S = of(inst, causal)
    rows = S.difference_rows()
    rank = exact_rank(rows)
    detail = {"rows": len(rows), "rank": rank, "d_squared": S.d * S.d}
    if rank == len(rows):
        return True, True, detail, ""
    per = [list(S.visible(k)) for k in range(S.T)]
    choices = [(i, k) for i in range(S.n) for k in range(S.T) if len(per[k]) >= 2]
    total = math.prod(len(per[k]) for _, k in choices)
    rng = np.random.default_rng(inst.params["seed"])
    picks = itertools.product(*[per[k] for _, k in choices]) if total <= max_alphas else \
        (tuple(int(rng.choice(per[k])) for _, k in choices) for _ in range(max_alphas))
    for pick in picks:
        alpha = np.zeros((S.n, S.T), dtype=int)
        for (i, k), t in zip(choices, pick):
            alpha[i, k] = t
        res = margin.solve(target_problem(S, alpha, inst.params["svm"]))
        cert = certificates.certify(res)
        if not cert.verified:
            return None, False, {**detail, "alpha": alpha.tolist()}, \
                f"alpha {alpha.tolist()}: {res.status}, certificate not verified ({cert.reason})"
        if cert.kind == "farkas":
            return False, True, {**detail, "infeasible_alpha": alpha.tolist(), "farkas": [str(q) for q in cert.lam]}, ""
    if total <= max_alphas:
        return True, True, {**detail, "alphas_checked": total}, ""
    return None, False, detail, f"rank {rank} < {len(rows)} rows and no infeasible alpha among {max_alphas} sampled"


@dataclass(frozen=True)
class Proxy:
    """A sequence check's finite-horizon proxy and tolerances (each check keeps its own). Part gd:
    normalized GD (step `eta`, `steps` x horizon iterations, inits of scale `init`) judged by
    `dynamics.wlimits.judge` (`tol`, saturation `sat`, `plateau`, `rise`); part path: `grid` radii
    (one more per horizon doubling), `iters` solver iterations, holds when 1 - corr at the largest
    radius is <= `path_tol` and non-increasing over the last `last` radii, fails on a plateau there
    (decrease below `path_plateau`, relative); part feasibility: at most `max_alphas` alphas searched.
    A gd start counts as at a limit only when its selection is locally optimal and its log unselected
    mass fell by at least `fall` over the last octave (`gd_reports`); else a gap above `tol` is a
    transient (undecided)."""

    eta: float = 0.25
    steps: int = 400
    init: float = 0.1
    sat: float = 1e-3
    tol: float = 0.01
    plateau: float = 1e-3
    rise: float = 0.1
    path_tol: float = 1e-2
    grid: int = 6
    iters: int = 300
    last: int = 3
    path_plateau: float = 1e-3
    max_alphas: int = 64
    fall: float = math.log(2)

    def tolerances(self) -> dict:
        return {"gap": self.tol, "saturation": self.sat, "plateau": self.plateau, "rise": self.rise,
                "path_gap": self.path_tol, "path_plateau": self.path_plateau, "mass_fall": self.fall}


def conclude(insts, budget, causal: bool, proxy: Proxy) -> list:
    """The outcome of each instance's part (params 'part': 'gd', 'path' or 'feasibility'), batched."""
    from attnsvm.claims.claim import Outcome
    from attnsvm.dynamics import paths as P
    from attnsvm.dynamics.trends import loglog_slope
    from attnsvm.dynamics.wlimits import judge

    out: list = [None] * len(insts)
    by_part: dict[str, list[int]] = {}
    for k, inst in enumerate(insts):
        by_part.setdefault(inst.params["part"], []).append(k)
    gd = by_part.get("gd", [])
    for k, reps in zip(gd, gd_reports([insts[k] for k in gd], budget, causal, proxy.eta, proxy.steps, proxy.init,
                                                  proxy.fall)):
        out[k] = judge(reps, "gap", proxy.tol, proxy.sat, proxy.plateau, proxy.rise)
    path = by_part.get("path", [])
    for k, res in zip(path, paths([insts[k] for k in path], budget, causal, proxy.grid, proxy.iters)):
        if "solved" not in res:
            out[k] = Outcome(None, reason=f"the predicted SVM for opt is {res['status']}")
            continue
        sol, q, mult = res["solved"], res["w_mm"], res["mult"]
        gaps = P.gaps_to(sol.p, q)
        G = len(gaps)
        tail = slice(G - proxy.last, G)
        final = sol.p[-1]
        S = of(insts[k], causal)
        detail = {"w_mm": q.tolist(), "R_over_norm_w_mm": mult.tolist(), "gap": gaps, "final_gap": gaps[-1],
                  "status": sol.status, "final_direction": sol.unit(),
                  "selected_at_largest": S.selected(final).tolist(),
                  "loglog_slope_last": loglog_slope(mult[tail], gaps[tail])}
        last = gaps[tail]
        if not all(sol.settled()[tail]):
            out[k] = Outcome(None, detail=detail, reason="path solve did not settle on the last radii")
        elif last[-1] <= proxy.path_tol and P.monotone(last):
            out[k] = Outcome(True, detail=detail)
        elif P.plateau(last, proxy.path_tol, proxy.path_plateau):
            out[k] = Outcome(False, detail=detail)
        else:
            out[k] = Outcome(None, detail=detail, reason="gap above tolerance but still decreasing "
                                                         "at the largest radius")
    for k in by_part.get("feasibility", []):
        holds, certified, detail, reason = feasible_for_every_alpha(insts[k], causal, proxy.max_alphas)
        out[k] = Outcome(holds, certified=certified, detail=detail, reason=reason)
    for k, inst in enumerate(insts):
        out[k].detail["part"] = inst.params["part"]
    return out


def describe(proxy: Proxy) -> str:
    """The proxy in words, for a claim's report."""
    return (f"gd: NGD (eta {proxy.eta}, {proxy.steps} x horizon steps, seeded inits of scale {proxy.init}), saturated "
            f"starts (1 - max softmax < {proxy.sat} on every query): 1 - corr(W_H, W_mm(alpha_H)) <= {proxy.tol}; a "
            f"larger gap refutes only on a start at a limit (alpha_H locally optimal for the per-query SVM, exactly, "
            f"and the log unselected mass fallen by at least {proxy.fall:.3g} over the last octave; else a transient) "
            f"if its Aitken limit from H/4, H/2, H exceeds {proxy.tol} (a gap risen by more than {proxy.rise} "
            f"(relative) over the last octave is undecided), again at the confirming horizons. path: regpath on "
            f"R = 2^k ||W_mm(opt)||, k < {proxy.grid} (+1 per horizon doubling), 1 - corr <= {proxy.path_tol} at the "
            f"largest R and non-increasing over the last {proxy.last}; a plateau above refutes. feasibility: exact "
            "rank of the difference rows, else an exact Farkas certificate for some alpha (at most "
            f"{proxy.max_alphas} searched)")


def make_claim(name: str, causal: bool, statement: str, proxy: Proxy, parts, evaluations: int, confirm, extend):
    """A sequence check's claim from its own constants: hypotheses from the registry (`name`), the
    batched conclusion `conclude(..., causal, proxy)`, instances `claims.gaussian.sequences(parts)`."""
    from attnsvm.claims import Claim, batched, gaussian
    from attnsvm.claims import hypotheses as hyp

    @batched
    def conclusion(insts, budget):
        return conclude(insts, budget, causal, proxy)

    return Claim(name=name, evaluations=evaluations, statement=statement, hypotheses=hyp.of(name),
                 conclusion=conclusion,
                 instances=lambda dropped: gaussian.sequences(parts, svm="causal" if causal else "seq"),
                 proxy=describe(proxy), measures=("worst_gap", "final_gap", "rank", "rows"),
                 horizon=f"{proxy.steps} x horizon NGD steps; {proxy.grid} radii",
                 tolerance=f"gd {proxy.tol}, path {proxy.path_tol}", confirm=tuple(confirm), extend=tuple(extend),
                 tolerances=proxy.tolerances())
