"""Transformers as SVMs, the (K, Q) regularization path (claim 2, the paper's Section 3;
docs/statements.md#tfsvm-regpath-kq).
Our reconstruction of the statement (the text we have gives no formulas): with (K, Q)(R) =
argmin L(K Q^T) over ||K||_F^2 + ||Q||_F^2 <= 2R (K, Q in R^{d x m}), K Q^T / R converges to the
nuclear-norm max-margin set W*_mm(opt)/||W*_mm||_* when m >= d, and to the solutions of the
rank-constrained problem (nuclear norm, rank W <= m) when m < d.

The proof reduces the (K, Q) ball to a ball of W: min {(||K||^2 + ||Q||^2)/2 : K Q^T = W} = ||W||_*
for rank W <= m (sympy: the balanced SVD factorisation attains it, AM-GM; the trace-duality
lower bound is cited), so {K Q^T} over the (K, Q) ball is {||W||_* <= R, rank W <= m}; the
path argument for that scaled set is cited; the limits on sampled data are numeric.
"""

import sympy as sp

from attnsvm.claims.identities import am_gm, balanced
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import residuals

STATEMENT = ("Assumption A, opt strictly optimal, (Att-SVM) for opt feasible: the (K, Q) path min L(K Q^T) s.t. "
             "||K||_F^2 + ||Q||_F^2 <= 2R has K Q^T / R -> the nuclear-norm solutions W*_mm(opt)/||W*_mm||_* (m >= d), "
             "or the solutions of min ||W||_* s.t. the (Att-SVM) rows and rank W <= m (m < d)")
RECONSTRUCTION = ("statement reconstructed from the paper's Section 3 as summarised (the summary has no formulas); the "
                  "rank form for m < d is our extension")


def scaling() -> dict:
    """(c K)(c Q)^T = c^2 K Q^T and ||c K||^2 + ||c Q||^2 = c^2 (||K||^2 + ||Q||^2): the (K, Q) ball of 2R maps onto the
    W-set {||W||_* <= R, rank <= m} homogeneously in R (degree 1 in R), so directions of K Q^T / R are directions in a
    fixed set (symbolic d, m via matrix symbols)."""
    dd, m = sp.symbols("d m", integer=True, positive=True)
    K, Q = sp.MatrixSymbol("K", dd, m), sp.MatrixSymbol("Q", dd, m)
    c = sp.Symbol("c", positive=True)
    return residuals(product=sp.expand((c * K) * (c * Q).T - c ** 2 * (K * Q.T)),
                     norms=sp.expand(sp.trace((c * K).T * (c * K)) - c ** 2 * sp.trace(K.T * K)))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("upper bound: the balanced factorisation of an SVD has K Q^T = W and (||K||^2 + ||Q||^2)/2 = ||W||_* "
             "(needs m >= rank W; symbolic d)", "symbolic", balanced),
        Step("lower bound: ||K Q^T||_* <= ||K||_F ||Q||_F (trace duality and Cauchy-Schwarz)", "cited",
             reference="Recht, Fazel, Parrilo 2010, Lemma 5.1 (Srebro, Rennie, Jaakkola 2005)"),
        Step("AM-GM: ||K||_F ||Q||_F <= (||K||_F^2 + ||Q||_F^2)/2, so the (K, Q) ball of 2R is the W-set "
             "{||W||_* <= R, rank W <= m}", "symbolic", am_gm),
        Step("the map is homogeneous: scaling (K, Q) by c scales K Q^T and the budget by c^2 (symbolic sizes)",
             "symbolic", scaling),
        Step("the path argument of the core Theorem 1 with ||.||_* (and the rank constraint, a closed cone) in place "
             "of ||.||_2: the direction that maximises the margin of opt per unit of the set's gauge wins, i.e. W*_mm "
             "(m >= d) or the rank-<= m nuclear SVM (m < d)", "cited",
             reference="Transformers as SVMs, Section 3 (regularization path in (K, Q)); core paper Appendix D.1",
             by=("theorem1", "tfsvm-nuclear")),
        Step("the limits on sampled data where W_mm and the limit differ (corr < 0.99), and the necessity of the "
             "(K, Q) ball (the Frobenius ball goes to W_mm)", "numeric",
             reference="checks/tfsvm_regpath_kq.py (nuclear excess along R = 2^k value; witness "
                       "counterexamples/witnesses/tfsvm-regpath-kq--kq_parameterisation.json)"),
    ), RECONSTRUCTION)
