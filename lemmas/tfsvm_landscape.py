"""Transformers as SVMs, over-parameterisation gives a benign landscape (claims 3-4,
docs/statements.md#tfsvm-landscape; the paper's
Section 5.2 as summarised: no stationary points, no spurious locally optimal directions). Our
reconstruction: (i) with linearly independent queries (possible iff d >= n) and no input whose scores are
all tied, L(W) has no stationary point, for any loss with loss' < 0; (ii) spurious LMMs become rare as d
grows past max(T-1, n) (numeric; they do occur at the threshold).

(i) is proved here in full: the linear head's scores gamma_it = Y_i v^T x_it make input i's gradient
term Y_i Cov_{s_i}(X_i) v (sympy, symbolic T and d), whose quadratic form in v is
sum_t s_t (v^T (x_t - xbar))^2 > 0 unless all scores are equal; independent queries keep the inputs'
terms u_i z_i^T from cancelling (symbolic sizes). d >= T - 1 plays no role in (i).
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import T, d, j, k, residuals, t, total

STATEMENT = ("(i) d >= n, linearly independent queries, no input with all scores tied => grad L(W) != 0 for every W "
             "(loss' < 0); (ii) the fraction of data with spurious LMMs falls as d grows past max(T-1, n)")
RECONSTRUCTION = ("statement reconstructed from the summary's 'benign landscape (no stationary points, no spurious "
                  "locally optimal directions) under over-parameterisation'; (ii) is stated as a trend because "
                  "spurious LMMs exist at d = max(T-1, n) (tests/test_tfsvm_paths.py); loss' < 0 is our reading of "
                  "Assumption A (NOTES.md)")


def covariance_form() -> dict:
    """Coordinate j of X^T S'(a) gamma = sum_t s_t (gamma_t - f) x_t with gamma_t = Y v^T x_t, f = sum_t s_t gamma_t,
    equals Y sum_t s_t (x_tj - xbar_j) (v^T (x_t - xbar)), xbar = sum_t s_t x_t, when sum_t s_t = 1 (symbolic T, d)."""
    s, x, v = sp.IndexedBase("s", positive=True), sp.IndexedBase("x", real=True), sp.IndexedBase("v", real=True)
    Y = sp.Symbol("Y", real=True)
    vx = lambda tt: total(v[k] * x[tt, k], k, d)                              # v^T x_t
    xbar = lambda jj: total(s[t] * x[t, jj])                                  # xbar_j
    vxbar = total(v[k] * xbar(k), k, d)                                       # v^T xbar
    f = Y * total(s[t] * vx(t))
    lhs = total(s[t] * (Y * vx(t) - f) * x[t, j])
    rhs = Y * total(s[t] * (x[t, j] - xbar(j)) * (vx(t) - vxbar))
    res = sp.expand(lhs - rhs).subs(sp.Sum(s[t], (t, 1, T)), 1)
    return residuals(gradient_term=sp.expand(res))


def quadratic_form() -> dict:
    """v^T Cov_s(X) v = sum_t s_t (v^T (x_t - xbar))^2 with positive weights: >= 0, and 0 only when every
    v^T x_t = v^T xbar, i.e. all of the input's scores are equal (symbolic T)."""
    s, e = sp.IndexedBase("s", positive=True), sp.IndexedBase("e", real=True)   # e_t = v^T (x_t - xbar)
    form = total(s[t] * e[t] ** 2)
    return residuals(nonnegative=bool((s[t] * e[t] ** 2).is_nonnegative),
                     form=form - sp.Sum(s[t] * e[t] ** 2, (t, 1, T)))


def independent_queries() -> dict:
    """sum_i u_i z_i^T = U^T Z (rows z_i of Z, n x d); with Z of full row rank (needs d >= n)
    U^T = U^T Z Z^T (Z Z^T)^-1, so sum_i u_i z_i^T = 0 forces every u_i = 0 (symbolic n, d)."""
    n, dd = sp.symbols("n d", integer=True, positive=True)
    U, Z = sp.MatrixSymbol("U", n, dd), sp.MatrixSymbol("Z", n, dd)
    return residuals(recovers_U=sp.simplify(U.T * Z * Z.T * (Z * Z.T).I) == U.T)


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("grad_W L = (1/n) sum_i loss'_i (X_i^T S'(a_i) gamma_i) z_i^T, and with the linear head's scores "
             "X_i^T S'(a_i) gamma_i = Y_i Cov_{s_i}(X_i) v (symbolic T, d)", "symbolic", covariance_form,
             by=("tfsvm-frobenius",)),
        Step("v^T Cov_s(X) v = sum_t s_t (v^T (x_t - xbar))^2 > 0 unless all scores of the input are equal, so each "
             "input's term u_i = loss'_i Y_i Cov_{s_i}(X_i) v is nonzero (loss' < 0, s_t > 0) (symbolic T)", "symbolic",
             quadratic_form, by=("assumption-A",)),
        Step("independent queries: sum_i u_i z_i^T = 0 forces every u_i = 0 (symbolic n, d); so grad L(W) != 0 for "
             "every W: no stationary point (d >= T - 1 is not used)", "symbolic", independent_queries),
        Step("(ii) spurious LMMs at d = k max(T-1, n): present at k = 1, rare by k = 8 (Gaussian data), with the GMM's "
             "every token a support vector more and more often; and the search for stationary points that could "
             "refute (i)", "numeric",
             reference="checks/tfsvm_landscape.py (`transition`, stationary-point search; witnesses "
                       "counterexamples/witnesses/tfsvm-landscape--*.json)"),
    ), RECONSTRUCTION)
