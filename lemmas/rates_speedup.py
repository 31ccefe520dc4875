"""Implicit bias and fast rates (
docs/statements.md#rates-speedup), why adaptive steps are faster: the gradient is proportional to
the softmax mass off the selected token, so a fixed step stalls as attention sparsifies while a
normalized (or Polyak) step does not.

sympy checks (symbolic T) the cancellation-free gradient form of attnsvm.attention.gradients and
the bound ||grad L|| <= |loss'| 2 max|gamma| max_t ||k_t - k_ref|| (1 - s_ref). The consequence for
the rates (paper C's finite-time bounds, whose forms are not in papers/) is open here; the
speed-up the claim states is measured.
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import T, o, residuals, t, total, u

STATEMENT = ("in the covered settings of rates-global, normalized GD and Polyak converge in direction to W_mm at a "
             "faster rate than fixed-step GD at any stable step")


def gradient_form() -> dict:
    """One coordinate (K_t the t-th key's): sum_t K_t s_t (gamma_t - f) = sum_t s_t (gamma_t - f)(K_t - K_ref) since
    sum_t s_t (gamma_t - f) = 0; and gamma_t - f = sum_u s_u (gamma_t - gamma_u) (sum_t s_t = 1, symbolic T)."""
    s, g, K = sp.IndexedBase("s", positive=True), sp.IndexedBase("gamma", real=True), sp.IndexedBase("K", real=True)
    S = sp.Sum(s[t], (t, 1, T))
    f = total(s[t] * g[t])
    centred = total(K[t] * s[t] * (g[t] - f)) - total(s[t] * (g[t] - f) * (K[t] - K[o]))
    f_u = total(s[u] * g[u], u, T)
    gaps = g[t] - f_u - total(s[u] * (g[t] - g[u]), u, T).subs(sp.Sum(s[u], (u, 1, T)), 1)
    return residuals(reference_term_drops=sp.expand(centred.subs(S, 1)), score_gaps=gaps)


def off_mass_bound() -> dict:
    """Non-reference tokens t = 1..T-1 with |gamma_t - f| = 2G - alpha_t and ||k_t - k_ref|| = c_t = D - beta_t
    (alpha, beta, c >= 0): 2 G D sum_t s_t - sum_t s_t (2G - alpha_t) c_t = sum_t s_t (2 G beta_t + alpha_t c_t) >= 0,
    and sum_t s_t = 1 - s_ref (symbolic T)."""
    T1 = sp.Symbol("T_minus_1", integer=True, positive=True)
    s = sp.IndexedBase("s", positive=True)
    alpha, beta, c = (sp.IndexedBase(n, nonnegative=True) for n in ("alpha", "beta", "c"))
    G = sp.Symbol("G", positive=True)
    bound = 2 * G * total(s[t] * (c[t] + beta[t]), t, T1)                # 2 G D sum_t s_t with D = c_t + beta_t
    slack = bound - total(s[t] * (2 * G - alpha[t]) * c[t], t, T1)
    expected = total(s[t] * (2 * G * beta[t] + alpha[t] * c[t]), t, T1)
    return residuals(slack=slack - expected, slack_nonnegative=bool(expected.is_nonnegative))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("gradient form: K^T S'(a) gamma = sum_t s_t (gamma_t - f)(k_t - k_ref) with gamma_t - f = sum_u s_u "
             "(gamma_t - gamma_u) (symbolic T)", "symbolic", gradient_form),
        Step("every term with t != ref carries s_t: ||grad L|| <= |loss'| 2 max|gamma| max_t ||k_t - k_ref|| "
             "(1 - s_ref) "
             "(symbolic T)", "symbolic", off_mass_bound),
        Step("rates: a fixed step moves W by O(1 - s_ref) = O(e^{-c ||W||}), so ||W_t|| grows like log t, while NGD "
             "moves eta per step and Polyak's length stays O(1) (paper C's finite-time rates; their forms are not in "
             "papers/)", "open"),
        Step("NGD's and Polyak's 1 - corr(W_t, W_mm) fall at a steeper log-log rate than GD's at any stable step "
             "(1/L_p to 64/L_p)", "numeric",
             reference="checks/rates_speedup.py (log-log slopes over the last octave [H/2, H] from random and hard "
                       "starts, against every stable GD step; a GD-faster pair re-judged at 4 H and 16 H; frozen "
                       "adaptive runs untrusted, trapped ones cross-checked in exact arithmetic)",
             by=("rates-global", "lemma6")),
    ))
