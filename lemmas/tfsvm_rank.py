"""Transformers as SVMs, claim 5 (docs/statements.md#tfsvm-rank): rank(W_mm(alpha)) <= n.

The constraints see W only through the products W z_i, so projecting W's rows onto the span of
the queries keeps every constraint value and does not increase ||W||_F; the minimum-norm W_mm is
therefore its own projection, W_mm = (W_mm Z^T G^{-1}) Z with Z the n' x d matrix of a basis of
the queries (n' <= n) and G = Z Z^T: a product through an n'-dimensional space. (Equivalently,
KKT stationarity writes W_mm = sum_{i,t} lambda_it (x_{i,alpha_i} - x_it) z_i^T.)

Every link is checked by sympy for symbolic sizes (matrix symbols of sizes n' x d, d x d, sums
over a symbolic d): the constraints depend on W only through W z_i; Pi = Z^T G^{-1} Z is a
symmetric idempotent with (W Pi) z = W z for every query z = Z^T c, so W Pi is feasible whenever
W is, with the same constraint values; the Pythagorean split W W^T = (W Pi)(W Pi)^T +
(W (I - Pi))(W (I - Pi))^T, whose trace is ||W||_F^2 = ||W Pi||_F^2 + ||W (I - Pi)||_F^2; the
minimality inference (split + "W Pi feasible, W_mm least-norm" + a sum of squares is >= each
of its terms, decided by sympy's linear real arithmetic, then m^2 <= 0 => m = 0) that gives
W_mm (I - Pi) = 0; and the factorisation W_mm = W_mm Pi = U Z with U = W_mm Z^T G^{-1} of size
d x n'. Matrix identities are decided by expanding the products and applying only G^T = G
(G = Z Z^T), Z Z^T = G and G G^{-1} = G^{-1} G = I (`canonical`). Taken as the definitions
they are: a basis of span(z_1..z_n) has n' <= n vectors and an invertible Gram matrix, and a
matrix U Z with U of size d x n' has rank <= n' (its range lies in U's)."""

import sympy as sp
from sympy.logic.inference import satisfiable

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import d, j, k, residuals, total

STATEMENT = "if the W-SVM (Att-SVM) for alpha is feasible, rank(W_mm(alpha)) <= n"

_n, _d = sp.symbols("n' d", integer=True, positive=True)
Z, G, W = sp.MatrixSymbol("Z", _n, _d), sp.MatrixSymbol("G", _n, _n), sp.MatrixSymbol("W", _d, _d)
I = sp.Identity(_d)
PI = sp.MatMul(Z.T, G.I, Z)                                            # projector onto the span of the query basis


def _reduce(factors: list) -> list:
    """Apply Z Z^T = G and G G^{-1} = G^{-1} G = I to a product's factors until none applies."""
    out = list(factors)
    changed = True
    while changed:
        changed = False
        for a in range(len(out) - 1):
            pair = (out[a], out[a + 1])
            if pair == (Z, Z.T):
                out[a:a + 2] = [G]
            elif pair in ((G, G.I), (G.I, G)):
                out[a:a + 2] = []
            else:
                continue
            changed = True
            break
    return [f for f in out if not isinstance(f, sp.Identity)]


def _atom(f: sp.MatrixExpr) -> sp.MatrixExpr:
    """A factor with G^T = G applied (G = Z Z^T is symmetric): G^T -> G, (G^-1)^T and (G^T)^-1 -> G^-1."""
    return G.I if f in (G.I.T, G.T.I) else G if f == G.T else f


def _terms(e: sp.MatrixExpr) -> list:
    """e as a list of (coefficient, factors) products, distributed by hand (sympy folds repeated factors into
    powers as it expands): sums split, products and positive integer powers distribute, a transpose reverses its
    products and transposes their factors, the identity is the empty product."""
    if isinstance(e, sp.ZeroMatrix):
        return []
    if isinstance(e, sp.Identity):
        return [(sp.Integer(1), [])]
    if isinstance(e, sp.MatAdd):
        return [term for a in e.args for term in _terms(a)]
    if isinstance(e, sp.MatMul):
        coeff, mats = e.as_coeff_matrices()
        out = [(coeff, [])]
        for f in mats:
            out = [(c1 * c2, f1 + f2) for c1, f1 in out for c2, f2 in _terms(f)]
        return out
    if isinstance(e, sp.MatPow) and e.exp.is_Integer and e.exp > 0:
        return _terms(sp.MatMul(*[e.base] * int(e.exp), evaluate=False))
    if isinstance(e, sp.Transpose) and not isinstance(e.arg, (sp.MatrixSymbol, sp.Inverse)):
        return [(c, [_atom(f.T) for f in reversed(fs)]) for c, fs in _terms(e.arg)]
    return [(sp.Integer(1), [_atom(e)])]


def canonical(expr: sp.MatrixExpr) -> dict:
    """expr as {product of factors: coefficient}, each product reduced (`_reduce`) and like products collected,
    zero coefficients dropped. Every rewrite is an equality, so an identity holds when its residual's canonical
    form is empty (sound, not complete: a nonempty form only means the rewrites did not show it)."""
    out: dict = {}
    for coeff, factors in _terms(expr):
        key = tuple(_reduce([_atom(f) for f in factors]))
        out[key] = sp.expand(out.get(key, 0) + coeff)
    return {key: c for key, c in out.items() if c != 0}


def _zero(residual: sp.MatrixExpr) -> bool:
    return not canonical(residual)


