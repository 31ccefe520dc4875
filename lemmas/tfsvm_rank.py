"""Transformers as SVMs, claim 5 (SPEC.md B): rank(W_mm(alpha)) <= n.

The constraints see W only through the products W z_i, so projecting W's rows onto the span of
the queries keeps every constraint value and does not increase ||W||_F; the minimum-norm W_mm is
therefore its own projection, W_mm = (W_mm Z^T G^{-1}) Z with Z the n' x d matrix of a basis of
the queries (n' <= n) and G = Z Z^T: a product through an n'-dimensional space. (Equivalently,
KKT stationarity writes W_mm = sum_{i,t} lambda_it (x_{i,alpha_i} - x_it) z_i^T.) Every step is
checked for symbolic sizes (sums over d, matrix symbols).
"""

import itertools

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from lemmas.symbolic import d, j, k, residuals, total

STATEMENT = "if the W-SVM (Att-SVM) for alpha is feasible, rank(W_mm(alpha)) <= n"

_n, _d = sp.symbols("n' d", integer=True, positive=True)
Z, G, W = sp.MatrixSymbol("Z", _n, _d), sp.MatrixSymbol("G", _n, _n), sp.MatrixSymbol("W", _d, _d)
PI = [Z.T, G.I, Z]                                                     # projector onto span of the query basis


def _product(*factors) -> sp.MatrixExpr:
    """The product of factor lists, with every adjacent Z Z^T replaced by G = Z Z^T."""
    out = []
    for f in factors:
        for a in f:
            if out and out[-1] == Z and a == Z.T:
                out[-1] = G
            else:
                out.append(a)
    return sp.MatMul(*out).doit()


def through_queries() -> dict:
    """<(x_alpha - x_t) z^T, W>_F = (x_alpha - x_t)^T (W z) (symbolic d): the constraints see W only via W z_i."""
    xa, xt, z, Wi = (sp.IndexedBase(n, real=True) for n in ("x_alpha", "x_t", "z", "W"))
    frob = total(total((xa[j] - xt[j]) * z[k] * Wi[j, k], k, d), j, d)
    through = total((xa[j] - xt[j]) * total(Wi[j, k] * z[k], k, d), j, d)
    return residuals(frobenius_is_through_Wz=frob - through)


def projector() -> dict:
    """Pi = Z^T G^{-1} Z: Pi^2 = Pi, Pi^T = Pi (G symmetric), Pi Z^T = Z^T, so (W Pi) z_i = W z_i for every query
    (each z_i is a combination of the basis rows), and (I - Pi) Pi = 0 (symbolic sizes)."""
    square = _product(PI, PI) == _product(PI)
    symmetric = _product(PI).T.subs(G.T, G) == _product(PI)
    keeps = _product(PI, [Z.T]) == Z.T
    return residuals(idempotent=square, symmetric=symmetric, keeps_queries=keeps)


def pythagoras() -> dict:
    """||W||_F^2 = ||W Pi||_F^2 + ||W (I - Pi)||_F^2: the cross term tr((W Pi)^T W (I - Pi)) = tr(Pi W^T W (I - Pi)) =
    tr(W^T W (I - Pi) Pi) (cyclic) vanishes since (I - Pi) Pi = Pi - Pi^2 = 0 (symbolic sizes)."""
    cross = sp.MatAdd(_product(PI), -_product(PI, PI)).doit()
    return residuals(cross_term_factor_zero=cross == sp.ZeroMatrix(_d, _d) or cross == 0)


def low_rank() -> dict:
    """W_mm minimal and W_mm Pi feasible with ||W_mm Pi|| <= ||W_mm|| force ||W_mm (I - Pi)|| = 0, so W_mm = W_mm Pi
    = (W_mm Z^T G^{-1}) Z = U Z with U d x n'. Cross-check: the KKT form sum_{i,t} lambda_it (x_{i,0} - x_it) z_i^T
    has every (n+1)-minor identically 0 at (n, d, T) = (1, 2, 3), (2, 3, 2)."""
    factored = _product([W], PI) == sp.MatMul(sp.MatMul(W, Z.T, G.I).doit(), Z).doit()
    minors = {}
    for n, dd, T in ((1, 2, 3), (2, 3, 2)):
        X = [[sp.Matrix(sp.symbols(f"x{i}_{t}_0:{dd}", real=True)) for t in range(T)] for i in range(n)]
        Zs = sp.Matrix(n, dd, lambda i, c: sp.Symbol(f"z{i}_{c}", real=True))
        Wk = sp.zeros(dd, dd)
        for i in range(n):
            for t in range(1, T):
                Wk += sp.Symbol(f"lam{i}_{t}", nonnegative=True) * (X[i][0] - X[i][t]) * Zs[i, :]
        subsets = list(itertools.combinations(range(dd), n + 1))
        minors[f"minors_vanish_n{n}_d{dd}_T{T}"] = all(
            sp.expand(Wk.extract(list(r), list(c)).det()) == 0 for r in subsets for c in subsets)
    return residuals(W_Pi_is_U_Z=factored, **minors)


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("every (Att-SVM) constraint <(x_{i,alpha_i} - x_it) z_i^T, W> depends on W only through W z_i "
             "(symbolic d)", "symbolic", through_queries),
        Step("Pi = Z^T (Z Z^T)^{-1} Z, Z a basis of the queries (n' <= n rows), is the orthogonal projector onto their span: "
             "W Pi has the same constraint values as W (symbolic sizes)", "symbolic", projector),
        Step("||W||_F^2 = ||W Pi||_F^2 + ||W (I - Pi)||_F^2 (symbolic sizes)", "symbolic", pythagoras),
        Step("W_mm is the least-norm feasible point, so W_mm (I - Pi) = 0 and W_mm = (W_mm Z^T G^{-1}) Z, a product "
             "through R^{n'}: rank(W_mm) <= n' <= n", "exact", low_rank),
    ))
