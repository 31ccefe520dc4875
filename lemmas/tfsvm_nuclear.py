"""Transformers as SVMs, claim 2 (
docs/statements.md#tfsvm-nuclear): the (K, Q)-parameterisation W = K Q^T measures W by its nuclear
norm, min {(||K||_F^2 + ||Q||_F^2)/2 : K Q^T = W} = ||W||_* (m >= rank W), so the (K, Q)
regularization path is the nuclear-ball path of W and its max-margin limit is W*_mm.

sympy checks (symbolic d) that the balanced factorisation of an SVD attains ||W||_* and the
AM-GM step; the lower bound ||K Q^T||_* <= ||K||_F ||Q||_F and the path theorem are cited, and the
normalized GD in (K, Q) the check runs is supported numerically (the paper proves the path).
"""

from attnsvm.claims.identities import am_gm, balanced
from attnsvm.claims.outline import Outline, Step

STATEMENT = ("(K, Q)-parameterised attention (W = K Q^T, width m >= d): its regularization path, and normalized GD in "
             "(K, Q), converge in direction to a nuclear-norm max-margin W*_mm(alpha)")


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("upper bound: the balanced factorisation of an SVD has K Q^T = W and (||K||_F^2 + ||Q||_F^2)/2 = ||W||_* "
             "(needs m >= rank W; symbolic d)", "symbolic", balanced),
        Step("lower bound: ||K Q^T||_* <= ||K||_F ||Q||_F (trace duality and Cauchy-Schwarz)", "cited",
             reference="Recht, Fazel, Parrilo 2010, Lemma 5.1 (Srebro, Rennie, Jaakkola 2005)"),
        Step("AM-GM: ||K||_F ||Q||_F <= (||K||_F^2 + ||Q||_F^2)/2, so the minimum over factorisations is ||W||_*",
             "symbolic", am_gm),
        Step("the (K, Q) path {||K||^2 + ||Q||^2 <= 2R} is the nuclear-ball path of W; the path argument (core "
             "Theorem 1 / 8 with the nuclear norm) gives the max-margin direction W*_mm", "cited",
             reference="Transformers as SVMs, Section 3 (regularization path in (K, Q)); core paper Appendix D.1",
             by=("theorem1", "theorem8")),
        Step("normalized GD in (K, Q) (the authors' rule; not the path) reaches a nuclear-norm max-margin direction",
             "numeric", reference="checks/tfsvm_nuclear.py (excess ||W_H/margin||_*/||W*_mm||_* - 1 <= 0.05 at the "
                                  "horizon; slow runs INCONCLUSIVE, NOTES.md)"),
    ))
