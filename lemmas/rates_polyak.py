"""Implicit bias and fast rates (
docs/statements.md#rates-polyak), the directional rate of the Polyak step (f_star = L_inf):
1 - corr(W_t, W_mm(opt)) <= C log(t)/t in the covered settings of rates-global (OUR reconstruction,
as rates-ngd).

The Polyak step moves along -grad L like normalized GD, with length (L - L_inf)/||grad L||. sympy
checks (symbolic T, symbolic n) the two facts that bound this length below by rho_0 / Z: under
Assumption B, gamma_opt - f_i = Delta_i (1 - s_i,opt), so L - L_inf >= (1/n) sum_i |loss'(gamma_i,opt)|
Delta_i (1 - s_i,opt) (convexity of the loss, cited), while ||grad L|| <= (1/n) sum_i |loss'(f_i)|
Delta_i (1 - s_i,opt) Z (rates-speedup's bound); and the weighted ratio is at least
rho_0 = min_i loss'(gamma_i,opt)/loss'(min_t gamma_it). From there the argument of rates-ngd applies
with eta replaced by rho_0/Z.
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.rate_identities import (
    corr_gap_bound,
    descent_direction,
    linear_growth,
    progress_per_step,
)
from attnsvm.claims.symbolic import T, o, residuals, t, total

STATEMENT = ("in the covered settings (rates-global), from a random start of scale <= 0.1, the Polyak step with "
             "f_star = L_inf has 1 - corr(W_t, W_mm(opt)) <= C log(t)/t")
RECONSTRUCTION = ("the law is our reconstruction (paper C's expressions are not in papers/); f_star = L_inf as in "
                  "rates-global; the small start is our addition, its necessity not established (the former witness, "
                  "a start thrown to norm 1e6 by one capped step, converged to gap 1e-10 with a start-dependent "
                  "constant; NOTES.md)")


def score_deficit() -> dict:
    """Under Assumption B (gamma_t = g0 + Delta [t = opt]) and sum_t s_t = 1: gamma_opt - <s, gamma> = Delta (1 - s_opt)
    (symbolic T)."""
    s = sp.IndexedBase("s", positive=True)
    g0, D = sp.symbols("g0 Delta", real=True)
    f = total(s[t] * (g0 + D * sp.KroneckerDelta(t, o)))
    deficit = (g0 + D) - f - D * (1 - s[o])
    return residuals(deficit=sp.expand(deficit.subs(sp.Sum(s[t], (t, 1, T)), 1)))


def step_length_ratio() -> dict:
    """With x_i = Delta_i (1 - s_i,opt) >= 0, a_i = |loss'(gamma_i,opt)| = rho_0 b_i + c_i (c_i >= 0,
    b_i = |loss'(f_i)|):
    sum_i a_i x_i - rho_0 sum_i b_i x_i = sum_i c_i x_i >= 0 (symbolic n), so (L - L_inf)/||grad L|| >= rho_0 / Z."""
    n, i = sp.Symbol("n", integer=True, positive=True), sp.Symbol("i", integer=True, positive=True)
    x, b, c = (sp.IndexedBase(k, nonnegative=True) for k in ("x", "b", "c"))
    rho0 = sp.Symbol("rho_0", positive=True)
    gap = total((rho0 * b[i] + c[i]) * x[i], i, n) - rho0 * total(b[i] * x[i], i, n)
    expected = total(c[i] * x[i], i, n)
    return residuals(ratio_slack=gap - expected, slack_nonnegative=bool(expected.is_nonnegative))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("under Assumption B, -grad L is a positive combination of the z_it and W_mm(opt) a descent direction "
             "(symbolic T)", "symbolic", descent_direction, by=("lemma4", "rates-global", "assumption-B")),
        Step("under Assumption B, gamma_opt - f_i = Delta_i (1 - s_i,opt) (symbolic T)", "symbolic", score_deficit),
        Step("convexity of the loss: loss(f) - loss(gamma) >= |loss'(gamma)| (gamma - f) for f <= gamma, so "
             "L - L_inf >= (1/n) sum_i |loss'(gamma_i,opt)| Delta_i (1 - s_i,opt); ||grad L|| <= (1/n) sum_i "
             "|loss'(f_i)| Delta_i (1 - s_i,opt) Z", "cited",
             reference="convexity of the logistic loss; the gradient bound of lemmas/rates_speedup.py (step 2)",
             by=("rates-speedup",)),
        Step("the Polyak length (L - L_inf)/||grad L|| >= rho_0/Z, rho_0 = min_i loss'(gamma_i,opt)/"
             "loss'(min_t gamma_it) "
             "(symbolic n)", "symbolic", step_length_ratio),
        Step("each step gains at least (rho_0/Z)/Z along W_mm (rates-ngd's step with eta = rho_0/Z)", "symbolic",
             progress_per_step, by=("rates-ngd",)),
        Step("the gains telescope to linear growth of <W_t, W_mm/||W_mm||> (symbolic t)", "symbolic", linear_growth),
        Step("1 - corr(W, W_mm) <= ||r||^2/(2 a^2) (exact factorisation)", "symbolic", corr_gap_bound),
        Step("the orthogonal residual grows at most like sqrt(t log t) (paper C's argument; not in papers/)", "open"),
        Step("the fitted exponent of 1 - corr(W_t, W_mm) is at most the law's (-1 + 1/ln t) + 0.1", "numeric",
             reference="checks/rates_polyak.py (Polyak from rates-global's starts; exponent fitted over [H/8, H])",
             by=("rates-global",)),
    ), RECONSTRUCTION)
