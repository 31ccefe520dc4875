"""Symbolic identities that several proof outlines use (`lemmas/<id>.py`), defined once: a step
of one result's outline that another result's proof repeats lives here, so outlines depend on the
library and never on each other's modules. Each function returns `symbolic.residuals(...)` (or a
residual expression) and holds for a symbolic number of tokens T (or dimension d); the
registry's `uses` names the result whose proof a step repeats.

- softmax: `ratio_residual`/`softmax_ratio` (s_t = s_o e^{-(a_o - a_t)}), `softmax_bound` ((35) of
  paper A: s_t <= e^{-(a_o - a_t)}), `margin_shift` (f - gamma_o = sum_t s_t (gamma_t - gamma_o));
- gradients: `gradient_covariance` (Lemma 4: <grad L, q> as a softmax covariance),
  `covariance_under_B` and `descent_sign` (Lemma 4 under Assumption B), `gradient_under_B`
  (Theorem 2: -grad L under B, one input), `residual_identity` (Lemma 3's key identity);
- `domination_radius`: C e^{-R (Gamma + delta)} < c e^{-R Gamma} beyond R = log(C/c)/delta.
"""

from __future__ import annotations

import sympy as sp

from attnsvm.claims.symbolic import T, o, on_simplex, residuals, resolve, softmax, t, total, u


def ratio_residual() -> sp.Expr:
    """s_t - s_opt exp(-(a_opt - a_t)) for softmax weights, every T."""
    a = sp.IndexedBase("a", real=True)
    s, _ = softmax(a)
    return sp.powsimp(s(t) - s(o) * sp.exp(-(a[o] - a[t])))


def softmax_ratio() -> dict:
    """s_t = s_opt exp(-(a_opt - a_t)), every T."""
    return residuals(ratio=ratio_residual())


def softmax_bound() -> dict:
    """(35): s_t = e^{a_t}/Z with Z = e^{a_o} + sum_{u != o} e^{a_u} > e^{a_o}, so s_t <= e^{-(a_o - a_t)}
    (non-reference tokens relabelled u = 1..T-1; symbolic T)."""
    T1 = sp.Symbol("T_minus_1", integer=True, positive=True)
    b = sp.IndexedBase("b", real=True)                      # logits of the non-reference tokens
    a_o, a_t = sp.symbols("a_o a_t", real=True)
    rest = sp.Sum(sp.exp(b[t]), (t, 1, T1))
    Z = sp.exp(a_o) + rest
    s_t = sp.exp(a_t) / Z
    # e^{-(a_o - a_t)} - s_t = e^{a_t} (Z - e^{a_o}) / (e^{a_o} Z): a product of positive factors
    gap = sp.exp(a_t - a_o) - s_t
    factored = sp.exp(a_t) * rest / (sp.exp(a_o) * Z)
    return residuals(gap_factored=sp.simplify(gap - factored), rest_positive=bool(rest.is_positive),
                     factors_positive=bool(factored.is_positive))


def margin_shift() -> dict:
    """f - gamma_o = sum_t s_t (gamma_t - gamma_o) on the simplex (the t = o term is 0; symbolic T)."""
    s, g = sp.IndexedBase("s", positive=True), sp.IndexedBase("gamma", real=True)
    return residuals(shift=on_simplex(total(s[t] * g[t]) - g[o] - total(s[t] * (g[t] - g[o])), s))


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


def gradient_under_B() -> dict:
    """One coordinate of K^T (s o (gamma - f)) under B (gamma = g0 + Delta e_opt) equals
    Delta s_opt sum_t s_t (K_opt - K_t), every T (the t = opt term vanishes); s_t = s_opt exp(-(a_opt - a_t))."""
    s, K = sp.IndexedBase("s", positive=True), sp.IndexedBase("K", real=True)
    g0, D = sp.symbols("g0 Delta", real=True)
    gamma = g0 + D * sp.KroneckerDelta(t, o)
    f = total(s[t] * gamma)
    lhs = total(K[t] * s[t] * gamma) - f * total(K[t] * s[t])
    rhs = D * s[o] * total(s[t] * (K[o] - K[t]))
    return residuals(gradient=sp.expand((lhs - rhs).subs(sp.Sum(s[t], (t, 1, T)), 1)), softmax_ratio=ratio_residual())


def residual_identity(sign: int = -1) -> dict:
    """Cov_s(a, gamma) - sum_t (a_o - a_t) s_t (gamma_o - gamma_t) = sign x (sum_t (a_o - a_t) s_t)
    (sum_t (gamma_o - gamma_t) s_t) on the simplex, symbolic T (the t = o terms are 0, so the sums
    over t != o equal the sums over all t). sign = -1 is the paper's; +1 must fail (a test)."""
    s, a, g = sp.IndexedBase("s", positive=True), sp.IndexedBase("a", real=True), sp.IndexedBase("gamma", real=True)
    cov = total(s[t] * a[t] * g[t]) - total(s[t] * a[t]) * total(s[t] * g[t])
    main = total((a[o] - a[t]) * s[t] * (g[o] - g[t]))
    prod = total((a[o] - a[t]) * s[t]) * total((g[o] - g[t]) * s[t])
    return residuals(identity=on_simplex(cov - main - sign * prod, s))


def domination_radius() -> dict:
    """A term at least c e^{-R Gamma} dominates one at most C e^{-R (Gamma + delta)} (c, C, delta > 0) once
    R > log(C/c)/delta: at R = log(C/c)/delta + x the log of their ratio is -x delta < 0 (x > 0)."""
    c, C, D, x, G = sp.symbols("c C delta x Gamma", positive=True)
    R = sp.log(C / c) / D + x
    log_ratio = sp.expand(sp.expand_log(sp.log(C * sp.exp(-R * (G + D)) / (c * sp.exp(-R * G))), force=True))
    return residuals(log_ratio=log_ratio + x * D, below_one=bool((-x * D).is_negative))
