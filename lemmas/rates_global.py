"""Implicit bias and fast rates (SPEC.md C), global convergence: the two algebraic facts the
covered settings rest on, in the W-parameterisation (keys vec(x_it z_i^T), SPEC.md B).

(a) Assumption B makes W_mm(opt) a descent direction everywhere (core Lemma 4): with scores
    gamma = g0 1 + Delta e_opt and a = logits of W_mm, Cov_s(a, gamma) =
    Delta s_opt sum_{t != opt} s_t (a_opt - a_t) >= Delta s_opt (1 - s_opt) > 0 since
    a_opt - a_t >= 1, so <-grad L(W), W_mm> > 0 and no finite stationary point exists; sympy
    checks the identity for T = 3 with sum_t s_t = 1.
(b) The Polyak step's f_star: the margin <s, gamma> = gamma_opt - sum_t s_t (gamma_opt - gamma_t)
    <= gamma_opt, so L(W) >= L_inf = mean_i loss(gamma_{i,opt}) for a decreasing loss, with
    equality approached along W_mm(opt) (the infimum is L_inf, not 0, for a fixed head); sympy
    checks the identity.
Closing step (our reconstruction of the covered settings): with n = 1, (a) plus the core
paper's Theorem 2(b) in R^{d^2} give directional convergence to W_mm; with every non-optimal
token a support vector of W_mm(opt), TF-as-SVM's global theorem (as we reconstruct it; the
check tests the reconstruction, the derivation does not prove it) rules out other limits.
Normalized GD and Polyak follow the same descent direction with adaptive lengths.
"""

import sympy as sp

from attnsvm.claims import Derivation, Verdict


def derive() -> Derivation:
    T = 3
    s = list(sp.symbols(f"s0:{T}", positive=True))
    a = sp.symbols(f"a0:{T}", real=True)
    g0, Delta = sp.symbols("g0 Delta", real=True)
    opt = 0
    gam = [g0 + (Delta if t == opt else 0) for t in range(T)]
    Es = lambda f: sum(s[t] * f[t] for t in range(T))
    cov = Es([a[t] * gam[t] for t in range(T)]) - Es(a) * Es(gam)
    target = Delta * s[opt] * sum(s[t] * (a[opt] - a[t]) for t in range(T) if t != opt)
    on_simplex = {s[T - 1]: 1 - sum(s[:T - 1])}
    lemma4 = sp.expand((cov - target).subs(on_simplex))
    gam_free = sp.symbols(f"gamma0:{T}", real=True)
    margin = Es(gam_free)
    polyak = sp.expand((margin - (gam_free[opt] - sum(s[t] * (gam_free[opt] - gam_free[t]) for t in range(T))))
                       .subs(on_simplex))
    ok = lemma4 == 0 and polyak == 0
    return Derivation(
        "Assumption B: Cov_s(a, gamma) = Delta s_opt sum_{t != opt} s_t (a_opt - a_t) > 0 (W_mm a global descent "
        "direction); L >= L_inf = mean_i loss(gamma_{i,opt}) (the Polyak f_star)",
        Verdict.PROVED if ok else Verdict.REFUTED,
        {"residual_covariance_identity": str(lemma4), "residual_margin_identity": str(polyak),
         "sizes": f"T = {T}, softmax on the simplex",
         "covered_settings": "OUR reconstruction (the paper C text available gives no formulas): Assumption B, "
                             "W_mm(opt) feasible, and n = 1 or every non-optimal token a support vector",
         "closing_step": "a_opt - a_t >= 1 on W_mm(opt) gives Cov > 0; n = 1: core Theorem 2(b); the all-support-"
                         "vectors setting is cited (reconstructed), not derived here"},
    )