def through_queries() -> dict:
    """<(x_alpha - x_t) z^T, W>_F = (x_alpha - x_t)^T (W z) (symbolic d): the constraints see W only via W z_i."""
    xa, xt, z, Wi = (sp.IndexedBase(n, real=True) for n in ("x_alpha", "x_t", "z", "W"))
    frob = total(total((xa[j] - xt[j]) * z[k] * Wi[j, k], k, d), j, d)
    through = total((xa[j] - xt[j]) * total(Wi[j, k] * z[k], k, d), j, d)
    return residuals(frobenius_is_through_Wz=frob - through)


def projector() -> dict:
    """Pi = Z^T G^{-1} Z: Pi^2 = Pi, Pi^T = Pi, and for every query z = Z^T c (a combination of the basis rows) and
    token difference y: y^T (W Pi) z = y^T W z, so W Pi meets every constraint W meets, with the same value
    (symbolic sizes)."""
    c, y = sp.MatrixSymbol("c", _n, 1), sp.MatrixSymbol("y", _d, 1)
    return residuals(idempotent=_zero(PI * PI - PI), symmetric=_zero(PI.T - PI),
                     same_constraint_values=_zero(y.T * W * PI * Z.T * c - y.T * W * Z.T * c))


def pythagoras() -> dict:
    """W W^T = (W Pi)(W Pi)^T + (W (I - Pi))(W (I - Pi))^T (symbolic sizes): the cross terms W Pi (I - Pi)^T W^T
    and its transpose vanish. Its trace, with ||M||_F^2 = tr(M M^T), is
    ||W||_F^2 = ||W Pi||_F^2 + ||W (I - Pi)||_F^2."""
    A, B = W * PI, W * (I - PI)
    return residuals(split=_zero(W * W.T - A * A.T - B * B.T),
                     cross_term=_zero(A * B.T))


def minimality() -> dict:
    """With N = ||W_mm||_F^2, P = ||W_mm Pi||_F^2, Q = ||W_mm (I - Pi)||_F^2 = sum_{j,k} M_jk^2 (M = W_mm (I - Pi)),
    written for any one entry m as Q = m^2 + R with R >= 0 the other squares: the split N = P + Q (step 3) and
    minimality N <= P (W_mm Pi is feasible by step 2, W_mm is least-norm) leave no m^2 > 0 (sympy, linear real
    arithmetic on the scalars), and m^2 <= 0 forces m = 0: every entry of W_mm (I - Pi) vanishes (any sizes)."""
    N, P, Q, S, R = sp.symbols("N P Q S R", real=True)                  # S stands for m^2
    m = sp.Symbol("m", real=True)
    facts = sp.And(sp.Eq(N, P + Q), N <= P, sp.Eq(Q, S + R), S >= 0, R >= 0)
    no_positive_square = satisfiable(sp.And(facts, S > 0), use_lra_theory=True) is False
    consistent = satisfiable(facts, use_lra_theory=True) is not False
    entry_zero = sp.reduce_inequalities([m ** 2 <= 0], [m]) == sp.Eq(m, 0)
    M = sp.IndexedBase("M", real=True)
    squares = sp.Sum(M[j, k] ** 2, (j, 1, d), (k, 1, d)).is_nonnegative is True   # R >= 0: a sum of real squares
    return residuals(no_positive_square=no_positive_square, premises_consistent=consistent, square_le_0_is_0=entry_zero,
                     sum_of_squares_nonnegative=squares)


def low_rank() -> dict:
    """W = W Pi + W (I - Pi), so W_mm (I - Pi) = 0 (step 4) gives W_mm = W_mm Pi = U Z with U = W_mm Z^T G^{-1} of
    size d x n'; then W_mm x = U (Z x) for every x: the range of W_mm lies in that of U, so rank(W_mm) <= n' <= n
    (symbolic sizes)."""
    U = W * Z.T * G.I
    x = sp.MatrixSymbol("x", _d, 1)
    return residuals(W_is_W_Pi_plus_W_I_minus_Pi=_zero(W - W * PI - W * (I - PI)),
                     W_Pi_is_U_Z=_zero(W * PI - U * Z),
                     U_has_n_prime_columns=U.shape == (_d, _n),
                     range_in_range_U=_zero((U * Z) * x - U * (Z * x)))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("every (Att-SVM) constraint <(x_{i,alpha_i} - x_it) z_i^T, W> depends on W only through W z_i "
             "(symbolic d)", "symbolic", through_queries),
        Step("Pi = Z^T (Z Z^T)^{-1} Z, Z a basis of the queries (n' <= n rows), is the orthogonal projector onto their "
             "span: y^T (W Pi) z_i = y^T W z_i, so W Pi is feasible whenever W is (symbolic sizes)", "symbolic",
             projector),
        Step("||W||_F^2 = ||W Pi||_F^2 + ||W (I - Pi)||_F^2, as the matrix identity W W^T = (W Pi)(W Pi)^T + "
             "(W (I - Pi))(W (I - Pi))^T (symbolic sizes)", "symbolic", pythagoras),
        Step("W_mm is the least-norm feasible point and W_mm Pi is feasible (step 2), so with step 3 "
             "||W_mm (I - Pi)||_F^2 <= 0 and every entry of W_mm (I - Pi) is 0 (sympy real arithmetic, any sizes)",
             "symbolic", minimality),
        Step("W_mm = W_mm Pi = (W_mm Z^T G^-1) Z, a product through R^{n'}: rank(W_mm) <= n' <= n (symbolic sizes)",
             "symbolic", low_rank),
    ))
