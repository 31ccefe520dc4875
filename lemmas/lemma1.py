"""Lemma 1 (docs/statements.md#lemma1; proof in Appendix A.2): GD on p and GD on W = p u^T/||u||^2 coincide.

The paper's proof is an induction whose step is the rank-one gradient identity
grad L_W(W) = grad L_p(W u) u^T. Every step is checked by sympy for a symbolic dimension d
(sums over j, k = 1..d) and any differentiable loss and head: L_W is L_p composed with the
linear map W -> W u, so nothing about the loss, the head, n or T enters.
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import d, j, k, residuals, resolve, total

STATEMENT = ("for u != 0, any differentiable loss and head: GD on W with steps eta_t/||u||^2 from W_0 = p_0 "
             "u^T/||u||^2 satisfies W_t = p_t u^T/||u||^2 for every t, where p_t is GD on p with steps eta_t")

l = sp.Symbol("l", integer=True, positive=True)
m = sp.Symbol("m", integer=True, positive=True)


def _risk(ell, h, X, Y, logits):
    e = [sp.exp(a) for a in logits]
    s = [x / sum(e) for x in e]
    xi = [sum(s[t] * X[t, c] for t in range(X.rows)) for c in range(X.cols)]
    return ell(Y * h(*xi))


def residual(T: int = 2, dim: int = 2, factor=1) -> sp.Matrix:
    """grad L_W(W) - grad L_p(W u) (factor * u)^T for one input with explicit sizes, the loss
    `ell` and head `h` undefined functions; zero iff the identity holds there."""
    ell, h = sp.Function("ell"), sp.Function("h")
    X = sp.Matrix(T, dim, sp.symbols(f"x1:{T * dim + 1}", real=True))
    Y = sp.Symbol("Y", real=True)
    uu = sp.Matrix(sp.symbols(f"u1:{dim + 1}", real=True))
    W = sp.Matrix(dim, dim, sp.symbols(f"w1:{dim * dim + 1}", real=True))
    p = sp.Matrix(sp.symbols(f"p1:{dim + 1}", real=True))
    LW = _risk(ell, h, X, Y, list(X * W * uu))
    Lp = _risk(ell, h, X, Y, list(X * p))
    gradW = sp.Matrix(dim, dim, lambda r, c: sp.diff(LW, W[r, c]))
    gradp_at = sp.Matrix([sp.diff(Lp, p[r]) for r in range(dim)]).subs(dict(zip(p, W * uu)), simultaneous=True)
    return (gradW - gradp_at * (factor * uu).T).doit().applyfunc(sp.expand)


def same_risk() -> dict:
    """X_i (W u) = (X_i W) u for every size: L_W's logits are L_p's logits at p = W u."""
    n_tok = sp.Symbol("T", integer=True, positive=True)
    X, W, uu = sp.MatrixSymbol("X", n_tok, d), sp.MatrixSymbol("W", d, d), sp.MatrixSymbol("u", d, 1)
    return residuals(logits=sp.Eq(X * (W * uu), (X * W) * uu) is sp.true)


def rank_one_gradient() -> dict:
    """d(W u)_l / dW_jk = delta_lj u_k, so the chain rule gives (grad L_W)_jk = sum_l G_l delta_lj u_k
    = G_j u_k with G = grad L_p(W u): the matrix G u^T. Cross-check with the explicit model."""
    W, uu, G = sp.IndexedBase("W", real=True), sp.IndexedBase("u", real=True), sp.IndexedBase("G", real=True)
    jac = resolve(sp.diff(sp.Sum(W[l, m] * uu[m], (m, 1, d)), W[j, k]))
    chain = total(G[l] * jac, l, d)
    return residuals(jacobian=jac - sp.KroneckerDelta(j, l) * uu[k], chain_rule=chain - G[j] * uu[k],
                     explicit_n1_T2_d2=residual(2, 2))


def induction() -> dict:
    """W_t = p u^T/N (N = ||u||^2) gives W_t u = p, and one W-step with eta/N is the p-step times u^T/N."""
    p, uu, G = (sp.IndexedBase(x, real=True) for x in ("p", "u", "G"))
    eta, N = sp.Symbol("eta", positive=True), sp.Symbol("N", positive=True)
    Wu = total(p[j] * uu[k] / N * uu[k], k, d).subs(sp.Sum(uu[k] ** 2, (k, 1, d)), N)
    step = (p[j] * uu[k] / N - eta / N * G[j] * uu[k]) - (p[j] - eta * G[j]) * uu[k] / N
    return residuals(W_t_u=Wu - p[j], W_step=step)


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("L_W(W) = L_p(W u) for every W: L_W's logits X_i W u are L_p's logits X_i p at p = W u (any n, T, d)",
             "symbolic", same_risk),
        Step("grad L_W(W) = grad L_p(W u) u^T for every W: d(W u)_l/dW_jk = delta_lj u_k and the chain rule "
             "(symbolic d; checked also on the explicit model, n = 1, T = 2, d = 2, loss and head undefined functions)",
             "symbolic", rank_one_gradient),
        Step("induction: W_t = p_t u^T/||u||^2 gives W_t u = p_t, so W_{t+1} = W_t - (eta_t/||u||^2) grad L_p(p_t) u^T "
             "= p_{t+1} u^T/||u||^2; the base case is the start W_0 = p_0 u^T/||u||^2", "symbolic", induction),
    ))
