"""Implicit bias and fast rates (docs/statements.md#rates-ngd), the directional rate of normalized GD:
1 - corr(W_t, W_mm(opt)) <= C log(t)/t in the covered settings of rates-global.

Paper C's finite-time theorems are not in papers/ (abstract only): the law is OUR reconstruction, the
standard normalized-GD rate on separable exponential-tailed problems (Nacson et al. 2019; Ji &
Telgarsky 2021), and the steps below are the argument that carries it over. sympy checks (symbolic T,
symbolic t): under Assumption B -grad L is a positive combination of the key differences
z_it = k_{i,opt} - k_it (rates-global, Lemma 4's identity), so every normalized step gains at least
eta / (Z ||W_mm||) along W_mm/||W_mm|| (Z = max ||z_it||), the gains telescope to a linear growth
of <W_t, W_mm>, and 1 - corr(W, W_mm) <= ||r||^2 / (2 a^2) for W = a W_mm/||W_mm|| + r. The bound on
the residual r_t (which gives log t / t) is open here; the rate is checked numerically.
"""

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.rate_identities import (
    corr_gap_bound,
    descent_direction,
    linear_growth,
    progress_per_step,
)

STATEMENT = ("in the covered settings (rates-global), normalized GD W_{t+1} = W_t - eta grad L/||grad L|| has "
             "1 - corr(W_t, W_mm(opt)) <= C log(t)/t")
RECONSTRUCTION = ("the law 1 - corr <= C log(t)/t is our reconstruction (paper C's expressions are not in papers/): "
                  "the normalized-GD rate of separable logistic regression carried over by the positive-combination "
                  "structure of the gradient under Assumption B")


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("under Assumption B, -grad L = (1/n) sum_i |loss'_i| Delta_i s_i,opt sum_t s_it z_it: a positive "
             "combination "
             "of the z_it, and W_mm(opt) a descent direction (Lemma 4 in R^{d^2}; symbolic T)", "symbolic",
             descent_direction, by=("lemma4", "rates-global", "assumption-B")),
        Step("each normalized step gains <d_t, W_mm> >= 1/Z along W_mm (SVM constraints + triangle inequality; "
             "symbolic number of terms)", "symbolic", progress_per_step),
        Step("the gains telescope: <W_t, W_mm/||W_mm||> >= <W_0, W_mm/||W_mm||> + eta t/(Z ||W_mm||) (symbolic t)",
             "symbolic", linear_growth),
        Step("1 - corr(W, W_mm) <= ||r||^2/(2 a^2) for W = a W_mm/||W_mm|| + r (exact factorisation)", "symbolic",
             corr_gap_bound),
        Step("the residual orthogonal to W_mm grows at most like sqrt(t log t), so 1 - corr <= C log(t)/t (paper C's "
             "finite-time argument; its form is not in papers/)", "open"),
        Step("the fitted exponent of 1 - corr(W_t, W_mm) is at most the law's (-1 + 1/ln t) + 0.1", "numeric",
             reference="checks/rates_ngd.py (NGD from rates-global's starts; exponent fitted over [H/8, H], slower "
                       "runs re-measured at 4 H)", by=("rates-global",)),
    ), RECONSTRUCTION)
