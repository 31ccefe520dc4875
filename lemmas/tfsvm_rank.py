"""Transformers as SVMs, claim 5 (SPEC.md B): rank(W_mm) <= n.

KKT stationarity of the Frobenius (Att-SVM) gives W_mm = sum_{i,t} lambda_it (x_{i,alpha_i} - x_it) z_i^T
= sum_i u_i z_i^T = U Z with U = [u_1 .. u_n] (d x n), u_i = sum_t lambda_it (x_{i,alpha_i} - x_it),
and Z the n x d matrix of queries: a product through an n-dimensional space, so rank <= n.
sympy builds W from symbolic multipliers, tokens and queries and checks (a) W - U Z = 0 and
(b) every (n+1) x (n+1) minor of W vanishes identically, for (n, d, T) = (1, 2, 3) and (2, 3, 2).
"""

import itertools

import sympy as sp

from attnsvm.claims import Derivation, Verdict

CASES = ((1, 2, 3), (2, 3, 2))   # (n, d, T), alpha_i = 0


def _kkt_form(n: int, d: int, T: int):
    X = [[sp.Matrix(sp.symbols(f"x{i}_{t}_0:{d}", real=True)) for t in range(T)] for i in range(n)]
    Z = sp.Matrix(n, d, lambda i, c: sp.Symbol(f"z{i}_{c}", real=True))
    lam = [[sp.Symbol(f"lam{i}_{t}", nonnegative=True) for t in range(T)] for i in range(n)]
    W = sp.zeros(d, d)
    U = sp.zeros(d, n)
    for i in range(n):
        for t in range(1, T):
            W += lam[i][t] * (X[i][0] - X[i][t]) * Z[i, :]
            U[:, i] += lam[i][t] * (X[i][0] - X[i][t])
    return W, U, Z


def derive() -> Derivation:
    detail = {}
    ok = True
    for n, d, T in CASES:
        W, U, Z = _kkt_form(n, d, T)
        factor = sp.expand(W - U * Z)
        minors = [sp.expand(W.extract(list(r), list(c)).det())
                  for r in itertools.combinations(range(d), n + 1) for c in itertools.combinations(range(d), n + 1)]
        nonzero = [m for m in minors if m != 0]
        detail[f"n={n}, d={d}, T={T}: W - U Z"] = str(factor.tolist() if factor != sp.zeros(d, d) else 0)
        detail[f"n={n}, d={d}, T={T}: nonzero (n+1)-minors"] = f"{len(nonzero)} of {len(minors)}"
        ok &= factor == sp.zeros(d, d) and not nonzero
    return Derivation(
        "W_mm = sum_{i,t} lambda_it (x_{i,alpha_i} - x_it) z_i^T = U Z (KKT) has rank <= n",
        Verdict.PROVED if ok else Verdict.REFUTED,
        {**detail, "closing_step": "rank(U Z) <= min(rank U, rank Z) <= n; the KKT form is stationarity of "
                                   "min ||W||_F^2/2 s.t. <A_it, W> >= 1 (a convex QP: KKT is necessary and sufficient)"},
    )
