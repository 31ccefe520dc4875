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
- `domination_radius`: C e^{-R (Gamma + delta)} < c e^{-R Gamma} beyond R = log(C/c)/delta;
- regularization paths: `margin_identity` (<s, gamma> = gamma_o - sum_t s_t (gamma_o - gamma_t)),
  `deficit_bounds` (Gamma_min q <= sum_t s_t gap_t <= Gamma_max q), `mass_bounds` (the non-optimal
  mass along and away from p_mm, Theorem 8's (D.1)), `direction_violates` (a direction delta away
  from p_mm violates a constraint by a factor 1 - eps, symbolic d), `logistic_tail` (margin lost
  at label margin m costs ~ r g e^{-r m}, Theorem 5), `nonsupport_exponent` and `kappa_threshold`
  (a non-support input's exponent along r = kappa R and the threshold kappa*, Theorem 6);
- descent: `norm_step` (<delta, p/||p||> >= ||p + delta|| - ||p|| - ||delta||^2/(2||p||), Theorem 2's
  (51), symbolic d) and `telescoping` ((52): the liminf of the correlation), also Theorem 3's;
- W and (K, Q): `vectorisation` (logits and W-SVM rows linear in vec(W), symbolic d), `w_gradient`
  (the W-gradient is the reshaped p-gradient), `balanced` (balanced factors K, Q of W carry
  ||K||_F^2 = ||Q||_F^2 = ||W||_*) and `am_gm`.
"""

from __future__ import annotations

import sympy as sp

from attnsvm.claims.symbolic import T, d, j, k, o, on_simplex, residuals, resolve, softmax, t, total, u


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


# ---- regularization paths (Theorems 1, 5, 6, 8 and the lemmas of Appendices C, D) ---------------

T1 = sp.Symbol("T_minus_1", integer=True, positive=True)          # the T - 1 >= 1 non-optimal tokens


def margin_identity() -> dict:
    """<s, gamma> = gamma_opt - sum_t s_t (gamma_opt - gamma_t) with sum_t s_t = 1, every T."""
    s, g = sp.IndexedBase("s", positive=True), sp.IndexedBase("gamma", real=True)
    res = total(s[t] * g[t]) - (g[o] - total(s[t] * (g[o] - g[t])))
    return residuals(identity=res.subs(sp.Sum(s[t], (t, 1, T)), 1))


def deficit_bounds() -> dict:
    """Non-optimal tokens t = 1..T-1 with gaps Gmin + e_t = Gmax - e'_t (e, e' >= 0) and mass q = sum_t s_t:
    Gmin q <= sum_t s_t gap_t <= Gmax q, the differences being sums of nonnegative terms."""
    s = sp.IndexedBase("s", positive=True)
    e, e2 = sp.IndexedBase("e", nonnegative=True), sp.IndexedBase("e2", nonnegative=True)
    Gmin, Gmax = sp.symbols("Gamma_min Gamma_max", positive=True)
    q = total(s[t], t, T1)
    low = total(s[t] * (Gmin + e[t]), t, T1) - Gmin * q
    high = Gmax * q - total(s[t] * (Gmax - e2[t]), t, T1)
    return residuals(lower_gap=low - total(s[t] * e[t], t, T1), upper_gap=high - total(s[t] * e2[t], t, T1),
                     lower_nonnegative=bool(low.is_nonnegative), upper_nonnegative=bool(high.is_nonnegative))


def mass_bounds() -> dict:
    """(a) s_t <= s_t / s_opt = exp(-(a_opt - a_t)) (s_opt = 1/(1 + w) <= 1), so along R p_mm/||p_mm||, where every
    a_opt - a_t >= R/||p_mm||, q <= (T - 1) exp(-R/||p_mm||); (b) s_t >= exp(a_t - a_max)/T, since
    T exp(a_max) - Z = sum_t (exp(a_max) - exp(a_t)) >= 0 (exp(a_t) = exp(a_max)/(1 + y_t), y_t >= 0), so a direction
    with a_opt - a_t <= (1 - eps) R/||p_mm|| keeps q >= exp(-(1 - eps) R/||p_mm||)/T (if a_max is not a_opt,
    q >= s_max >= 1/T, larger still)."""
    x, w = sp.Symbol("x", real=True), sp.Symbol("w", nonnegative=True)
    above = sp.exp(-x) - sp.exp(-x) / (1 + w)                          # exp(-(a_opt - a_t)) - s_t
    y, Emax = sp.IndexedBase("y", nonnegative=True), sp.Symbol("E_max", positive=True)
    term = Emax - Emax / (1 + y[t])                                    # exp(a_max) - exp(a_t)
    return residuals(upper_nonnegative=bool(sp.factor(sp.together(above)).is_nonnegative),
                     partition_slack=total(term) - (T * Emax - total(Emax / (1 + y[t]))),
                     slack_term=sp.together(term) - Emax * y[t] / (1 + y[t]),
                     partition_nonnegative=bool(total(Emax * y[t] / (1 + y[t])).is_nonnegative))


def _inner(x, y):
    return total(x[j] * y[j], j, d)


def direction_violates() -> dict:
    """If ||p/R - p_mm/m|| >= delta (m = ||p_mm||, ||p|| <= R), p violates some constraint: value < (1 - eps) R/m for
    eps < delta^2/2. (i) the feasible set is convex (a segment between feasible points is feasible); (ii)
    ||p_mm + tau (x - p_mm)||^2 - m^2 = 2 tau <p_mm, x - p_mm> + tau^2 ||x - p_mm||^2, which is < 0 for small tau > 0
    when <p_mm, x - p_mm> = -beta < 0: so p_mm minimal forces <p_mm, x> >= m^2 for every feasible x; (iii) if all
    values of p = rho R u are >= (1 - eps) R/m, x = p m/((1 - eps) R) is feasible, so rho <u, p_mm/m> >= 1 - eps and
    ||rho u - p_mm/m||^2 = rho^2 - 2 rho <u, p_mm/m> + 1 <= 2 eps (rho <= 1) (symbolic d)."""
    e1, e2, y = sp.symbols("e1 e2 y", nonnegative=True)
    tau = y / (1 + y)                                                  # any tau in [0, 1)
    segment = (1 - tau) * (1 + e1) + tau * (1 + e2) - 1
    p, x, uu, ph = (sp.IndexedBase(n, real=True) for n in ("p", "x", "u", "phat"))
    tt = sp.Symbol("tau", real=True)
    norm2 = lambda z: total(z ** 2, j, d)
    quad = (norm2(p[j] + tt * (x[j] - p[j])) - norm2(p[j])
            - (2 * tt * (_inner(p, x) - norm2(p[j])) + tt ** 2 * norm2(x[j] - p[j])))
    beta, D, c = sp.symbols("beta D c", positive=True)
    small_tau = 2 * (beta / D) * (-beta) + (beta / D) ** 2 * D         # tau = beta/D <= 1: -beta^2/D
    unit = 2 * (-beta) + (beta - c)                                    # tau = 1 when D = beta - c < beta
    z, b, eps = sp.Symbol("z", nonnegative=True), sp.Symbol("b", nonnegative=True), sp.Symbol("eps", positive=True)
    rho = 1 / (1 + z)                                                  # any rho in (0, 1]
    gap = 2 * eps - (rho ** 2 - 2 * (1 - eps + b) + 1)                 # rho <u, p_hat> = 1 - eps + b
    unit_norm = (norm2(uu[j] - ph[j]) - (2 - 2 * _inner(uu, ph))).subs(
        {sp.Sum(uu[j] ** 2, (j, 1, d)): 1, sp.Sum(ph[j] ** 2, (j, 1, d)): 1})
    return residuals(segment_nonnegative=bool(sp.factor(sp.together(segment)).is_nonnegative),
                     segment_quadratic=sp.expand(quad), small_step_decreases=bool(small_tau.is_negative),
                     unit_step_decreases=bool(unit.is_negative), unit_vectors=unit_norm,
                     direction_bound=bool(sp.factor(sp.together(gap)).is_nonnegative))


def logistic_tail_residual() -> tuple[sp.Expr, sp.Expr]:
    """d/d pi log(1 + e^{-r(m - pi g)}) at pi = 0 minus r g sigmoid(-r m), and lim_{r -> oo} e^{r m} sigmoid(-r m)."""
    r, m, g, pi = sp.symbols("r m g pi", positive=True)
    dv = sp.diff(sp.log(1 + sp.exp(-r * (m - pi * g))), pi).subs(pi, 0)
    sig = 1 / (1 + sp.exp(r * m))
    return sp.simplify(dv - r * g * sig), sp.limit(sp.exp(r * m) * sig, r, sp.oo)


def logistic_tail() -> dict:
    """Each unit of margin lost at label margin m costs r g sigmoid(-r m) ~ r g e^{-r m} of logistic loss."""
    res, lim = logistic_tail_residual()
    return residuals(derivative=res, tail_limit_minus_1=lim - 1)


def nonsupport_exponent() -> dict:
    """Input i's term: label margin r m/V and attention margin R c; relative to the support inputs' e^{-r/V}, with
    r = kappa R, the exponent is -R (c + kappa (m - 1)/V) (V = ||v_mm||)."""
    R, kappa, V, m, c = sp.symbols("R kappa V m c", positive=True)
    r = kappa * R
    return residuals(exponent=sp.simplify((-r * m / V - R * c) - (-r / V) - (-R * (c + kappa * (m - 1) / V))))


def kappa_threshold() -> dict:
    """kappa* = V (1/P - c)/(m - 1) ties the non-support exponent with the support inputs' -R/P (P = ||p_relax||), and
    for kappa = kappa* + delta the non-support term vanishes against the support term (limit 0)."""
    R, V, P, gap, c, delta = sp.symbols("R V P m_minus_1 c delta", positive=True)
    m = 1 + gap                                                        # a non-support input: label margin m > 1
    kstar = V * (1 / P - c) / (m - 1)
    tie = sp.simplify((c + kstar * (m - 1) / V) - 1 / P)
    k = kstar + delta
    vanish = sp.limit(sp.exp(-R * (c + k * (m - 1) / V)) / sp.exp(-R / P), R, sp.oo)
    return residuals(tie=tie, above_threshold_limit=vanish)


# ---- descent and the W- and (K, Q)-parameterisations (Theorems 2-3, Transformers as SVMs) -------

def norm_step() -> dict:
    """<delta, p>/||p|| = (||p + delta||^2 - ||p||^2 - ||delta||^2)/(2 ||p||) (symbolic d) and
    (x^2 - y^2)/(2y) - (x - y) = (x - y)^2/(2y) >= 0: so <delta, p/||p||> >= ||p + delta|| - ||p|| -
    ||delta||^2/(2||p||)."""
    p, e = sp.IndexedBase("p", real=True), sp.IndexedBase("delta", real=True)
    norm2 = lambda z: total(z ** 2, j, d)
    polar = 2 * total(e[j] * p[j], j, d) - (norm2(p[j] + e[j]) - norm2(p[j]) - norm2(e[j]))
    x, y = sp.Symbol("x", nonnegative=True), sp.Symbol("y", positive=True)
    slack = (x ** 2 - y ** 2) / (2 * y) - (x - y)
    return residuals(polarisation=polar, slack=sp.simplify(slack - (x - y) ** 2 / (2 * y)),
                     slack_nonnegative=bool(((x - y) ** 2 / (2 * y)).is_nonnegative))


def telescoping() -> dict:
    """sum_{s=t0}^{t-1} (x_{s+1} - x_s) = x_t - x_t0 for <p_s, p_hat> and ||p_s||; then with a_t >= a0 +
    (r_t - r0 - C)/(1 + pi) (C the finite sum of eta^2 ||g_s||^2/(2||p_s||), Lemma 6), a_t/r_t -> >= 1/(1 + pi)
    as r_t -> oo."""
    s_, t0, tN = sp.Symbol("s", integer=True), sp.Symbol("t0", integer=True), sp.Symbol("t", integer=True)
    x = sp.IndexedBase("x")
    tele = sp.Sum(x[s_ + 1] - x[s_], (s_, t0, tN - 1)).doit() - (x[tN] - x[t0])
    r, r0, C, pi = sp.symbols("r r0 C pi", positive=True)
    a0 = sp.Symbol("a0", real=True)
    lim = sp.limit((a0 + (r - r0 - C) / (1 + pi)) / r, r, sp.oo)
    return residuals(telescoping=tele, liminf_bound=sp.simplify(lim - 1 / (1 + pi)))


def _pair(expr):
    """sum_{j,k=1}^d expr: the Frobenius inner product over W's entries."""
    return total(total(expr, k, d), j, d)


