"""Transformers as SVMs, the W regularization path (claim 1, the paper's Section 3;
docs/statements.md#tfsvm-regpath-w). Our
reconstruction of the statement (the text we have gives no formulas): W(R) = argmin_{||W||_F <= R}
L(W) converges in direction to W_mm(opt) under Assumption A, strict optimality and feasibility;
confined to cone_mu(W_mm(alpha)) ∩ {||W||_F >= R0}, it converges to W_mm(alpha) for every locally
optimal alpha (Definition 2 on the W-SVM), which is how a path reaches a non-global LMM.

The proof is the core paper's in dimension d^2: sympy checks (symbolic d, T) that the logits,
the norm, the SVM rows and the gradients correspond under p = vec(W), keys vec(x_it z_i^T), and
that the keyed lift (`svm.wlift.lifted`) keeps every score; the p-path theorems are then cited
and the local (cone) form is supported numerically.
"""

import sympy as sp

from attnsvm.claims.identities import vectorisation, w_gradient
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import residuals

STATEMENT = ("Assumption A: W(R) = argmin_{||W||_F <= R} L(W) has W(R)/R -> W_mm(opt)/||W_mm(opt)||_F when opt is "
             "strictly optimal and (Att-SVM) for opt is feasible; for alpha locally optimal, the path confined to "
             "cone_mu(W_mm(alpha)) ∩ {R0 <= ||W||_F <= R} converges in direction to W_mm(alpha) (small mu, large R0)")
RECONSTRUCTION = ("statement reconstructed from the paper's Sections 3-5 as summarised (the summary has no formulas); "
                  "the cone form (mu, R0) follows the core paper's local regularization path; the check uses mu = "
                  "min(0.01, mu*/4) (mu*: the widest cone where no higher-scoring token takes the least margin), "
                  "R0 = 8 ||W_mm(alpha)||_F")


def lifted_scores() -> dict:
    """The keyed lift puts Y_i gamma_it in the last coordinate and reads it with v = e_last, W' = diag(1, .., 1, 0): its
    score Y_i (Y_i gamma_it) is gamma_it for Y_i in {-1, +1} (its key (vec(x z^T), 0) by the construction)."""
    Y, g = sp.symbols("Y gamma", real=True)
    return residuals(plus=(Y * (Y * g) - g).subs(Y, 1), minus=(Y * (Y * g) - g).subs(Y, -1))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("vec: logits, norm and (Att-SVM) rows of W are those of the p-problem with keys vec(x_it z_i^T), ||p|| = "
             "||W||_F (symbolic d)", "symbolic", vectorisation),
        Step("the W-gradient is the reshaped p-gradient (symbolic T, d): the W path is the p path in R^{d^2}",
             "symbolic", w_gradient),
        Step("the keyed lift keeps every score gamma_it and its keys are vec(x_it z_i^T): Definition 2 (neighbours, "
             "local optimality) of the W-SVM is Definition 2 of the lifted p-SVM", "symbolic", lifted_scores,
             by=("definition2",)),
        Step("global path: the core Theorem 1 in R^{d^2} gives W(R)/R -> W_mm(opt)/||W_mm(opt)||_F", "cited",
             reference="core paper Theorem 1 (outline lemmas/theorem1.py); Transformers as SVMs, Section 3",
             by=("theorem1",)),
        Step("local path: for alpha locally optimal and small mu, large R0, the path confined to cone_mu(W_mm(alpha)) "
             "∩ {||W|| >= R0} converges to W_mm(alpha) (the margin argument of Theorem 1 inside the cone, where alpha "
             "is selected and only its SVM-neighbours, all lower-scoring, carry the slowest-decaying mass)", "cited",
             reference="Transformers as SVMs, Section 3 (local regularization path); core paper Appendix D.1",
             by=("theorem4",)),
        Step("both limits on sampled data, and the necessity of local optimality and of pairing the unconstrained path "
             "with opt", "numeric",
             reference="checks/tfsvm_regpath_w.py (gap 1 - corr(W(R), W_mm(alpha)) along R = 2^k R0; witnesses "
                       "counterexamples/witnesses/tfsvm-regpath-w--*.json)"),
    ), RECONSTRUCTION)
