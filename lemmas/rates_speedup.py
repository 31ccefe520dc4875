"""Implicit bias and fast rates (SPEC.md C), why adaptive steps are faster: the gradient is
proportional to the softmax mass off the selected token, so a fixed step stalls as attention
sparsifies while a normalized (or Polyak) step does not.

sympy checks, for T = 3 tokens with keys k_t in R^2, scores gamma_t and softmax s on the simplex:
(a) K^T S'(a) gamma = sum_t s_t (gamma_t - f)(k_t - k_ref), f = <s, gamma> (the cancellation-free
    form of attnsvm.attention.gradients; the k_ref term drops because sum_t s_t (gamma_t - f) = 0);
(b) gamma_t - f = sum_u s_u (gamma_t - gamma_u).
Closing step: every term with t != ref carries s_t, so ||grad L|| <= |loss'| * 2 max|gamma| *
max_t ||k_t - k_ref|| * (1 - s_ref): a GD step with eta = 1/L_p moves W by O(1 - s_ref), which
decays like exp(-c ||W||), so ||W_t|| grows only like log t and 1 - corr(W_t, W_mm) decays
slowly, while normalized GD moves eta per step (||W_t - W_0|| = eta t along a direction with
<-grad, W_mm> > 0 in the covered settings) and Polyak's length (L - L_inf)/||grad|| stays O(1).
The check measures the iteration counts and empirical rates; the rates' exact forms are not in
papers/ (SPEC.md C).
"""

import sympy as sp

from attnsvm.claims import Derivation, Verdict


def derive() -> Derivation:
    T, d, ref = 3, 2, 0
    s = list(sp.symbols(f"s0:{T}", positive=True))
    on_simplex = {s[T - 1]: 1 - sum(s[:T - 1])}
    gam = sp.symbols(f"gamma0:{T}", real=True)
    K = sp.Matrix(T, d, lambda t, j: sp.Symbol(f"k{t}_{j}", real=True))
    S = sp.Matrix(s)
    Sp = sp.diag(*s) - S * S.T
    textbook = K.T * Sp * sp.Matrix(gam)
    f = sum(s[t] * gam[t] for t in range(T))
    free = sum((s[t] * (gam[t] - f) * (K[t, :] - K[ref, :]).T for t in range(T)), sp.zeros(d, 1))
    grad = sp.expand((textbook - free).subs(on_simplex))
    diffs = [sp.expand((gam[t] - f - sum(s[u] * (gam[t] - gam[u]) for u in range(T))).subs(on_simplex)) for t in range(T)]
    ok = grad == sp.zeros(d, 1) and all(x == 0 for x in diffs)
    return Derivation(
        "grad = sum_t s_t (gamma_t - f)(k_t - k_ref): bounded by the off-mass 1 - s_ref, so fixed-step GD slows as "
        "attention sparsifies, NGD / Polyak do not",
        Verdict.PROVED if ok else Verdict.REFUTED,
        {"residual_gradient_form": str(grad.T.tolist()) if grad != sp.zeros(d, 1) else "0",
         "residual_score_gaps": str(diffs), "sizes": f"T = {T}, d = {d}",
         "closing_step": "||grad L|| <= |loss'| 2 max|gamma| max_t ||k_t - k_ref|| (1 - s_ref); the rates are "
                         "measured, not derived (their exact forms are not in papers/)"},
    )
