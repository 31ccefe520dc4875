"""Theorem 5 (Section 3,
docs/statements.md#theorem5; proof in Appendix C.1): under Assumption C the joint regularization path
(v, p)(r, R) of the logistic loss converges in direction to (v_mm, p_mm(alpha)).

The proof is by contradiction with the competitor (r v_mm/||v_mm||, R p_mm/||p_mm||): if p stays
away from p_mm's direction (Case 1) its non-optimal mass is exponentially larger (Theorem 8's
(D.1) bounds), and by Assumption C mass costs label margin; if v stays away from v_mm's (Case 2)
strong convexity of (SVM) costs margin directly; the logistic tail turns margin into loss.
sympy checks the mass bounds, the strong-convexity bound, the linearity of mixing, the
logistic tail and the closing limit (symbolic T, d); Assumption C's margin loss and the loss
sandwich (74)-(75) are cited.
"""

import sympy as sp

from attnsvm.claims.identities import direction_violates, logistic_tail, mass_bounds
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import d, j, residuals, total

STATEMENT = ("logistic loss, (ATT-SVM) for alpha and the label (SVM) on r_i = x_{i,alpha_i} feasible, Assumption C => "
             "the joint path (v, p)(r, R) = argmin {L(v, p) : ||v|| <= r, ||p|| <= R} has v/r -> v_mm/||v_mm|| and "
             "p/R -> p_mm(alpha)/||p_mm(alpha)|| as r, R -> oo")
REF = "Appendix C.1, proof of Theorem 5"


def mixing() -> dict:
    """Y v^T ((1 - pi) x_alpha + pi x_t) = Y v^T x_alpha + pi Y v^T (x_t - x_alpha): the label margin of a mixed
    attention feature is linear in the mixed-in mass (symbolic d)."""
    xa, xt, v = (sp.IndexedBase(n, real=True) for n in ("x_alpha", "x_t", "v"))
    pi, y = sp.symbols("pi Y", real=True)
    inner = lambda a, b: total(a * b, j, d)
    res = y * inner(v[j], (1 - pi) * xa[j] + pi * xt[j]) - y * inner(v[j], xa[j]) - pi * y * inner(v[j], xt[j] - xa[j])
    return residuals(linear=res)


def mass_ratio_limit() -> dict:
    """The path's non-optimal mass over the competitor's, e^{-(1 - eps) R/m} / e^{-R/m} = e^{eps R/m} -> oo."""
    R, m, eps = sp.symbols("R m epsilon", positive=True)
    return residuals(limit_is_infinite=sp.limit(sp.exp(-R * (1 - eps) / m) / sp.exp(-R / m), R, sp.oo) == sp.oo)


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("(71)-(73): the competitor R p_mm/||p_mm|| keeps non-optimal mass <= (T - 1) e^{-R/||p_mm||}; a p "
             "violating a constraint by the factor 1 - eps keeps >= e^{-(1 - eps) R/||p_mm||}/T (Theorem 8's (D.1); "
             "symbolic T)",
             "symbolic", mass_bounds, by=("theorem8",)),
        Step("strong convexity: a direction delta away from p_mm's violates an (ATT-SVM) constraint by 1 - eps (Case "
             "1), and one away from v_mm's has label margin <= (1 - eps)/||v_mm|| on the selected tokens (Case 2), eps "
             "< delta^2/2 (least-norm point of a convex set; symbolic d)", "symbolic", direction_violates),
        Step("mixing is linear: moving attention mass pi from x_alpha to x_t changes the label margin by pi Y v^T (x_t "
             "- x_alpha) (symbolic d)", "symbolic", mixing),
        Step("Assumption C: attention features with non-optimal mass q have (SVM) margin at most 1/||v_mm|| - c q "
             "(mixing strictly shrinks the margin)", "cited", reference=f"{REF}, (75)", by=("assumption-C",)),
        Step("logistic tail: d/d pi log(1 + e^{-r(m - pi g)}) at 0 = r g sigmoid(-r m), and e^{r m} sigmoid(-r m) -> 1",
             "symbolic", logistic_tail),
        Step("loss sandwich (74)-(75): the competitor's loss is at most ~ e^{-r/||v_mm||} (1 + c' r (T - 1) "
             "e^{-R/||p_mm||}), the path's at least ~ e^{-r (1/||v_mm|| - c q)}; Case 2 likewise with (76)", "cited",
             reference=f"{REF}, (74)-(76)", by=("assumption-C",)),
        Step("closing: the path's mass exceeds the competitor's by e^{eps R/||p_mm||} -> oo, so its loss is larger for "
             "large (r, R), contradicting optimality", "symbolic", mass_ratio_limit),
    ))
