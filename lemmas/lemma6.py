"""Lemma 6 (docs/statements.md#lemma6; proof in Appendix B.1, (27)-(30)): under Assumption A, L is L_p-smooth, GD with
eta <= 1/L_p obeys L(p_{t+1}) <= L(p_t) - (eta/2)||grad L(p_t)||^2, and sum_t ||grad L(p_t)||^2 < oo.

Per input (drop i): a = K p, s = S(a), f = <s, gamma>, g = S'(a) gamma = s o (gamma - f),
grad L = loss'(f) K^T g. sympy checks the Jacobians and the simplex identities for a symbolic
T, the assembly of the constant and the descent algebra; the operator-norm inequalities that
turn the Jacobians into Lipschitz bounds, and the descent lemma, are cited.
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import T, residuals, resolve, softmax, t, total, u

STATEMENT = ("Assumption A => L is L_p-smooth, L_p = (1/n) sum_i (M0 ||v||^2 ||W||^2 ||X_i||^4 + 3 M1 ||v|| ||W||^2 "
             "||X_i||^3); GD with eta <= 1/L_p has L(p_{t+1}) <= L(p_t) - (eta/2)||grad L(p_t)||^2 and "
             "sum_t ||grad L(p_t)||^2 < oo")
RECONSTRUCTION = "the constant L_p is our reconstruction (docs/statements.md#lemma6; spectral norms)"


def jacobians() -> dict:
    """dg_u/da_v = (gamma_u - f) S'_uv - s_u g_v with S'_uv = s_u (delta_uv - s_v), g_u = s_u (gamma_u - f):
    J = diag(gamma - f) S'(a) - s g^T, for every T."""
    a, g = sp.IndexedBase("a", real=True), sp.IndexedBase("gamma", real=True)
    v = sp.Symbol("v", integer=True, positive=True)
    s, Z = softmax(a)
    f = sp.Sum(sp.exp(a[t]) * g[t], (t, 1, T)) / Z
    gu = s(u) * (g[u] - f)
    Sp = s(u) * (sp.KroneckerDelta(u, v) - s(v))
    J = (g[u] - f) * Sp - s(u) * s(v) * (g[v] - f)
    return residuals(gradient_of_margin=resolve(sp.diff(f, a[u])) - gu, jacobian=resolve(sp.diff(gu, a[v])) - J)


def simplex_identities() -> dict:
    """With sum_t s_t = 1 (every T): sum_t s_t (gamma_t - f)^2 = sum_t s_t gamma_t^2 - f^2 (so ||g||^2 =
    sum_t s_t^2 (gamma_t - f)^2 <= that <= ||gamma||^2, the difference being sum_t s_t (1 - s_t)(gamma_t - f)^2 >= 0);
    x^T S' x = sum_t s_t (x_t - xbar)^2 >= 0; tr S' = 1 - sum_t s_t^2 <= 1: so 0 <= S' <= I."""
    s, g, x = sp.IndexedBase("s", positive=True), sp.IndexedBase("gamma", real=True), sp.IndexedBase("x", real=True)
    w = sp.IndexedBase("w", positive=True)                           # w_t = 1 - s_t > 0
    S = sp.Sum(s[t], (t, 1, T))
    f, xbar = total(s[t] * g[t]), total(s[t] * x[t])

    def simplex(e):
        return sp.expand(sp.expand(e).subs(S, 1))

    variance = simplex(total(s[t] * (g[t] - f) ** 2) - (total(s[t] * g[t] ** 2) - f ** 2))
    slack = (total(s[t] * (g[t] - f) ** 2) - total(s[t] ** 2 * (g[t] - f) ** 2)
             - total(s[t] * (1 - s[t]) * (g[t] - f) ** 2))
    quad = simplex(total(s[t] * x[t] ** 2) - xbar ** 2 - total(s[t] * (x[t] - xbar) ** 2))   # x^T diag(s) x - (s^T x)^2
    trace = total(s[t] * (1 - s[t])) - (S - total(s[t] ** 2))
    return residuals(variance=variance, norm_slack=slack,
                     slack_terms_nonnegative=bool((s[t] * w[t] * (g[t] - f) ** 2).is_nonnegative),
                     quadratic_form=quad, trace=trace)


