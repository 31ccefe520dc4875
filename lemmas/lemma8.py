"""Lemma 8, first statement (Appendix B.5.1, (62)-(64); docs/statements.md#lemma8): unit p, q with the same unique
selected tokens alpha, both neighbour-optimal, and Gamma(p) = Gamma(q) + delta, delta > 0: there is
R_delta with L(R p) < L(R q) for all R >= R_delta. The second statement (q with a unique, better
neighbour beats p) is shown by the necessity witness of `q_neighbor_optimal`.

The formulas are lost in our text: reconstructed from the proof. Both risks approach the
baseline L_* = (1/n) sum_i loss(gamma_{i,alpha_i}) from above: c_p e^{-R Gamma(p)} <= L(R p) - L_*
<= C_p e^{-R Gamma(p)} for neighbour-optimal p ((63)-(64)), so L(R p) < L(R q) once
C_p e^{-R delta} < c_q, i.e. R > log(C_p/c_q)/delta. sympy checks the margin shift and that last
step; the two-sided bound (63)-(64) is supported numerically.
"""

from attnsvm.claims.identities import domination_radius, margin_shift
from attnsvm.claims.outline import Outline, Step

STATEMENT = ("unit p, q with the same unique selected tokens, both neighbour-optimal, Gamma(p) > Gamma(q) => "
             "L(R p) < L(R q) for all large R")
RECONSTRUCTION = ("the lemma's formulas are lost in the text extraction; the statement and the two-sided bound "
                  "(63)-(64) are our reconstruction from the proof")
CHECK = "checks/lemma8.py"


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("each margin moves by f_i - gamma_{i,alpha_i} = sum_{t != alpha_i} s_it (gamma_it - gamma_{i,alpha_i}) "
             "(symbolic T)", "symbolic", margin_shift, by=("definition1",)),
        Step("(62)-(64): for neighbour-optimal p, c_p e^{-R Gamma(p)} <= L(R p) - L_* <= C_p e^{-R Gamma(p)} for R "
             "large (the neighbours' worse scores raise the risk at rate e^{-R Gamma}; Assumption A bounds -loss')",
             "numeric",
             reference=f"{CHECK} (signs of risk differences on a radius grid, float64 log domain with a rounding "
                       "bound, mpmath where it cannot settle them; exact Definition 3); proof: Appendix B.5.1",
             by=("definition3", "assumption-A")),
        Step("L(R p) < L(R q) once C_p e^{-R delta} < c_q, i.e. R > log(C_p/c_q)/delta (symbolic)", "symbolic",
             domination_radius),
    ), RECONSTRUCTION)
