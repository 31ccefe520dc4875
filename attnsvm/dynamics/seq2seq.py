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
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

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
    def of(cls, ds: Dataset, labels: Sequence[Sequence[int]], causal: bool) -> "SeqData":
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
        base = [[sum((X[i, t][c] * v[c] for c in range(self.d)), Fraction(0)) for t in range(self.T)] for i in range(self.n)]
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
        eA = np.array([[(eX[i, alpha[i, k]][a] - eX[i, t][a]) * eX[i, k][b] for a in range(self.d) for b in range(self.d)]
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
                rows.append([(eX[i, t][a] - eX[i, vis[0]][a]) * eX[i, k][b] for a in range(self.d) for b in range(self.d)])
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


def solved(prob: MarginProblem) -> tuple[np.ndarray | None, str]:
    """(the solution as a flat float vector, or None when infeasible / not certified by an exact
    KKT certificate; the status)."""
    from attnsvm.svm import certificates, margin

    res = margin.solve(prob)
    cert = certificates.certify(res)
    if res.ok and cert.verified and cert.kind == "kkt":
        return np.array([float(q) for q in cert.x]), "optimal"
    return None, res.status if cert.verified else f"{res.status}, certificate not verified"


def rows_needed(S: SeqData) -> int:
    """The number of difference rows: one per visible token after the first, per query."""
    return sum(len(S.visible(k)) - 1 for _, k in S.queries("all"))