def assembly() -> dict:
    """grad L_i(p) - grad L_i(q) = (l'(f_p) - l'(f_q)) K^T g_p + l'(f_q) K^T (g_p - g_q); with |l'(f_p) - l'(f_q)|
    <= M0 ||K|| ||gamma|| ||p - q|| and ||g_p - g_q|| <= 3 ||gamma|| ||K|| ||p - q|| the constant is
    M0 ||K||^2 ||gamma||^2 + 3 M1 ||K||^2 ||gamma||, which at ||K|| = ||X|| ||W||, ||gamma|| = ||X|| ||v|| is L_p's
    term, a polynomial with nonnegative coefficients (so the norm bounds may be substituted)."""
    lp, lq, Gp, Gq = sp.symbols("lp lq Gp Gq", commutative=False)
    split = (lp * Gp - lq * Gq) - ((lp - lq) * Gp + lq * (Gp - Gq))
    M0, M1, nK, ng, nX, nW, nv = sp.symbols("M0 M1 K gamma X W v", positive=True)
    bound = M0 * (nK * ng) * (nK * ng) + M1 * nK * (3 * ng * nK)
    Lp = M0 * nv ** 2 * nW ** 2 * nX ** 4 + 3 * M1 * nv * nW ** 2 * nX ** 3
    poly = sp.Poly(bound, nK, ng)
    return residuals(product_rule_split=sp.expand(split), constant=bound.subs({nK: nX * nW, ng: nX * nv}) - Lp,
                     monotone=all(c.is_positive for c in poly.coeffs()))


def descent_coefficient() -> dict:
    """eta = theta/L_p with theta = 1/(1 + u) in (0, 1]: -eta + (L_p/2) eta^2 + eta/2 = -u/(2 L_p (1 + u)^2) <= 0."""
    x, L = sp.Symbol("u", nonnegative=True), sp.Symbol("L_p", positive=True)
    theta = 1 / (1 + x)
    eta = theta / L
    c = sp.factor(sp.simplify(-eta + L / 2 * eta ** 2 + eta / 2))
    return residuals(coefficient=sp.simplify(c + x / (2 * L * (1 + x) ** 2)), nonpositive=bool(c.is_nonpositive))


def summable() -> dict:
    """Summing the descent inequality: (eta/2) sum_{t<N} ||g_t||^2 <= sum_{t<N} (L_t - L_{t+1}) = L_0 - L_N
    <= L_0 - L_inf, L_inf = (1/n) sum_i loss(max_t gamma_it) (f_i <= max_t gamma_it, loss decreasing)."""
    tt, N = sp.Symbol("t", integer=True, nonnegative=True), sp.Symbol("N", integer=True, positive=True)
    L = sp.IndexedBase("L")
    return residuals(telescoping=sp.Sum(L[tt] - L[tt + 1], (tt, 0, N - 1)).doit() - (L[0] - L[N]))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("Jacobians: grad_a f = g = s o (gamma - f) and dg/da = diag(gamma - f) S'(a) - s g^T (symbolic T); "
             "through the linear a = K p, grad L_i = loss'(f) K^T g", "symbolic", jacobians),
        Step("simplex identities (symbolic T): ||g|| <= ||gamma|| (variance identity), 0 <= S'(a) <= I (x^T S' x = "
             "Var_s(x) >= 0, tr S' = 1 - ||s||^2 <= 1)", "symbolic", simplex_identities),
        Step("norm bounds: ||grad_p f|| <= ||K|| ||gamma||, ||dg/da|| <= ||diag(gamma - f)|| ||S'|| + ||s|| ||g|| <= 3 "
             "||gamma||, and the mean value inequality turns them into Lipschitz bounds on f and g; |loss''| <= M0, "
             "|loss'| <= M1 on the bounded margin interval [min gamma, max gamma]", "cited",
             reference="Appendix B.1, proof of Lemma 6, (27)-(29): triangle inequality, "
                       "submultiplicativity, mean value theorem", by=("assumption-A",)),
        Step("assembly: the product-rule split of grad L_i(p) - grad L_i(q) and the bounds give M0 ||K||^2 ||gamma||^2 "
             "+ 3 M1 ||K||^2 ||gamma||, which with ||K|| <= ||X|| ||W||, ||gamma|| <= ||X|| ||v|| is L_p's term "
             "(averaged over i)", "symbolic", assembly),
        Step("descent lemma: an L_p-smooth L has L(p - eta G) <= L(p) - eta ||G||^2 + (L_p/2) eta^2 ||G||^2", "cited",
             reference="Nesterov 2004, Lemma 1.2.3 (the paper cites [22, Lemma 10])"),
        Step("eta <= 1/L_p: -eta + (L_p/2) eta^2 <= -eta/2, the descent inequality", "symbolic", descent_coefficient),
        Step("summing the descent inequality telescopes: (eta/2) sum_t ||grad L(p_t)||^2 <= L(p_0) - L_inf < oo, "
             "L_inf = (1/n) sum_i loss(max_t gamma_it) (the paper's (26))", "symbolic", summable),
    ), RECONSTRUCTION)
