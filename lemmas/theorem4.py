"""Theorem 4 / Theorem 7 (SPEC.md A, Appendix B.5): a cone-restricted path cannot converge to a
direction q that is not an LMM. The proof compares q with a competitor q' of the same norm
(Lemma 8); its algebra:

1. excess identity: L(p) = mean_i loss(gamma_{i,ref} - c_i), c_i = sum_t s_it (gamma_ref - gamma_it):
   the risk above the selected tokens' is carried by the non-selected softmax mass (the
   margin identity of Theorem 1, re-used: sympy residual 0 for T = 2..5);
2. Lemma 8, case 1 (both neighbour-optimal, same selection): the excess along a direction
   behaves like A e^{-R Gamma} with Gamma its directional margin, so a competitor with a
   larger margin Gamma' = Gamma + nu wins: lim_{R -> oo} A e^{-R Gamma}/(B e^{-R Gamma'}) = oo;
3. Lemma 8, case 2 (q not neighbour-optimal: its unique directional neighbour scores higher):
   that neighbour contributes -a e^{-R Gamma} (a > 0) and every other token at most
   b e^{-R (Gamma + nu)}, so e^{R Gamma} times the excess tends to -a < 0: mixing in the
   neighbour lowers the risk, and moving towards it (inside any cone around q) is better.
Either way a fixed competitor inside the cone beats q for large R, so p(R)/R cannot tend to q.
"""

import sympy as sp

from attnsvm.claims import Derivation, Verdict
from lemmas.theorem1 import margin_identity_residual


def domination_limit() -> sp.Expr:
    R, A, B, G, nu = sp.symbols("R A B Gamma nu", positive=True)
    return sp.limit(A * sp.exp(-R * G) / (B * sp.exp(-R * (G + nu))), R, sp.oo)


def higher_neighbour_limit() -> sp.Expr:
    R, a, b, G, nu = sp.symbols("R a b Gamma nu", positive=True)
    return sp.limit(sp.exp(R * G) * (-a * sp.exp(-R * G) + b * sp.exp(-R * (G + nu))), R, sp.oo)


def derive() -> Derivation:
    margin = {T: margin_identity_residual(T) for T in range(2, 6)}
    dom, neg = domination_limit(), higher_neighbour_limit()
    a = sp.Symbol("a", positive=True)
    ok = all(r == 0 for r in margin.values()) and dom == sp.oo and sp.simplify(neg + a) == 0
    return Derivation(
        "excess risk = mean_i [loss(gamma_ref - c_i) - loss(gamma_ref)]; a larger directional margin wins by a factor "
        "e^{nu R} -> oo; a higher-scoring unique neighbour makes e^{R Gamma} x excess -> -a < 0",
        Verdict.PROVED if ok else Verdict.REFUTED,
        {"margin_identity_residuals": {str(T): str(r) for T, r in margin.items()},
         "domination_limit": str(dom), "higher_neighbour_limit": str(neg),
         "closing_step": "distinct scores make every neighbour either strictly lower (case 1) or strictly higher "
                         "(case 2); general position makes the directional neighbour unique and the competitor's "
                         "margin strictly larger; either way a fixed direction inside cone_mu(q) has lower risk than q "
                         "at every large R, so the restricted optimum does not approach q"},
    )
