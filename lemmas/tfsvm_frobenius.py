"""Transformers as SVMs, claim 1 (
docs/statements.md#tfsvm-frobenius): the W-parameterised attention converges in direction to the
Frobenius max-margin W_mm.

The W-problem is the core paper's p-problem in dimension d^2 with keys k_it = vec(x_it z_i^T):
sympy checks (symbolic d and T) that the logits, the norm, the (ATT-SVM) rows and the gradients
correspond under vec. The core Theorems 1 and 3 then apply with ||p|| = ||W||_F (cited); the
normalized GD the check runs (the authors' rule) is covered by neither and is supported
numerically.
"""

from attnsvm.claims.identities import vectorisation, w_gradient
from attnsvm.claims.outline import Outline, Step

STATEMENT = ("the W-parameterised attention (logits x_it^T W z_i) trained by normalized GD converges in direction to "
             "W_mm(alpha) (Frobenius), alpha its selected tokens; its regularization path to W_mm(opt)")


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("vec: the logits are linear in p = vec(W) with keys vec(x_it z_i^T), ||p|| = ||W||_F, and (ATT-SVM) in p "
             "is the Frobenius W-SVM (symbolic d)", "symbolic", vectorisation),
        Step("the W-gradient is the reshaped p-gradient (symbolic T, d): GD and NGD on W are GD and NGD on p",
             "symbolic", w_gradient),
        Step("the core Theorem 1 (path -> GMM) and Theorem 3 (GD from an LMM cone -> that LMM) in R^{d^2} give the "
             "Frobenius limits W_mm(opt) and W_mm(alpha)", "cited",
             reference="core paper Theorems 1 and 3 (outlines lemmas/theorem1.py, lemmas/theorem3.py); Transformers as "
                       "SVMs, Sections 3 and 5", by=("theorem1", "theorem3")),
        Step("normalized GD (the rule the authors run, outside Theorem 3's eta <= 1/L_p) converges to W_mm of its "
             "selected tokens", "numeric",
             reference="checks/tfsvm_frobenius.py (NGD runs from seeded starts: 1 - corr(W_H, W_mm(alpha_H)) <= 0.01, "
                       "plateaus refuted only after 4x the horizon)"),
    ))
