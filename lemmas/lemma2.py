"""Lemma 2 / Lemma 11 (SPEC.md A): the witness p = W^+ v / Gamma meets every (ATT-SVM)
constraint for alpha = opt when labels share one sign s and v is in range(W).

Symbolically: (k_opt - k_t)^T p = (x_opt - x_t)^T W W^+ v / Gamma, and W W^+ v = v for
v = W c (Penrose: W W^+ W = W), so with gamma = Y X v = s X v and p = s W^+ v / Gamma every constraint value is
(gamma_opt - gamma_t) / Gamma >= 1.
"""

import sympy as sp

from attnsvm.claims import Derivation, Verdict


def derive() -> Derivation:
    d = 2
    xo = sp.Matrix(sp.symbols("xo1:%d" % (d + 1), real=True))
    xt = sp.Matrix(sp.symbols("xt1:%d" % (d + 1), real=True))
    v = sp.Matrix(sp.symbols("v1:%d" % (d + 1), real=True))
    s, Gamma = sp.symbols("s Gamma", nonzero=True)
    # Full-rank W (Lemma 2): W W^{-1} = I.
    W = sp.Matrix(d, d, sp.symbols("w1:%d" % (d * d + 1), real=True))
    p = s * W.inv() * v / Gamma
    gam_o, gam_t = s * (xo.T * v)[0], s * (xt.T * v)[0]
    full = sp.simplify(((xo - xt).T * W * p)[0] - (gam_o - gam_t) / Gamma)
    # Rank-deficient W with v in range(W) (Lemma 11): W = a b^T, v = W c, W^+ = b a^T / (|a|^2 |b|^2).
    a = sp.Matrix(sp.symbols("a1:%d" % (d + 1), real=True))
    b = sp.Matrix(sp.symbols("b1:%d" % (d + 1), real=True))
    c = sp.Matrix(sp.symbols("c1:%d" % (d + 1), real=True))
    W1 = a * b.T
    W1p = b * a.T / ((a.T * a)[0] * (b.T * b)[0])
    penrose = sp.simplify(W1 * W1p * W1 - W1)
    v1 = W1 * c
    p1 = s * W1p * v1 / Gamma
    g_o, g_t = s * (xo.T * v1)[0], s * (xt.T * v1)[0]
    rank1 = sp.simplify(((xo - xt).T * W1 * p1)[0] - (g_o - g_t) / Gamma)
    ok = full == 0 and rank1 == 0 and penrose == sp.zeros(d, d)
    return Derivation(
        "(k_opt - k_t)^T (s W^+ v / Gamma) = (gamma_opt - gamma_t) / Gamma, for full-rank W and for v in range(W)",
        Verdict.PROVED if ok else Verdict.REFUTED,
        {"residual_full_rank": str(full), "residual_range": str(rank1), "penrose_residual": str(penrose.tolist()),
         "sizes": f"d = {d}, symbolic W (full rank) and W = a b^T (rank one)",
         "closing_step": "Gamma = min (gamma_opt - gamma_t) > 0 (strict optimality) gives every constraint value >= 1"},
    )
