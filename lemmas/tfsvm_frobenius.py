"""Transformers as SVMs, claim 1 (
docs/statements.md#tfsvm-frobenius): the W-parameterised attention converges in direction to the
Frobenius max-margin W_mm.

The W-problem is the core paper's p-problem in dimension d^2 with keys k_it = vec(x_it z_i^T):
sympy checks (symbolic d and T) that the logits, the norm, the (ATT-SVM) rows and the gradients
correspond under vec. The core Theorems 1 and 3 then apply with ||p|| = ||W||_F (cited); the
normalized GD the check runs (the authors' rule) is covered by neither and is supported
numerically.
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import d, j, k, residuals, t, total

STATEMENT = ("the W-parameterised attention (logits x_it^T W z_i) trained by normalized GD converges in direction to "
             "W_mm(alpha) (Frobenius), alpha its selected tokens; its regularization path to W_mm(opt)")


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


def gradients() -> dict:
    """The W-gradient sum_t c_t x_t z^T is the reshaped p-gradient sum_t c_t vec(x_t z^T), entry by entry (symbolic T),
    c = loss' S'(a) gamma: GD / NGD on W are GD / NGD on p = vec(W)."""
    c, x, z = sp.IndexedBase("c", real=True), sp.IndexedBase("x", real=True), sp.IndexedBase("z", real=True)
    return residuals(entry=total(c[t] * x[t, j] * z[k]) - z[k] * total(c[t] * x[t, j]))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("vec: the logits are linear in p = vec(W) with keys vec(x_it z_i^T), ||p|| = ||W||_F, and (ATT-SVM) in p is "
             "the Frobenius W-SVM (symbolic d)", "symbolic", vectorisation),
        Step("the W-gradient is the reshaped p-gradient (symbolic T, d): GD and NGD on W are GD and NGD on p",
             "symbolic", gradients),
        Step("the core Theorem 1 (path -> GMM) and Theorem 3 (GD from an LMM cone -> that LMM) in R^{d^2} give the "
             "Frobenius limits W_mm(opt) and W_mm(alpha)", "cited",
             reference="core paper Theorems 1 and 3 (outlines lemmas/theorem1.py, lemmas/theorem3.py); Transformers as "
                       "SVMs, Sections 3 and 5", by=("theorem1", "theorem3")),
        Step("normalized GD (the rule the authors run, outside Theorem 3's eta <= 1/L_p) converges to W_mm of its "
             "selected tokens", "numeric",
             reference="checks/tfsvm_frobenius.py (NGD runs from seeded starts: 1 - corr(W_H, W_mm(alpha_H)) <= 0.01, "
                       "plateaus refuted only after 4x the horizon)"),
    ))
