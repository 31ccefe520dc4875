"""Lemma 2 / Lemma 11 (docs/statements.md#lemma2; proof in Appendix B.6): (ATT-SVM) with alpha = opt is feasible
when the labels share one sign s, the optimal tokens are strictly optimal and v is in range(W)
(Lemma 11; Lemma 2's full-rank W is the special case).

The proof exhibits the witness p = s W^+ v / Gamma, Gamma = min_{i, t != opt_i}
(gamma_{i,opt_i} - gamma_it). Every step is checked for a symbolic dimension d (matrix symbols).
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import d, residuals

STATEMENT = ("labels of one sign s, gamma_{i,opt_i} > gamma_it for t != opt_i, v in range(W) (Lemma 11; full-rank W: "
             "Lemma 2) => (ATT-SVM) with alpha = opt is feasible")
RECONSTRUCTION = ("the common label sign is our reading of the proof (docs/statements.md#lemma2: the witness needs "
                  "one sign of Y_i)")


def full_rank_range() -> dict:
    """Full-rank W: c = W^{-1} v has W c = v, so v is in range(W)."""
    W, v = sp.MatrixSymbol("W", d, d), sp.MatrixSymbol("v", d, 1)
    return residuals(W_Winv_v_equals_v=sp.simplify(W * W.I * v) == v)


def witness_values() -> dict:
    """For v = W c and p = s c / Gamma: (k_opt - k_t)^T p with k = W^T x equals (gamma_opt - gamma_t)/Gamma,
    gamma = s X v. The paper's c = W^+ v is one such c: W W^+ W = W, checked for W = a b^T at d = 2."""
    W, c = sp.MatrixSymbol("W", d, d), sp.MatrixSymbol("c", d, 1)
    xo, xt = sp.MatrixSymbol("x_opt", d, 1), sp.MatrixSymbol("x_t", d, 1)
    s, Gamma = sp.Symbol("s", nonzero=True), sp.Symbol("Gamma", positive=True)
    v, p = W * c, s * c / Gamma
    value = (W.T * xo - W.T * xt).T * p
    gap = s * (xo.T * v) - s * (xt.T * v)
    a, b = sp.Matrix(sp.symbols("a1:3", real=True)), sp.Matrix(sp.symbols("b1:3", real=True))
    W1 = a * b.T
    W1p = b * a.T / ((a.T * a)[0] * (b.T * b)[0])
    return residuals(constraint_value=value - gap / Gamma,
                     paper_choice_penrose_rank1_d2=sp.simplify(W1 * W1p * W1 - W1))


def normalisation() -> dict:
    """gamma_opt - gamma_t = Gamma + e with e >= 0 and Gamma > 0 gives a constraint value >= 1."""
    Gamma, e = sp.Symbol("Gamma", positive=True), sp.Symbol("e", nonnegative=True)
    excess = sp.simplify((Gamma + e) / Gamma - 1)
    return residuals(excess_is_e_over_Gamma=excess - e / Gamma, nonnegative=bool(excess.is_nonnegative))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("full-rank W has range(W) = R^d: c = W^{-1} v solves W c = v (so Lemma 2 is a case of Lemma 11)",
             "symbolic", full_rank_range),
        Step("witness: for v = W c (v in range(W)) and p = s c / Gamma, every (ATT-SVM) value (k_opt - k_t)^T p "
             "= s (x_opt - x_t)^T v / Gamma = (gamma_opt - gamma_t) / Gamma (k = W^T x, gamma = s X v; the paper's "
             "c = W^+ v is the least-norm such c)", "symbolic", witness_values, by=("definition1",)),
        Step("Gamma = min_{i, t != opt_i} (gamma_opt - gamma_t) > 0 by strict optimality, and every gap is Gamma + e, "
             "e >= 0, so every constraint value is >= 1: p is feasible", "symbolic", normalisation,
             by=("definition1",)),
    ), RECONSTRUCTION)