def vectorisation() -> dict:
    """x^T W z = <vec(x z^T), vec(W)> and the (ATT-SVM) row (k_alpha - k_t)^T vec(W) is the W-SVM row
    <(x_alpha - x_t) z^T, W> (symbolic d); ||vec W|| = ||W||_F is the definition of the Frobenius norm."""
    x, xa, xt, z, W = (sp.IndexedBase(n, real=True) for n in ("x", "x_alpha", "x_t", "z", "W"))
    logit = _pair(x[j] * W[j, k] * z[k]) - _pair((x[j] * z[k]) * W[j, k])
    rows = _pair(((xa[j] - xt[j]) * z[k]) * W[j, k]) - (_pair(xa[j] * z[k] * W[j, k]) - _pair(xt[j] * z[k] * W[j, k]))
    return residuals(logits=logit, svm_rows=rows)


def w_gradient() -> dict:
    """The W-gradient sum_t c_t x_t z^T is the reshaped p-gradient sum_t c_t vec(x_t z^T), entry by entry (symbolic T),
    c = loss' S'(a) gamma: GD / NGD on W are GD / NGD on p = vec(W)."""
    c, x, z = sp.IndexedBase("c", real=True), sp.IndexedBase("x", real=True), sp.IndexedBase("z", real=True)
    return residuals(entry=total(c[t] * x[t, j] * z[k]) - z[k] * total(c[t] * x[t, j]))


