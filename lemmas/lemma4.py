"""Lemma 4 (docs/statements.md#lemma4; proof in Appendix B.1, (17)-(22)): under Assumptions A and B, p_mm = p_mm(opt)
is a global descent direction, <grad L(p), p_mm> < 0 for every p.

Every step is checked by sympy for a symbolic number of tokens T and inputs n (sums over
t = 1..T, i = 1..n): the gradient correlation as a softmax covariance, the covariance under
Assumption B, its sign from the (ATT-SVM) constraints, and the sign of loss'.
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import T, o, residuals, resolve, softmax, t, total, u

STATEMENT = "Assumptions A and B, p_mm = p_mm(opt) (the GMM) exists => <grad L(p), p_mm> < 0 for every p"
RECONSTRUCTION = ("Assumption A(1) is used as loss' < 0 on bounded intervals: 'strictly decreasing' alone allows "
                  "loss' = 0 at a point, e.g. loss(x) = (1 - x)^3, and then the lemma fails (NOTES.md)")


def _cov(s, x, y):
    return total(s(t) * x[t] * y[t]) - total(s(t) * x[t]) * total(s(t) * y[t])


def gradient_covariance() -> dict:
    """s = S(a), f = <s, gamma>: ds_u/da_v = s_u (delta_uv - s_v), df/da_u = s_u (gamma_u - f), and
    sum_u b_u df/da_u = Cov_s(b, gamma), for every T."""
    a, b, g = (sp.IndexedBase(x, real=True) for x in ("a", "b", "gamma"))
    v = sp.Symbol("v", integer=True, positive=True)
    s, Z = softmax(a)
    f = sp.Sum(sp.exp(a[t]) * g[t], (t, 1, T)) / Z
    dsoft = resolve(sp.diff(s(u), a[v])) - s(u) * (sp.KroneckerDelta(u, v) - s(v))
    df = resolve(sp.diff(f, a[u]))
    corr = total((b[u] * df).subs(u, t)) - _cov(s, b, g)
    return residuals(softmax_jacobian=dsoft, margin_gradient=df - s(u) * (g[u] - f), correlation_is_covariance=corr)


def covariance_under_B() -> dict:
    """Cov_s(a, g0 + Delta e_opt) = Delta s_opt sum_{t != opt} s_t (a_opt - a_t) with sum_t s_t = 1, every T
    (the t = opt term of the right side is s_opt (a_opt - a_opt) = 0, so it sums over all t)."""
    s, a = sp.IndexedBase("s", positive=True), sp.IndexedBase("a", real=True)
    g0, D = sp.symbols("g0 Delta", real=True)
    lhs = (total(s[t] * a[t] * (g0 + D * sp.KroneckerDelta(t, o)))
           - total(s[t] * a[t]) * total(s[t] * (g0 + D * sp.KroneckerDelta(t, o))))
    rhs = D * s[o] * total(s[t] * (a[o] - a[t]))
    S = sp.Sum(s[t], (t, 1, T))
    return residuals(identity=sp.expand((lhs - rhs).subs(S, 1)))


def descent_sign() -> dict:
    """Non-optimal tokens relabelled t = 1..T-1: a_opt - a_t = 1 + c_t, c_t >= 0 ((ATT-SVM) at p_mm) gives
    sum_t s_t (a_opt - a_t) - (1 - s_opt) = sum_t s_t c_t >= 0, and Delta s_opt (1 - s_opt) > 0."""
    T1 = sp.Symbol("T_minus_1", integer=True, positive=True)          # T >= 2 tokens
    s, c = sp.IndexedBase("s", positive=True), sp.IndexedBase("c", nonnegative=True)
    D, s_opt = sp.Symbol("Delta", positive=True), sp.Symbol("s_opt", positive=True)
    rest = total(s[t], t, T1)                                        # 1 - s_opt
    excess = total(s[t] * (1 + c[t]), t, T1) - rest
    return residuals(excess_is_sum_s_c=excess - total(s[t] * c[t], t, T1),
                     excess_nonnegative=bool(excess.is_nonnegative),
                     covariance_positive=bool((D * s_opt * rest).is_positive))


def mean_sign() -> dict:
    """loss'_i = -m_i < 0 and Cov_i > 0 for every i make (1/n) sum_i loss'_i Cov_i < 0, every n."""
    i, n = sp.symbols("i n", integer=True, positive=True)
    m, C = sp.IndexedBase("m", positive=True), sp.IndexedBase("C", positive=True)
    return residuals(mean_negative=bool((sp.Sum(-m[i] * C[i], (i, 1, n)) / n).is_negative))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("<grad L(p), q> = (1/n) sum_i loss'_i Cov_{s_i}(K_i q, gamma_i), s_i = S(K_i p): the softmax Jacobian "
             "gives d<s, gamma>/da_u = s_u (gamma_u - f), and a = K p is linear (symbolic T)", "symbolic",
             gradient_covariance),
        Step("under Assumption B (gamma = g0 1 + Delta e_opt): Cov_s(a, gamma) = Delta s_opt sum_{t != opt} s_t "
             "(a_opt - a_t) (symbolic T)", "symbolic", covariance_under_B, by=("assumption-B",)),
        Step("with a = K_i p_mm the (ATT-SVM) constraints give a_opt - a_t >= 1, so Cov >= Delta s_opt (1 - s_opt) > 0 "
             "(Delta > 0 by B, softmax weights positive, T >= 2)", "symbolic", descent_sign,
             by=("assumption-B", "definition1")),
        Step("loss'_i < 0 (Assumption A) and Cov_i > 0 for every input: the mean (1/n) sum_i loss'_i Cov_i is negative "
             "at every finite p (symbolic n)", "symbolic", mean_sign, by=("assumption-A",)),
    ), RECONSTRUCTION)
