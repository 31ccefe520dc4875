"""Implicit bias and fast rates (
docs/statements.md#rates-global), global convergence: normalized GD and the Polyak step converge in
direction to W_mm(opt) from any start, in the data settings the paper covers.

Paper C's theorems are not in papers/ (only its abstract), so the covered settings are our
reconstruction: Assumption B, W_mm(opt) feasible, and n = 1 or every non-optimal token a support
vector. sympy checks (symbolic T) the two facts they rest on in the W-parameterisation (keys
vec(x_it z_i^T), tfsvm-frobenius): W_mm(opt) is a global descent direction (Lemma 4), and the
risk is bounded below by L_inf = mean_i loss(gamma_{i,opt}), the Polyak step's f_star. For GD and
n = 1 the core Theorem 2(b) applies (cited); NGD and Polyak are supported numerically.
"""

import sympy as sp

from attnsvm.claims.identities import margin_identity
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.rate_identities import descent_direction
from attnsvm.claims.symbolic import residuals, t, total

STATEMENT = ("in the covered settings (Assumption B, W_mm(opt) feasible, n = 1 or every non-optimal token a support "
             "vector), normalized GD and the Polyak step converge in direction to W_mm(opt) from every start")
RECONSTRUCTION = ("the covered settings and Polyak's f_star = L_inf are our reconstruction: paper C's text gives no "
                  "formulas (docs/statements.md#rates-global)")


def polyak_target() -> dict:
    """<s, gamma> = gamma_opt - sum_t s_t (gamma_opt - gamma_t) <= gamma_opt (every gap >= 0; symbolic T), so for a
    decreasing loss L(W) >= L_inf = mean_i loss(gamma_{i,opt})."""
    margin = margin_identity()
    s, gap = sp.IndexedBase("s", positive=True), sp.IndexedBase("gap", nonnegative=True)
    return residuals(margin_identity=margin["ok"], deficit_nonnegative=bool(total(s[t] * gap[t]).is_nonnegative))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("Assumption B makes W_mm(opt) a global descent direction: <-grad L(W), W_mm> > 0 for every W, so there is "
             "no finite stationary point (Lemma 4 in R^{d^2}; symbolic T)", "symbolic", descent_direction,
             by=("lemma4", "tfsvm-frobenius", "assumption-B")),
        Step("the Polyak target: L(W) >= L_inf = mean_i loss(gamma_{i,opt}) (margins <= gamma_opt; symbolic T), "
             "approached along W_mm(opt)", "symbolic", polyak_target, by=("definition1", "theorem1")),
        Step("n = 1: GD with eta <= 1/L_p converges in direction to W_mm(opt) (core Theorem 2(b) in R^{d^2})", "cited",
             reference="core paper Theorem 2(b), Appendix B.3 (outline lemmas/theorem2.py)", by=("theorem2",)),
        Step("normalized GD and Polyak converge globally in the covered settings (paper C's theorems; statement "
             "reconstructed)", "numeric",
             reference="checks/rates_global.py (NGD and Polyak from random and adversarial starts: 1 - corr(W_H, "
                       "W_mm(opt)) <= tolerance; a saturated run settled elsewhere, on another selection's W_mm or on "
                       "another direction (extrapolated gap limit), fails when it can be trusted: not coasting, "
                       "not held at a selection that is not locally optimal, float64 agreeing with mpmath where "
                       "deeply saturated)"),
    ), RECONSTRUCTION)
