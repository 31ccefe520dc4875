"""Implicit bias and fast rates (
docs/statements.md#rates-joint), joint training of W and the linear decoder v by normalized GD
on Gaussian-like data: W converges in direction to W_mm(opt), the decoder's normalized margin to the
label SVM's, and the loss decays like exp(-t^{1/3}).

The data model ("Gaussian-like": x_i1 = Y_i e_1 is the label token and the query, the other tokens
Gaussian orthogonal to e_1) and the law are OUR reconstruction (paper C's are not in papers/). sympy
checks (symbolic T): the decoder block of the gradient, d/dv loss(Y v^T X^T s) = loss' Y X^T s, and
that W's block is the linear-head gradient with the current scores gamma_t = Y v^T x_t (the attention
block of `dynamics.joint`); that in the data model W = c e_1 e_1^T separates the label token with margin
c (so W_mm(opt) exists) and v = e_1 attains the label margin 1 with ||v|| = 1 (Cauchy-Schwarz makes it
optimal). The convergence and the rate are paper C's theorem (open here) and are checked numerically.
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import T, d, j, residuals, resolve, softmax, t

STATEMENT = ("joint normalized GD on (W, v), Gaussian-like data: W -> W_mm(opt) in direction, the decoder's normalized "
             "margin -> the label SVM's, and L(theta_t) <= exp(-c t^{1/3})")
RECONSTRUCTION = ("the Gaussian-like data model and the exp(-t^{1/3}) law are our reconstruction of paper C's joint "
                  "training result (docs/statements.md#rates-joint); the decoder target is the label SVM on the label "
                  "tokens")


def decoder_gradient() -> dict:
    """f = sum_t s_t v . x_t (s = S(a), fixed): d loss(Y f)/d v_k = loss'(Y f) Y sum_t s_t x_tk, and d f/d a_u =
    s_u (gamma_u - f) with gamma_u = v . x_u: the attention block is the linear-head gradient (symbolic T)."""
    a, x, v = sp.IndexedBase("a", real=True), sp.IndexedBase("x", real=True), sp.IndexedBase("v", real=True)
    Y = sp.Symbol("Y", real=True)
    kk, u = sp.Symbol("kk", integer=True, positive=True), sp.Symbol("u", integer=True, positive=True)
    loss = sp.Function("loss")
    s, _ = softmax(a)
    f = sp.Sum(s(t) * sp.Sum(v[j] * x[t, j], (j, 1, d)), (t, 1, T))
    dv = resolve(sp.diff(loss(Y * f), v[kk]))
    expected = sp.Subs(sp.Derivative(loss(sp.Symbol("_x")), sp.Symbol("_x")), sp.Symbol("_x"), Y * f).doit() \
        * Y * sp.Sum(s(t) * x[t, kk], (t, 1, T))
    gamma = lambda w: sp.Sum(v[j] * x[w, j], (j, 1, d))
    da = resolve(sp.diff(f, a[u]))
    return residuals(decoder_block=sp.simplify(dv - expected), attention_block=sp.simplify(da - s(u) * (gamma(u) - f)))


def data_model() -> dict:
    """Coordinates (first, rest) with the rest a block of any size: x_1 = (Y, 0), x_t = (0, xi), z = x_1,
    W = c e_1 e_1^T = [[c, 0], [0, 0]]: (x_1 - x_t)^T W z = c Y^2 = c (Y^2 = 1); v = e_1 gives Y v . x_1 = Y^2 = 1, and
    any v = (v_1, rest) with v_1 >= 1 has ||v||^2 = v_1^2 + ||rest||^2 >= 1."""
    Y, c, xi = sp.Symbol("Y", real=True), sp.Symbol("c", positive=True), sp.Symbol("xi", real=True)
    x1, xt, W = sp.Matrix([Y, 0]), sp.Matrix([0, xi]), sp.Matrix([[c, 0], [0, 0]])
    margin = ((x1 - xt).T * W * x1)[0]
    v1, rest = sp.Symbol("v_1", real=True), sp.Symbol("rest_sq", nonnegative=True)
    return residuals(separation=margin.subs(Y ** 2, 1) - c, label_margin=(Y * Y).subs(Y ** 2, 1) - 1,
                     norm_bound=bool((v1 ** 2 + rest - v1 ** 2).is_nonnegative))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("the gradient blocks: d/dv = loss' Y X^T s and the attention block is the linear-head gradient with "
             "scores "
             "gamma_t = Y v . x_t (symbolic T)", "symbolic", decoder_gradient, by=("lemma4",)),
        Step("in the data model W = c e_1 e_1^T separates the label token (W_mm(opt) exists) and v_mm = e_1 with label "
             "margin 1", "symbolic", data_model),
        Step("joint normalized GD: W converges globally to W_mm(opt), the decoder in margin, and L <= exp(-c t^{1/3}) "
             "(paper C's theorem; its statement is not in papers/)", "open"),
        Step("1 - corr(W_H, W_mm) <= 0.05, decoder margin >= 0.99 x the SVM's, fitted exponent of -log L >= 1/3 - 0.05",
             "numeric", reference="checks/rates_joint.py (joint NGD, Gaussian-like data, H = 200 x horizon)",
             by=("rates-global",)),
    ), RECONSTRUCTION)
