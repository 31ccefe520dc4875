"""Theorem 3 (SPEC.md A, proof in Appendix B.4): GD from a cone around an LMM direction q =
p_mm(alpha) converges to it in direction. With g = grad L(p_t), p_{t+1} = p_t - eta g,
A_t = -<g, q/||q||> and B_t = -<g, p_t/||p_t||>, the proof's algebra is:

1. first-order change of the correlation: d/d eta corr(p - eta g, q) at eta = 0 equals
   (A - B corr(p, q)) / ||p|| (sympy, d = 3, residual 0): it is positive once B <= A, and
   Lemma 7 (L3) gives B <= (1 + pi) A in C_{mu,R_pi};
2. the norm grows at most linearly in the step: ||p + delta||^2 is
   (||p|| + <delta, p^> + ||delta||^2/(2||p||))^2 - (<delta, p^> + ||delta||^2/(2||p||))^2
   (residual 0), so ||p_{t+1}|| <= ||p_t|| + eta B_t + eta^2 ||g_t||^2/(2||p_t||);
3. telescoping, <p_t, q^> = <p_0, q^> + sum eta A_s while ||p_t|| <= ||p_0|| + (1 + pi) sum eta A_s + C
   with C finite (the squared steps are summable, Lemma 6), so as sum eta A_s -> oo (Lemma 7 L1/L2:
   no stationary point in the cone, norm diverges) corr(p_t, q) >= 1/(1 + pi) in the limit (sympy
   limit); pi is arbitrary for large R, hence corr -> 1.
"""

import sympy as sp

from attnsvm.claims import Derivation, Verdict


def corr_derivative_residual(d: int = 3) -> sp.Expr:
    p = sp.Matrix(sp.symbols(f"p1:{d + 1}", real=True))
    g = sp.Matrix(sp.symbols(f"g1:{d + 1}", real=True))
    q = sp.Matrix(sp.symbols(f"q1:{d + 1}", real=True))
    eta = sp.Symbol("eta", real=True)
    norm = lambda v: sp.sqrt((v.T * v)[0])
    corr = lambda a, b: (a.T * b)[0] / (norm(a) * norm(b))
    lhs = sp.diff(corr(p - eta * g, q), eta).subs(eta, 0)
    A, B = -(g.T * q)[0] / norm(q), -(g.T * p)[0] / norm(p)
    return sp.simplify(lhs - (A - B * corr(p, q)) / norm(p))


def norm_step_residual(d: int = 3) -> sp.Expr:
    p = sp.Matrix(sp.symbols(f"p1:{d + 1}", real=True))
    delta = sp.Matrix(sp.symbols(f"e1:{d + 1}", real=True))
    r = sp.sqrt((p.T * p)[0])
    a, b = (delta.T * p)[0] / r, (delta.T * delta)[0]
    return sp.simplify(((p + delta).T * (p + delta))[0] - ((r + a + b / (2 * r)) ** 2 - (a + b / (2 * r)) ** 2))


def telescoping_limit() -> sp.Expr:
    """lim_{S -> oo} (a0 + S) / (r0 + (1 + pi) S + C): the correlation bound after the steps."""
    S, r0, pi, C = sp.symbols("S r0 pi C", positive=True)
    a0 = sp.Symbol("a0", real=True)
    return sp.simplify(sp.limit((a0 + S) / (r0 + (1 + pi) * S + C), S, sp.oo) - 1 / (1 + pi))


def derive() -> Derivation:
    r1, r2, r3 = corr_derivative_residual(), norm_step_residual(), telescoping_limit()
    ok = r1 == 0 and r2 == 0 and r3 == 0
    return Derivation(
        "d corr(p - eta g, q)/d eta = (A - B corr)/||p||; ||p + delta|| <= ||p|| + <delta, p^> + ||delta||^2/(2||p||); "
        "telescoping gives liminf corr(p_t, p_mm) >= 1/(1 + pi) for every pi > 0",
        Verdict.PROVED if ok else Verdict.REFUTED,
        {"corr_derivative_residual": str(r1), "norm_step_residual": str(r2), "telescoping_limit_residual": str(r3),
         "sizes": "d = 3 symbolic vectors; S = sum_t eta A_t -> oo symbolic",
         "closing_step": "Lemma 7 (checked numerically by checks/theorem3.py on a ladder of cones): no stationary "
                         "point in C_{mu,R} and <-grad L, p_mm> > 0 make sum eta A_t diverge while the iterates stay "
                         "in the cone; L3 makes pi -> 0 as R grows"},
    )
