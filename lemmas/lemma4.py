"""Lemma 4 (SPEC.md A): under Assumption B, p_mm is a descent direction, <grad L(p), p_mm> < 0.

Three exact steps, each a sympy residual reduced to zero or a sign decided on declared signs:

1. chain rule: with s = S(a), f = <s, gamma>, d f/d a_u = s_u (gamma_u - f), so for any q and
   b = K q, <grad_p f, q> = Cov_s(b, gamma) (checked for T = 2..5 with free logits);
   hence <grad L(p), q> = (1/n) sum_i loss'_i Cov_{s_i}(K_i q, gamma_i) (the SPEC formula);
2. Assumption B, gamma = g0 * 1 + Delta * e_opt: Cov_s(a, gamma) = Delta s_opt sum_{t != opt}
   s_t (a_opt - a_t), for every T (symbolic sums over t = 1..T with a Kronecker delta and
   sum_t s_t = 1), and again with explicit symbols for T = 2..6;
3. sign: with a = K p_mm the (ATT-SVM) constraints give a_opt - a_t = 1 + c_t, c_t >= 0, so
   the covariance is a sum of positive terms for Delta > 0 and s > 0, and loss' < 0
   (Assumption A: strictly decreasing) makes every summand of <grad L(p), p_mm> negative.
"""

import sympy as sp

from attnsvm.claims import Derivation, Verdict


def _cov(s, a, b):
    return sum(si * ai * bi for si, ai, bi in zip(s, a, b)) - sum(si * ai for si, ai in zip(s, a)) * sum(si * bi for si, bi in zip(s, b))


def chain_rule_residual(T: int) -> sp.Expr:
    """<grad_a f, b> - Cov_s(b, gamma) with s = softmax(a), f = <s, gamma>."""
    a = sp.symbols(f"a1:{T + 1}", real=True)
    b = sp.symbols(f"b1:{T + 1}", real=True)
    g = sp.symbols(f"g1:{T + 1}", real=True)
    E = sp.symbols(f"E1:{T + 1}", positive=True)
    Z = sum(sp.exp(x) for x in a)
    s = [sp.exp(x) / Z for x in a]
    f = sum(si * gi for si, gi in zip(s, g))
    r = sum(sp.diff(f, a[u]) * b[u] for u in range(T)) - _cov(s, b, g)
    return sp.cancel(sp.together(r.subs({x: sp.log(e) for x, e in zip(a, E)})))   # exact: exp(a_t) = E_t > 0


def covariance_residual(T: int, opt: int = 0) -> sp.Expr:
    """Cov_s(a, g0 + Delta e_opt) - Delta s_opt sum_{t != opt} s_t (a_opt - a_t), s on the simplex."""
    a = sp.symbols(f"a1:{T + 1}", real=True)
    s = list(sp.symbols(f"s1:{T}", positive=True))
    s.append(1 - sum(s))
    g0, D = sp.symbols("g0 Delta", real=True)
    gamma = [g0 + D * int(t == opt) for t in range(T)]
    rhs = D * s[opt] * sum(s[t] * (a[opt] - a[t]) for t in range(T) if t != opt)
    return sp.expand(_cov(s, a, gamma) - rhs)


def covariance_residual_general() -> sp.Expr:
    """The same identity for a symbolic number of tokens T (opt <= T): sums over t = 1..T."""
    t, T, o = sp.symbols("t T o", integer=True, positive=True)
    s, a = sp.IndexedBase("s"), sp.IndexedBase("a")
    g0, D = sp.symbols("g0 Delta", real=True)
    SA, S = sp.symbols("SA S")                                  # sum_t s_t a_t and sum_t s_t
    gamma = g0 + D * sp.KroneckerDelta(t, o)

    def total(expr):
        """sum_{t=1}^T expr, term by term, with factors free of t taken out of the sum."""
        out = 0
        for term in sp.Add.make_args(sp.expand(expr)):
            free, dep = term.as_independent(t, as_Add=False)
            value = sp.Sum(dep, (t, 1, T)).doit()
            out += free * (value.args[0][0] if isinstance(value, sp.Piecewise) else value)   # branch o <= T
        return out.subs({sp.Sum(a[t] * s[t], (t, 1, T)): SA, sp.Sum(s[t], (t, 1, T)): S})

    cov = total(s[t] * a[t] * gamma) - total(s[t] * a[t]) * total(s[t] * gamma)
    # sum over t != o equals the sum over all t: the t = o term s_o (a_o - a_o) is zero.
    rhs = D * s[o] * total(s[t] * (a[o] - a[t]))
    return sp.expand((cov - rhs).subs(S, 1))


def descent_sign(T: int = 4) -> tuple[bool, bool]:
    """(Cov > 0, loss' * Cov < 0) with a_opt - a_t = 1 + c_t, c_t >= 0, Delta > 0, s > 0, loss' < 0."""
    s = sp.symbols(f"s1:{T + 1}", positive=True)
    c = sp.symbols(f"c2:{T + 1}", nonnegative=True)
    D, m = sp.symbols("Delta m", positive=True)               # loss' = -m
    cov = D * s[0] * sum(s[t] * (1 + c[t - 1]) for t in range(1, T))
    return bool(cov.is_positive), bool((-m * cov).is_negative)


def derive() -> Derivation:
    chain = {T: chain_rule_residual(T) for T in (2, 3, 4, 5)}
    small = {(T, opt): covariance_residual(T, opt) for T in (2, 3, 4, 5, 6) for opt in (0, T - 1)}
    general = covariance_residual_general()
    positive, negative = descent_sign()
    ok = all(r == 0 for r in chain.values()) and all(r == 0 for r in small.values()) and general == 0 and positive and negative
    return Derivation(
        "<grad L(p), p_mm> = (1/n) sum_i loss'_i Delta_i s_{i,opt} sum_{t != opt} s_it (a_{i,opt} - a_it) < 0 under Assumptions A, B",
        Verdict.PROVED if ok else Verdict.REFUTED,
        {"chain_rule_residuals": {f"T={T}": str(r) for T, r in chain.items()},
         "covariance_residuals": {f"T={T},opt={o}": str(r) for (T, o), r in small.items()},
         "covariance_residual_symbolic_T": str(general),
         "sign": {"Cov > 0 given a_opt - a_t >= 1": positive, "loss' Cov < 0 given loss' < 0": negative},
         "closing_step": "every input contributes loss'_i Cov_i < 0, so the mean is negative for every finite p"},
    )
