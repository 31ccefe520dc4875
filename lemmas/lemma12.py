"""Lemma 12 (core paper, Appendix C.2; statement reconstructed from its proof, formulas lost in the
extraction): if the joint path selects alpha asymptotically (s_{i,alpha_i}(p(r, R)) -> 1 for every
i), there is R_0 such that for every R >= R_0 the path lies in the quadrant (77):
(k_{i,alpha_i} - k_it)^T p(r, R) >= 0 for all i and t != alpha_i.

Proof (the paper's, by contradiction): fix R_0 with s_{i,alpha_i} >= 1 - eps, eps < 1/2, beyond it;
a violated (77) at some R >= R_0 means a token t with a_t >= a_{alpha_i}, so s_t >= s_{alpha_i}
and 2 s_{alpha_i} <= s_{alpha_i} + s_t <= 1: s_{alpha_i} <= 1/2 < 1 - eps. sympy checks the softmax
steps for a symbolic T."""

import sympy as sp

from attnsvm.claims.identities import softmax_ratio
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import T, residuals, t, total

STATEMENT = ("s_{i,alpha_i}(p(r, R)) -> 1 for every i => there is R_0 with (k_{i,alpha_i} - k_it)^T p(r, R) >= 0 for "
             "all i, t != alpha_i and R >= R_0")
RECONSTRUCTION = "the premise ('the tokens are asymptotically selected') and (77) are reconstructed from the proof"


def dominated_mass() -> dict:
    """a_t = a_o + y, y >= 0, e^y = 1 + x (x >= 0): s_t = s_o e^y (the softmax ratio), s_t - s_o = s_o x >= 0; with the
    other weights w_u > 0, s_o + s_t = 1 - sum_u w_u <= 1, so 2 s_o <= s_o + s_t <= 1 (symbolic count)."""
    y, x = sp.Symbol("y", nonnegative=True), sp.Symbol("x", nonnegative=True)
    so = sp.Symbol("s_o", positive=True)
    w = sp.IndexedBase("w", positive=True)
    st = so * sp.exp(y)
    rest = total(w[t], t, T)                                         # the other tokens' weights (any count)
    return residuals(exp_form=sp.exp(y).subs(y, sp.log(1 + x)) - (1 + x),
                     dominates=bool(sp.expand(st.subs(y, sp.log(1 + x)) - so).is_nonnegative),
                     pair_le_one=bool(rest.is_positive),
                     two_s_o_le_pair=bool(sp.expand((so + st - 2 * so).subs(y, sp.log(1 + x))).is_nonnegative))


def limit_threshold() -> dict:
    """eps < 1/2 (eps = 1/2 - z, z > 0) gives 1 - eps > 1/2: beyond R_0 every s_{i,alpha_i} > 1/2, so no violation."""
    z = sp.Symbol("z", positive=True)
    return residuals(above_half=bool(((1 - (sp.Rational(1, 2) - z)) - sp.Rational(1, 2)).is_positive))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("softmax ratio s_t = s_o exp(a_t - a_o) (symbolic T)", "symbolic", softmax_ratio),
        Step("a_t >= a_o implies s_t >= s_o, and s_o + s_t <= 1, so s_o <= 1/2 (symbolic T)", "symbolic",
             dominated_mass),
        Step("s_{i,alpha_i} -> 1: beyond some R_0 every s_{i,alpha_i} >= 1 - eps > 1/2 (eps < 1/2), contradicting a "
             "violated (77)", "symbolic", limit_threshold),
    ), RECONSTRUCTION)
