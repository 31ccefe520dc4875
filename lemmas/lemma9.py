"""Lemma 9 (Appendix B.5.2, (69)-(70); docs/statements.md#lemma9): for a unit direction q with unique selected
tokens alpha whose directional neighbours all score strictly higher than their selected tokens,
there is R_0 with L(R q) < L_*(alpha) = (1/n) sum_i loss(gamma_{i,alpha_i}) for all R >= R_0.

The formula (69) is lost in our text; the baseline L_* is our reading of the proof ((63) of Lemma
8, "the directional risk baseline"). sympy checks, for a symbolic T, the margin shift
f_i - gamma_{i,alpha_i} = sum_{t != alpha_i} s_it (gamma_it - gamma_{i,alpha_i}), the softmax bound
s_it <= e^{-R (k_alpha - k_t)^T q} and the radius at which the neighbours' term dominates; the
mean-value step (63) and the domination itself are supported numerically.
"""

from attnsvm.claims.identities import domination_radius, margin_shift, softmax_bound
from attnsvm.claims.outline import Outline, Step

STATEMENT = ("unit q, unique selected tokens alpha, every directional neighbour scoring above its selected token => "
             "L(R q) < (1/n) sum_i loss(gamma_{i,alpha_i}) for all large R")
RECONSTRUCTION = ("(69)'s formula is lost in the text extraction; the baseline (1/n) sum_i loss(gamma_{i,alpha_i}) is "
                  "our reading of the proof (Lemma 8's directional risk baseline)")
CHECK = "checks/lemma9.py"


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("each margin moves by f_i - gamma_{i,alpha_i} = sum_{t != alpha_i} s_it (gamma_it - gamma_{i,alpha_i}) "
             "(symbolic T)", "symbolic", margin_shift, by=("definition1",)),
        Step("s_it <= exp(-R (k_{i,alpha_i} - k_it)^T q): neighbours weigh ~e^{-R Gamma}, other rows at most "
             "e^{-R (Gamma + Delta)} ((70), symbolic T)", "symbolic", softmax_bound, by=("definition3",)),
        Step("(63): L(R q) - L_* = (1/n) sum_i loss'(xi_i) (f_i - gamma_{i,alpha_i}) with -loss' in [l_min, M1] "
             "(Assumption A, mean value theorem on the bounded score range)", "cited",
             reference="Appendix B.5.1, (62)-(63)", by=("lemma8", "assumption-A")),
        Step("the neighbours' term (all of one sign: better scores, so it lowers the risk) dominates once "
             "R > log(C/c)/Delta, C and c the two terms' constants (symbolic)", "symbolic", domination_radius),
        Step("so L(R q) < L_* for R >= R_0 with the data's constants c, C", "numeric",
             reference=f"{CHECK} (sign of the risk difference on a radius grid, float64 log domain with a rounding "
                       "bound, mpmath where it cannot settle it; exact Definition 3)"),
    ), RECONSTRUCTION)
