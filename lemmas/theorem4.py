"""Theorem 4 (
docs/statements.md#theorem4; it is Theorem 7, proved in Appendix B.5 with Lemmas 8-10): with distinct scores
and keys in general position, the regularization path restricted to any cone around a unit q
that is not an LMM direction does not converge to q.

The proof compares q with a competitor of the same norm (Lemma 8: when does one direction
dominate another) in three cases: (A1) q selects one token per input and is neighbour-optimal,
(A2) it is not neighbour-optimal (Lemmas 9, 10: a perturbation whose directional neighbours all
score higher beats q at a finite norm), (B) q selects several tokens in some input. sympy
checks the risk decomposition behind Lemma 8 and the two limits that close its cases (symbolic
T); Lemma 8's bounds, Lemma 10 and the three case constructions are cited.
"""

import sympy as sp

from attnsvm.claims.identities import margin_identity, softmax_ratio
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import residuals

STATEMENT = ("distinct scores, keys in general position, q a unit vector that is not an LMM direction: for every "
             "mu > 0 and R0, the path p(R) = argmin {L(p) : p in cone_mu(q), R0 <= ||p|| <= R} has ||p(R)|| bounded or "
             "p(R)/||p(R)|| not -> q")
REF = "Appendix B.5"


def domination_limit() -> dict:
    """Lemma 8, case 1: A e^{-R Gamma} / (B e^{-R (Gamma + nu)}) -> oo (A, B, Gamma, nu > 0)."""
    R, A, B, G, nu = sp.symbols("R A B Gamma nu", positive=True)
    return residuals(limit_is_infinite=sp.limit(A * sp.exp(-R * G) / (B * sp.exp(-R * (G + nu))), R, sp.oo) == sp.oo)


def higher_neighbour_limit() -> dict:
    """Lemma 8, case 2 and Lemma 9: e^{R Gamma} (-a e^{-R Gamma} + b e^{-R (Gamma + nu)}) -> -a < 0."""
    R, a, b, G, nu = sp.symbols("R a b Gamma nu", positive=True)
    lim = sp.limit(sp.exp(R * G) * (-a * sp.exp(-R * G) + b * sp.exp(-R * (G + nu))), R, sp.oo)
    return residuals(limit_plus_a=lim + a)


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("risk decomposition (62): at p = R u each margin is gamma_sel - sum_t s_t (gamma_sel - gamma_t), so the "
             "risk above the selected tokens' baseline is carried by the non-selected mass (symbolic T)", "symbolic",
             margin_identity, by=("definition3",)),
        Step("s_t = s_sel exp(-R (k_sel - k_t)^T u): each non-selected token's mass decays at the rate of its margin, "
             "the slowest being the directional neighbours' (Definition 3) (symbolic T)", "symbolic", softmax_ratio,
             by=("definition3",)),
        Step("Lemma 8's bounds (63)-(64): for large R the excess risk of a neighbour-optimal u lies between constant "
             "multiples of e^{-R Gamma(u)}; with a unique higher-scoring neighbour it is at most -a e^{-R Gamma} + "
             "b e^{-R (Gamma + nu)}", "cited", reference=f"{REF}.1, Lemma 8, (62)-(64)", by=("lemma8", "assumption-A")),
        Step("Lemma 8, case 1: a competitor with margin Gamma + nu beats one with margin Gamma for large R (the ratio "
             "of their excesses -> oo)", "symbolic", domination_limit, by=("lemma8",)),
        Step("Lemma 8, case 2 and Lemma 9: with higher-scoring directional neighbours e^{R Gamma} x excess -> -a < 0, "
             "so the direction beats its selected tokens' baseline at a finite norm", "symbolic",
             higher_neighbour_limit, by=("lemma8", "lemma9")),
        Step("Lemma 10: general position leaves at most d directional neighbours (the all-ones vector is not in the "
             "range of any (d+1)-row key-difference matrix)", "cited", reference=f"{REF}.2, Lemma 10", by=("lemma10",)),
        Step("case (A1), q neighbour-optimal but not an LMM: the max-margin direction of q's selected tokens has a "
             "larger margin than every direction near q, so by case 1 the path does not approach q", "cited",
             reference=f"{REF}.2, proof of Theorem 7, case (A1)", by=("lemma8", "definition2")),
        Step("case (A2), q not neighbour-optimal: the perturbation q + eps D^+ (Delta 1_S) makes every directional "
             "neighbour score higher; by Lemma 9 it beats q's selection at a finite norm, so ||p(R)|| stays bounded",
             "cited", reference=f"{REF}.2, proof of Theorem 7, case (A2)", by=("lemma9", "lemma10")),
        Step("case (B), q selects several tokens in some input: distinct scores make the highest-scoring selection "
             "strictly better and a pseudo-inverse perturbation selects it neighbour-optimally; Lemma 8 concludes",
             "cited", reference=f"{REF}.2, proof of Theorem 7, case (B)", by=("lemma8",)),
    ))
