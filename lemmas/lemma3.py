"""Lemma 3 (key lemma; Appendix A.1, (16); docs/statements.md#lemma3): for one input with logits a = K q of any
direction q, softmax weights s = S(K p), scores gamma and a reference token o,

    | a^T diag(s) gamma - a^T s s^T gamma - sum_{t != o} (a_o - a_t) s_t (gamma_o - gamma_t) |
        <= 2 Gamma A (1 - s_o)^2,

Gamma = max_{t,tau} |gamma_t - gamma_tau|, A = max_t |a_t| (the paper's A = max_t ||k_t|| ||q||
bounds |a_t| by Cauchy-Schwarz, so its form follows). The formulas are lost in our text of the
paper; this statement is our reconstruction from the proof's structure (set gamma_bar = <s, gamma>,
(16), then the two (1 - s_o) factors). The proof's key identity is exact: the left side is
-(sum_{t != o} (a_o - a_t) s_t)(sum_{t != o} (gamma_o - gamma_t) s_t).

Every step is checked by sympy for a symbolic number of tokens T.
"""

import sympy as sp

from attnsvm.claims.identities import residual_identity
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import residuals, t, total

STATEMENT = ("For a = K q, s = S(K p) (any point of the simplex), scores gamma and a token o: "
             "|a^T diag(s) gamma - a^T s s^T gamma - sum_{t != o} (a_o - a_t) s_t (gamma_o - gamma_t)| "
             "<= 2 Gamma A (1 - s_o)^2, Gamma = max |gamma_t - gamma_tau|, A = max_t |a_t|")
RECONSTRUCTION = ("the lemma's formulas are lost in the text extraction; reconstructed from its proof ((16) and the "
                  "two (1 - s_o) factors) with A = max_t |a_t|, which the paper's A = max_t ||k_t|| ||q|| bounds")


def factor_bounds() -> dict:
    """Non-reference tokens relabelled t = 1..T-1 (weights s_t >= 0 summing to 1 - s_o): with
    |a_o - a_t| <= 2A and |gamma_o - gamma_t| <= Gamma, X -+ sum_t s_t (a_o - a_t) = sum_t s_t e_t with
    e_t = 2A -+ (a_o - a_t) >= 0, and likewise for gamma; so |sum| <= 2A (1 - s_o), resp. Gamma (1 - s_o)."""
    T1 = sp.Symbol("T_minus_1", integer=True, positive=True)
    s = sp.IndexedBase("s", nonnegative=True)
    B = sp.Symbol("B", nonnegative=True)                # 2A (or Gamma)
    e_minus, e_plus = sp.IndexedBase("e_minus", nonnegative=True), sp.IndexedBase("e_plus", nonnegative=True)
    rest = total(s[t], t, T1)                           # 1 - s_o
    up_sum, lo_sum = total(s[t] * e_minus[t], t, T1), total(s[t] * e_plus[t], t, T1)
    # x_t = B - e_minus_t = e_plus_t - B: the term bounds |x_t| <= B as nonnegative slacks
    return residuals(upper_is_slack_sum=B * rest - total(s[t] * (B - e_minus[t]), t, T1) - up_sum,
                     lower_is_slack_sum=B * rest + total(s[t] * (e_plus[t] - B), t, T1) - lo_sum,
                     upper_nonnegative=bool(up_sum.is_nonnegative), lower_nonnegative=bool(lo_sum.is_nonnegative))


def product_bound() -> dict:
    """|x| <= X and |y| <= Y give |x y| <= X Y: 2 (XY -+ xy) = (X -+ x)(Y +- y) + (X +- x)(Y -+ y), sums of
    products of nonnegative slacks; with X = 2A (1 - s_o), Y = Gamma (1 - s_o) this is 2 Gamma A (1 - s_o)^2."""
    X, Y, x, y = sp.symbols("X Y x y", real=True)
    u1, u2, u3, u4 = sp.symbols("u1:5", nonnegative=True)         # X - x, X + x, Y - y, Y + y
    minus = 2 * (X * Y - x * y) - ((X - x) * (Y + y) + (X + x) * (Y - y))
    plus = 2 * (X * Y + x * y) - ((X + x) * (Y + y) + (X - x) * (Y - y))
    A, G, so = sp.symbols("A Gamma s_o", nonnegative=True)
    return residuals(minus=minus, plus=plus, slack_products_nonnegative=bool((u1 * u4 + u2 * u3).is_nonnegative
                                                                             and (u2 * u4 + u1 * u3).is_nonnegative),
                     constant=2 * A * (1 - so) * G * (1 - so) - 2 * G * A * (1 - so) ** 2)


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("(16): with gamma_bar = <s, gamma>, a^T diag(s) gamma - a^T s s^T gamma - sum_{t != o} (a_o - a_t) s_t "
             "(gamma_o - gamma_t) = -(sum_{t != o} (a_o - a_t) s_t)(sum_{t != o} (gamma_o - gamma_t) s_t) on the "
             "simplex (symbolic T)", "symbolic", residual_identity),
        Step("each factor is at most its term bound times 1 - s_o = sum_{t != o} s_t: |sum (a_o - a_t) s_t| <= 2A (1 - "
             "s_o), |sum (gamma_o - gamma_t) s_t| <= Gamma (1 - s_o) (symbolic T)", "symbolic", factor_bounds,
             by=("definition1",)),
        Step("|x y| <= X Y for |x| <= X, |y| <= Y, giving the bound 2 Gamma A (1 - s_o)^2", "symbolic", product_bound),
    ), RECONSTRUCTION)
