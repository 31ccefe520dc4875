"""Transformers as SVMs, global convergence of GD under geometric conditions (claim 4,
docs/statements.md#tfsvm-global; the paper's
Section 4 as summarised: a significant score gap of the optimal tokens, and an initial gradient aligned with
them). Our reconstruction of the conditions (the summary gives no formulas): in every input
gamma_opt - max_{t != opt} gamma_t >= the spread of the other scores, and
(x_{i,opt} - x_it)^T (-grad L(0)) z_i > 0 for all i, t != opt_i; then GD (normalized, as the authors run it)
from W_0 = 0 converges in direction to W_mm(opt).

sympy checks the gradient at W = 0 (uniform attention: -grad L(0) = -(1/n) sum_i loss'_i (1/T) sum_t
(gamma_it - gammabar_i) x_it z_i^T, symbolic T) and that the first normalized step ranks the optimal tokens
exactly by the alignment margins; the convergence argument is cited, and the check is numeric.
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import T, residuals, t, total

STATEMENT = ("logistic loss, strict optimality, (Att-SVM) for opt feasible, score gap >= the spread of the non-optimal "
             "scores in every input, and (x_opt - x_t)^T (-grad L(0)) z_i > 0 => normalized GD from W_0 = 0 converges "
             "in direction to W_mm(opt)")
RECONSTRUCTION = ("both conditions are our reconstruction of the summary's 'the best tokens have a significant score "
                  "difference' and 'the initial gradient direction aligns with the best tokens'")


def gradient_at_zero() -> dict:
    """At W = 0 every logit is 0, s_t = 1/T, f = gammabar: the input's gradient coefficient
    sum_t s_t (gamma_t - f) x_t equals (1/T) sum_t (gamma_t - gammabar) x_t (symbolic T; one coordinate of x)."""
    g, x = sp.IndexedBase("gamma", real=True), sp.IndexedBase("x", real=True)
    s = 1 / T
    f = total(s * g[t])
    return residuals(uniform=total(s * (g[t] - f) * x[t]) - (total(g[t] * x[t]) - total(g[t]) * total(x[t]) / T) / T)


def first_step() -> dict:
    """W_1 = -eta G/||G|| (normalized step from 0, G = grad L(0)): logit gaps a_opt - a_t = (x_opt - x_t)^T W_1 z equal
    eta/||G|| times the alignment margins (x_opt - x_t)^T (-G) z, so alignment <=> the first iterate ranks every optimal
    token first (exact in the margins' sign; eta/||G|| > 0)."""
    eta, nG, m = sp.symbols("eta normG margin", positive=True)
    gap = eta / nG * m
    return residuals(positive=bool(gap.is_positive))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("the gradient at W = 0: uniform attention, -grad L(0) = -(1/n) sum_i loss'_i (1/T) sum_t (gamma_it - "
             "gammabar_i) x_it z_i^T (symbolic T)", "symbolic", gradient_at_zero, by=("tfsvm-frobenius",)),
        Step("alignment: the first normalized step ranks every optimal token first exactly when the alignment margins "
             "are positive", "symbolic", first_step),
        Step("from a point that ranks the optimal tokens first, a score gap at least the others' spread keeps -grad L "
             "correlated with W_mm(opt) along the trajectory (the Lemma 4 covariance argument with the non-optimal "
             "pairs' negative terms bounded by the spread), so the iterates stay in a cone around W_mm(opt) and "
             "converge to it", "cited", reference="Transformers as SVMs, Section 4 (global convergence; reconstructed)",
             by=("lemma4", "theorem3", "tfsvm-regpath-w")),
        Step("NGD from 0 on sampled data meeting both conditions converges to W_mm(opt); dropping either condition "
             "gives runs that converge to another LMM", "numeric",
             reference="checks/tfsvm_global.py (witnesses counterexamples/witnesses/tfsvm-global--*.json)"),
    ), RECONSTRUCTION)
