"""Theorem 5 (SPEC.md A, Section 3; proof in Appendix C.1): the joint path converges to
(v_mm, p_mm) under Assumption C. The algebra behind the check, each step reduced by sympy:

1. joint gradient in v (the formula regpath.joint_objective uses): for L = loss(Y v^T X^T s),
   s = S(K p): grad_v L = loss' Y X^T s (residual 0, T = 2, d = 2 symbolic);
2. mixing and the label margin: moving mass pi from alpha_i to token t changes input i's
   margin under v by pi Y_i v^T (x_it - x_{i,alpha_i}) (linear, residual 0); with C2 (every
   input a support vector with a positive multiplier lambda_i and alpha strictly best under
   v_mm) Danskin's theorem gives d margin / d pi = lambda_i Y_i v_mm^T (x_it - x_{i,alpha_i}) < 0:
   every mixture shrinks the label margin to first order;
3. the logistic tail: d/d pi log(1 + e^{-r (m - pi g)}) at pi = 0 is r g sigmoid(-r m) (residual
   0) and e^{r m} sigmoid(-r m) -> 1, so mixed-in mass pi costs about r g pi e^{-r m}: the risk of
   (r v^, R p^) exceeds the competitor's by about r g (pi_bad - pi_good) e^{-r m}, and
   pi_bad / pi_good = e^{eps R} -> oo
   (sympy limit) for any direction violating an (ATT-SVM) constraint by a factor (1 - eps):
   the competitor (v_mm, p_mm) wins for large r and R, hence the directional limits.
"""

import sympy as sp

from attnsvm.claims import Derivation, Verdict


def v_gradient_residual() -> sp.Expr:
    a1, a2, y = sp.symbols("a1 a2 y", real=True)
    X = sp.Matrix(2, 2, sp.symbols("x11 x12 x21 x22", real=True))
    v = sp.Matrix(sp.symbols("v1 v2", real=True))
    Z = sp.exp(a1) + sp.exp(a2)
    s = sp.Matrix([sp.exp(a1) / Z, sp.exp(a2) / Z])
    loss = lambda u: sp.log(1 + sp.exp(-u))
    u = y * (v.T * X.T * s)[0]
    grad = sp.Matrix([sp.diff(loss(u), vi) for vi in v])
    dloss = sp.diff(loss(sp.Symbol("w")), sp.Symbol("w")).subs(sp.Symbol("w"), u)
    return sp.simplify(grad - dloss * y * X.T * s)


def mixing_residual() -> sp.Expr:
    pi, y = sp.symbols("pi y", real=True)
    xa, xt, v = (sp.Matrix(sp.symbols(f"{n}1 {n}2", real=True)) for n in ("a", "t", "v"))
    mixed = (1 - pi) * xa + pi * xt
    return sp.expand(y * (v.T * mixed)[0] - y * (v.T * xa)[0] - pi * y * (v.T * (xt - xa))[0])


def logistic_tail_residual() -> tuple[sp.Expr, sp.Expr]:
    """d/d pi log(1 + e^{-r(m - pi g)}) at pi = 0 minus r g sigmoid(-r m) (exact), and
    lim_{r -> oo} e^{r m} sigmoid(-r m) (= 1): each unit of mixed-in mass costs r g e^{-r m}."""
    r, m, g, pi = sp.symbols("r m g pi", positive=True)
    d = sp.diff(sp.log(1 + sp.exp(-r * (m - pi * g))), pi).subs(pi, 0)
    sig = 1 / (1 + sp.exp(r * m))
    return sp.simplify(d - r * g * sig), sp.limit(sp.exp(r * m) * sig, r, sp.oo)


def nonoptimality_ratio_limit() -> sp.Expr:
    R, m, eps = sp.symbols("R m epsilon", positive=True)
    return sp.limit(sp.exp(-R * (1 - eps) / m) / sp.exp(-R / m), R, sp.oo)


def derive() -> Derivation:
    r1, r2, (r3, tail), lim = v_gradient_residual(), mixing_residual(), logistic_tail_residual(), nonoptimality_ratio_limit()
    ok = r1 == sp.zeros(2, 1) and r2 == 0 and r3 == 0 and tail == 1 and lim == sp.oo
    return Derivation(
        "grad_v L = loss' Y X^T s; mixing changes the margin by pi Y v^T (x_t - x_alpha); logistic tail: "
        "d/d pi log(1 + e^{-r(m - pi g)}) = r g sigmoid(-r m) ~ r g e^{-r m}; non-optimality ratio e^{eps R / ||p_mm||} -> oo",
        Verdict.PROVED if ok else Verdict.REFUTED,
        {"v_gradient_residual": str(r1.T), "mixing_residual": str(r2), "logistic_tail_derivative_residual": str(r3), "tail_limit": str(tail),
         "nonoptimality_ratio_limit": str(lim),
         "closing_step": "Assumption C (C1: alpha maximises the margin over pure selections; C2: positive multipliers, "
                         "alpha strictly best under v_mm) makes every mixture cost label margin, so the lowest-risk "
                         "direction pair at large (r, R) is (v_mm, p_mm(alpha))"},
    )
