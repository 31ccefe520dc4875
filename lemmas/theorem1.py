"""Theorem 1 (docs/statements.md#theorem1; proof in Appendix B.2 as a corollary of Lemma 14 and Theorem 8, whose proof
is Appendix D.1): the regularization path p(R) = argmin_{||p|| <= R} L(p) converges in direction
to the GMM p_mm = p_mm(opt) under Assumption A and strict optimality.

The proof compares the non-optimal softmax mass q_i = 1 - s_{i,opt} of p(R) with that of the
competitor R p_mm/||p_mm|| (norm R, inside the ball): a direction delta away from p_mm's
violates an (ATT-SVM) constraint by a factor 1 - eps, so it keeps exponentially more mass, and
Lemma 14 (Assumption D for the linear head) turns mass into risk. sympy checks the identities
and the closing limit for a symbolic T and d; Lemma 14's mean-value bounds are cited.
"""

import sympy as sp

from attnsvm.claims.identities import (
    T1,
    deficit_bounds,
    direction_violates,
    margin_identity,
    mass_bounds,
    softmax_ratio,
)
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import residuals

STATEMENT = ("Assumption A, gamma_{i,opt_i} > gamma_it for t != opt_i, (ATT-SVM) for opt feasible => "
             "p(R)/R -> p_mm/||p_mm|| as R -> oo, p(R) = argmin_{||p|| <= R} L(p)")
RECONSTRUCTION = ("Lemma 14 needs -loss' bounded below by a positive constant on the margin interval (loss' < 0, "
                  "see lemma4)")

def closing_limit() -> dict:
    """[(c_lo/n) exp(-(1 - eps) R/m)/T] / [c_hi (T - 1) exp(-R/m)] -> oo as R -> oo: the path's risk excess exceeds
    the competitor's for large R (all constants positive)."""
    R, m, eps, clo, chi, n = sp.symbols("R m epsilon c_lo c_hi n", positive=True)
    ratio = (clo / n * sp.exp(-(1 - eps) * R / m) / (T1 + 1)) / (chi * T1 * sp.exp(-R / m))
    return residuals(limit_is_infinite=sp.limit(sp.simplify(ratio), R, sp.oo) == sp.oo)


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("margin identity: Y_i f_i = <s_i, gamma_i> = gamma_opt - sum_t s_t (gamma_opt - gamma_t) (symbolic T)",
             "symbolic", margin_identity, by=("definition1",)),
        Step("with Gamma_min = min gap > 0 (strict optimality), Gamma_max = max gap: Gamma_min q_i <= gamma_opt - "
             "Y_i f_i <= Gamma_max q_i, q_i = 1 - s_{i,opt} (symbolic T)", "symbolic", deficit_bounds),
        Step("Lemma 14: the linear head meets Assumption D: by the mean value theorem with -loss' in [c, M1], c > 0, "
             "on the margin interval, c Gamma_min q_i <= loss(Y_i f_i) - loss(gamma_opt) <= M1 Gamma_max q_i", "cited",
             reference="Appendix D.2, Lemma 14 (Taylor's theorem with integral remainder); Appendix B.2",
             by=("lemma14", "assumption-A", "assumption-D")),
        Step("softmax ratio: s_t = s_opt exp(-(a_opt - a_t)) (symbolic T)", "symbolic", softmax_ratio),
        Step("mass bounds (D.1): along R p_mm/||p_mm|| every q_i <= (T - 1) exp(-R/||p_mm||); a p violating a "
             "constraint of input i by a factor 1 - eps keeps q_i >= exp(-(1 - eps) R/||p_mm||)/T (symbolic T)",
             "symbolic", mass_bounds, by=("theorem8",)),
        Step("a p with ||p|| <= R and ||p/R - p_mm/||p_mm|| || >= delta violates a constraint by the factor 1 - eps, "
             "eps < delta^2/2: p_mm is the least-norm point of a convex set, so <p_mm, x> >= ||p_mm||^2 for feasible x "
             "(symbolic d)", "symbolic", direction_violates),
        Step("closing: by steps 3, 5, 6, L(p) - L_* >= (c/n) exp(-(1 - eps) R/||p_mm||)/T exceeds L(R p_mm/||p_mm||) - "
             "L_* <= M1 Gamma_max (T - 1) exp(-R/||p_mm||) for large R (limit of the ratio = oo), so p(R) stays within "
             "delta of the direction for large R, for every delta", "symbolic", closing_limit, by=("theorem8",)),
    ), RECONSTRUCTION)
