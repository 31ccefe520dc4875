"""Lemma 9 (Appendix B.5.2, (69)-(70); docs/statements.md#lemma9): for a unit direction q with unique selected
tokens alpha whose directional neighbours all score strictly higher than their selected tokens,
there is R_0 with L(R q) < L_*(alpha) = (1/n) sum_i loss(gamma_{i,alpha_i}) for all R >= R_0.

The formula (69) is lost in our text; the baseline L_* is our reading of the proof ((63) of Lemma
8, "the directional risk baseline"). sympy checks, for a symbolic T, the margin shift
f_i - gamma_{i,alpha_i} = sum_{t != alpha_i} s_it (gamma_it - gamma_{i,alpha_i}), the softmax bound
s_it <= e^{-R (k_alpha - k_t)^T q} and the radius at which the neighbours' term dominates; the
mean-value step (63) and the domination itself are supported numerically.
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.results.lemmas.lemma7 import softmax_bound
from attnsvm.claims.symbolic import o, on_simplex, residuals, t, total

STATEMENT = ("unit q, unique selected tokens alpha, every directional neighbour scoring above its selected token => "
             "L(R q) < (1/n) sum_i loss(gamma_{i,alpha_i}) for all large R")
RECONSTRUCTION = ("(69)'s formula is lost in the text extraction; the baseline (1/n) sum_i loss(gamma_{i,alpha_i}) is our "
                  "reading of the proof (Lemma 8's directional risk baseline)")
CHECK = "checks/lemma9.py"


def margin_shift() -> dict:
    """f - gamma_o = sum_t s_t (gamma_t - gamma_o) on the simplex (the t = o term is 0; symbolic T)."""
    s, g = sp.IndexedBase("s", positive=True), sp.IndexedBase("gamma", real=True)
    return residuals(shift=on_simplex(total(s[t] * g[t]) - g[o] - total(s[t] * (g[t] - g[o])), s))


def dominance_radius() -> dict:
    """With the neighbours' term at least a e^{-R Gamma} and the rest at most b e^{-R (Gamma + Delta)} (a, b > 0), the
    neighbours dominate once R > log(b/a)/Delta: at R = log(b/a)/Delta + x the ratio is e^{-x Delta} < 1 (x > 0)."""
    a, b, D, x, G = sp.symbols("a b Delta x Gamma", positive=True)
    R = sp.log(b / a) / D + x
    ratio = b * sp.exp(-R * (G + D)) / (a * sp.exp(-R * G))
    log_ratio = sp.expand(sp.expand_log(sp.log(ratio), force=True))
    return residuals(log_ratio=log_ratio + x * D, below_one=bool((-x * D).is_negative))


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
             "R > log(b/a)/Delta (symbolic)", "symbolic", dominance_radius),
        Step("so L(R q) < L_* for R >= R_0 with the data's constants a, b", "numeric",
             reference=f"{CHECK} (mpmath risk difference on a radius grid, exact Definition 3)"),
    ), RECONSTRUCTION)
