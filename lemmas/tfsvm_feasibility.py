"""Transformers as SVMs, feasibility under over-parameterisation (claim 3,
docs/statements.md#tfsvm-feasibility): if d >= max(T-1, n),
(Att-SVM) is feasible for almost every dataset and every alpha.

The constraint rows are vec(D_i[t] z_i^T), D_i[t] = x_{i,alpha_i} - x_it (t != alpha_i). Pick T-1
coordinates R and n coordinates C of R^d (possible exactly when d >= T-1 and d >= n) and keep the
columns W[r, c], r in R, c in C: a square block A = B M with B = blockdiag_i(D_i[:, R]) and
M[(i, r'), (r, c)] = delta_{r'r} Z[i, c], a row permutation of blockdiag(Z[:, C], ..., Z[:, C]).
So det A = +-prod_i det D_i[:, R] det(Z[:, C])^(T-1), a polynomial that is not identically zero:
for almost every dataset A is nonsingular, A vec(W) = 1 is solvable and (Att-SVM) is feasible.
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import residuals, total

STATEMENT = "d >= max(T-1, n) => for almost every dataset (Att-SVM) is feasible for every alpha"

CASES = ((1, 1), (1, 2), (2, 1), (2, 2), (1, 3), (3, 1))   # (k = T-1, n) checked by explicit determinants


def _block(kk: int, n: int):
    D = [sp.Matrix(kk, kk, lambda r, c, i=i: sp.Symbol(f"D{i}_{r}{c}", real=True)) for i in range(n)]
    Z = sp.Matrix(n, n, lambda r, c: sp.Symbol(f"z{r}_{c}", real=True))
    # row (i, t) = vec(D_i[t] z_i^T) restricted to columns (r in R, c in C), row-major
    A = sp.Matrix([list(sp.kronecker_product(D[i][t, :], Z[i, :])) for i in range(n) for t in range(kk)])
    return A, D, Z


def explicit_determinant(kk: int, n: int) -> sp.Expr:
    """det A - (-1)^{k(k-1)/2 n(n-1)/2} prod_i det D_i det(Z)^k for explicit sizes."""
    A, D, Z = _block(kk, n)
    sign = (-1) ** ((kk * (kk - 1) // 2) * (n * (n - 1) // 2))
    return sp.expand(A.det(method="berkowitz") - sign * sp.Mul(*[Di.det() for Di in D]) * Z.det() ** kk)


def factorisation() -> dict:
    """A[(i, t), (r, c)] = D_i[t, r] Z[i, c] equals sum_{i', r'} B[(i, t), (i', r')] M[(i', r'), (r, c)] with
    B = delta_{ii'} D_i[t, r'] and M = delta_{r'r} Z[i', c], for symbolic n and k = T - 1 (explicit determinants of A
    for (T-1, n) in CASES as a cross-check of the sign)."""
    i, ip, t, r, rp, c, n, kk = sp.symbols("i ip t r rp c n k", integer=True, positive=True)
    D, Z = sp.IndexedBase("D", real=True), sp.IndexedBase("Z", real=True)
    product = total(total(sp.KroneckerDelta(i, ip) * D[ip, t, rp] * sp.KroneckerDelta(rp, r) * Z[ip, c], rp, kk), ip, n)
    explicit = {f"det_T-1={a}_n={b}": explicit_determinant(a, b) for a, b in CASES}
    return residuals(block_product=product - D[i, t, r] * Z[i, c], **explicit)


def not_identically_zero() -> dict:
    """At D_i = I and Z = I the polynomial prod_i det D_i det(Z)^k is 1: it is not the zero polynomial (symbolic
    sizes)."""
    n, kk = sp.symbols("n k", integer=True, positive=True)
    return residuals(value_at_identity=sp.det(sp.Identity(kk)) ** n * sp.det(sp.Identity(n)) ** kk - 1)


def solvable() -> dict:
    """Full row rank A (m x N): x = A^T (A A^T)^{-1} 1 solves A x = 1, so every constraint value is 1 (symbolic
    sizes)."""
    m, N = sp.symbols("m N", integer=True, positive=True)
    A = sp.MatrixSymbol("A", m, N)
    ones = sp.OneMatrix(m, 1)
    return residuals(solves=sp.simplify(A * (A.T * (A * A.T).I * ones)) == ones)


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("d >= T-1 and d >= n give coordinates R (|R| = T-1) and C (|C| = n); the columns W[R, C] form a square "
             "block A = blockdiag_i(D_i[:, R]) M, M a row permutation of blockdiag(Z[:, C], ..., Z[:, C]): det A = "
             "+-prod_i det D_i[:, R] det(Z[:, C])^(T-1) (symbolic n, T)", "symbolic", factorisation),
        Step("that determinant is a polynomial in the data that is not identically zero", "symbolic",
             not_identically_zero),
        Step("the zero set of a nonzero polynomial is Lebesgue-null; with finitely many alpha (each only changes which "
             "differences D_i appear), almost every dataset makes every alpha's block nonsingular", "cited",
             reference="Caron, Traynor 2005, 'The zero set of a polynomial'"),
        Step("a nonsingular block gives A full row rank, so A vec(W) = 1 is solvable: every constraint value is 1 >= "
             "1, (Att-SVM) is feasible (symbolic sizes)", "symbolic", solvable),
    ))