def balanced() -> dict:
    """W = U diag(sigma) V^T with orthonormal columns of U, V; K = U diag(sqrt sigma), Q = V diag(sqrt sigma):
    (K Q^T)_{jl} = sum_k U_jk sigma_k V_lk = W_jl and ||K||_F^2 = sum_k sigma_k sum_j U_jk^2 = sum_k sigma_k = ||W||_*,
    likewise ||Q||_F^2 (symbolic d)."""
    U, Vm, h = sp.IndexedBase("U", real=True), sp.IndexedBase("V", real=True), sp.IndexedBase("h", nonnegative=True)
    l = sp.Symbol("l", integer=True, positive=True)
    sigma = h[k] ** 2                                                  # sigma_k = h_k^2, h = sqrt(sigma)
    product = total((U[j, k] * h[k]) * (Vm[l, k] * h[k]), k, d) - total(U[j, k] * sigma * Vm[l, k], k, d)
    unit = {sp.Sum(U[j, k] ** 2, (j, 1, d)): 1, sp.Sum(Vm[j, k] ** 2, (j, 1, d)): 1}

    def fro2(M):                                                       # sum_k (sum_j M_jk^2) h_k^2, columns unit
        inner = total((M[j, k] * h[k]) ** 2, j, d).subs(unit)
        return total(inner, k, d)

    nuclear = total(sigma, k, d)
    return residuals(factorisation=product, K_norm=fro2(U) - nuclear, Q_norm=fro2(Vm) - nuclear,
                     balanced=(fro2(U) + fro2(Vm)) / 2 - nuclear)


def am_gm() -> dict:
    """(a^2 + b^2)/2 - a b = (a - b)^2/2 >= 0."""
    a, b = sp.symbols("a b", nonnegative=True)
    return residuals(identity=sp.expand((a ** 2 + b ** 2) / 2 - a * b - (a - b) ** 2 / 2),
                     nonnegative=bool(((a - b) ** 2 / 2).is_nonnegative))
