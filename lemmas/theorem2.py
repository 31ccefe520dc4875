"""Theorem 2 (docs/statements.md#theorem2; proof in Appendix B.3): under Assumptions A and B, GD with eta <= 1/L_p has
(a) ||p_t|| -> oo and, (b) for n = 1, p_t/||p_t|| -> p_mm/||p_mm||.

(a) is Lemma 4 (no finite stationary point) plus Lemma 6 (summable squared gradients) and a
compactness argument. (b) uses Lemma 5 (the gradient correlation condition: for large ||p||,
-grad L is nearly as aligned with p_mm as with p), multiplies it by the step, bounds the norm
growth ((51)) and telescopes ((52)). sympy checks, for a symbolic T and d, the n = 1 gradient
under B that Lemma 5 starts from (-grad L = |loss'| Delta s_opt sum_t s_t z_t, s_t = s_opt
exp(-z_t^T p), z_t = k_opt - k_t: GD on an exponential loss of the points z_t), the norm-step
inequality and the telescoping limit; Lemmas 4-6 and the compactness step are cited.
"""

from attnsvm.claims.identities import gradient_under_B, norm_step, telescoping
from attnsvm.claims.outline import Outline, Step

STATEMENT = ("Assumptions A and B, eta <= 1/L_p, any p_0: (a) ||p_t|| -> oo; (b) if n = 1, "
             "p_t/||p_t|| -> p_mm/||p_mm||")
RECONSTRUCTION = "Assumption A is used as loss' < 0 on bounded intervals (see lemma4; NOTES.md)"


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("no finite stationary point: <grad L(p), p_mm> < 0 for every p (Lemma 4), so grad L(p) != 0", "cited",
             reference="Lemma 4 (outline lemmas/lemma4.py); Appendix B.3", by=("lemma4", "assumption-A")),
        Step("eta <= 1/L_p gives sum_t ||grad L(p_t)||^2 < oo, so grad L(p_t) -> 0", "cited",
             reference="Lemma 6, (26) (outline lemmas/lemma6.py)", by=("lemma6",)),
        Step("(a) grad L is continuous and nonzero, so bounded away from 0 on every ball: with grad L(p_t) -> 0, "
             "||p_t|| -> oo", "cited", reference="Appendix B.3 (compactness)"),
        Step("n = 1 under B: -grad L(p) = |loss'(f)| Delta s_opt sum_{t != opt} s_t z_t with s_t = s_opt exp(-z_t^T "
             "p), z_t = k_opt - k_t (symbolic T): the quantity Lemma 5 compares along p and along p_mm", "symbolic",
             gradient_under_B, by=("lemma4", "assumption-B")),
        Step("Lemma 5: for every eps > 0 there is R_eps with <grad L(p), p/||p||> >= (1 + eps) <grad L(p), "
             "p_mm/||p_mm||> whenever ||p|| >= R_eps (n = 1, Assumption B)", "cited",
             reference="Appendix B.1, Lemma 5 (gradient correlation conditions)", by=("lemma5",)),
        Step("(51): with delta = -eta grad L(p_t): <delta, p_mm/||p_mm||> >= (1/(1 + eps)) (||p_{t+1}|| - ||p_t|| - "
             "||delta||^2/(2||p_t||)), by the norm-step inequality (symbolic d)", "symbolic", norm_step),
        Step("(52): telescoping from the time ||p_t|| >= R_eps, with sum_t ||delta_t||^2/(2||p_t||) finite (Lemma 6), "
             "liminf <p_t/||p_t||, p_mm/||p_mm||> >= 1/(1 + eps) as ||p_t|| -> oo; eps is arbitrary", "symbolic",
             telescoping, by=("lemma6",)),
    ), RECONSTRUCTION)
