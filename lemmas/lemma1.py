"""Lemma 1 (SPEC.md A): grad L_W(W) = grad L_p(W u) u^T for every W, any differentiable loss
and head. Proved by sympy at n = 1, T = 2, d = 2 with the loss `ell` and the head `h` left as
undefined symbolic functions, so nothing about their form is used."""

import sympy as sp

from attnsvm.claims import Derivation, Verdict


def _risk(ell, h, X, Y, logits):
    e = [sp.exp(a) for a in logits]
    s = [x / sum(e) for x in e]
    xi = [sum(s[t] * X[t, j] for t in range(X.rows)) for j in range(X.cols)]
    return ell(Y * h(*xi))


def residual(T: int = 2, d: int = 2, factor=1) -> sp.Matrix:
    """grad L_W(W) - grad L_p(W u) (factor * u)^T, expanded; zero iff the identity holds."""
    ell, h = sp.Function("ell"), sp.Function("h")
    X = sp.Matrix(T, d, sp.symbols(f"x1:{T * d + 1}", real=True))
    Y = sp.Symbol("Y", real=True)
    u = sp.Matrix(sp.symbols(f"u1:{d + 1}", real=True))
    W = sp.Matrix(d, d, sp.symbols(f"w1:{d * d + 1}", real=True))
    p = sp.Matrix(sp.symbols(f"p1:{d + 1}", real=True))
    LW = _risk(ell, h, X, Y, list(X * W * u))
    Lp = _risk(ell, h, X, Y, list(X * p))
    gradW = sp.Matrix(d, d, lambda j, k: sp.diff(LW, W[j, k]))
    gradp_at = sp.Matrix([sp.diff(Lp, p[j]) for j in range(d)]).subs(dict(zip(p, W * u)), simultaneous=True)
    return (gradW - gradp_at * (factor * u).T).doit().applyfunc(sp.expand)


def derive() -> Derivation:
    T, d = 2, 2
    res = residual(T, d)
    ok = res == sp.zeros(d, d)
    return Derivation(
        "grad L_W(W) = grad L_p(W u) u^T (rank one), generic loss ell and head h",
        Verdict.PROVED if ok else Verdict.REFUTED,
        {"residual": str(res.tolist()), "sizes": f"n = 1, T = {T}, d = {d}; ell, h undefined functions",
         "consequence": "W_{t+1} = W_t - (eta/||u||^2) grad L_p(W_t u) u^T keeps W_t = p_t u^T/||u||^2 by induction"},
    )
