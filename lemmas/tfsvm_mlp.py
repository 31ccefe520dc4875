"""Transformers as SVMs, claim 6 (
docs/statements.md#tfsvm-mlp; Section 6, with the core paper's Appendix D): with a nonlinear
head the attention limit W_t = W^fin + R_t W^mm (R_t -> oo) selects a SET O_i per input: the
generalized SVM W^mm (margins >= 1 from O_i to the rest, 0 within O_i) masks the other tokens
out, and the finite part W^fin fixes the composition inside O_i.

sympy checks the softmax algebra of that decomposition for any sizes of O_i and its complement
(logits a_t = b_t + R m_t with m_t = m on O_i and m - 1 - delta_t, delta_t >= 0, outside). That
the regularization path selects the optimal sets is the core paper's Theorem 8 (cited); that
gradient descent with an MLP head converges to W^fin + R_t W^mm is the paper's prediction,
supported numerically and not proved.
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import residuals, t, total, u

STATEMENT = ("with an MLP head, normalized GD on W converges to W^fin + R_t W^mm(O): W^mm the generalized SVM of the "
             "selected sets O_i (masking the tokens outside them), W^fin the finite part fixing the composition inside")


def softmax_limits() -> dict:
    """With |O| = k tokens of logit b_t + R m and l others of logit b_u + R (m - 1 - delta_u) (symbolic k, l):
    Z = e^{R m} (S + X), S = sum_O e^{b_t}, X = sum_u e^{b_u} e^{-R(1 + delta_u)}; each term of X -> 0 as R -> oo, so
    s_t -> e^{b_t}/S inside O and s_u -> 0 outside; within O, a_t - a_t' = b_t - b_t' does not involve R."""
    kk, ll = sp.symbols("k l", integer=True, positive=True)
    bO, bN = sp.IndexedBase("bO", real=True), sp.IndexedBase("bN", real=True)
    delta = sp.IndexedBase("delta", nonnegative=True)
    R, m = sp.Symbol("R", positive=True), sp.Symbol("m", real=True)
    S = total(sp.exp(bO[t]), t, kk)
    X = total(sp.exp(bN[u]) * sp.exp(-R * (1 + delta[u])), u, ll)
    Z = (total(sp.exp(bO[t]) * sp.exp(R * m), t, kk)
         + total(sp.exp(bN[u]) * sp.exp(R * m) * sp.exp(-R * (1 + delta[u])), u, ll))
    b, dl = sp.Symbol("b", real=True), sp.Symbol("delta", nonnegative=True)
    Sx, Xx = sp.Symbol("S", positive=True), sp.Symbol("X", positive=True)
    term = sp.limit(sp.exp(b) * sp.exp(-R * (1 + dl)), R, sp.oo)
    inside = sp.limit(sp.exp(b) / (Sx + Xx), Xx, 0, "+") - sp.exp(b) / Sx
    outside = sp.limit(Xx / (Sx + Xx), Xx, 0, "+")
    t2 = sp.Symbol("t2", integer=True, positive=True)
    within = (bO[t] + R * m) - (bO[t2] + R * m) - (bO[t] - bO[t2])
    return residuals(partition=Z - sp.exp(R * m) * (S + X), outside_term_limit=term, composition_limit=inside,
                     masked_limit=outside, within_set=within)


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("softmax of W^fin + R W^mm: as R -> oo the tokens outside O_i get mass -> 0 and inside O_i the softmax of "
             "W^fin's logits alone, which R does not change (any sizes of O_i)", "symbolic", softmax_limits),
        Step("under Assumption D the regularization path with a nonlinear head converges to the solution set of "
             "(ATT-SVM'), which separates the optimal sets O_i from the rest", "cited",
             reference="core paper Appendix D, Theorem 8 (proof D.1)", by=("theorem8", "assumption-D")),
        Step("gradient descent with an MLP head converges to W^fin + R_t W^mm(O): the direction of the component "
             "orthogonal to the within-set span aligns with W^mm(O) and W^fin's composition matches the run's",
             "numeric", reference="checks/tfsvm_mlp.py (NGD, MLP heads, generalized SVM and finite-part fit at the "
                                  "horizon; refutations confirmed at 4x)"),
        Step("a proof that GD selects the sets O_i and converges to W^fin + R_t W^mm (Transformers as SVMs, Section 6 "
             "states it as a prediction, validated numerically)", "open"),
    ))
