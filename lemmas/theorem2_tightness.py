"""Appendix E (Figure 8): Theorem 2(b) needs n = 1. On our hand instance (
docs/statements.md#theorem2-tightness; n = 2, T = 2, so
Assumption B holds; W = I, Y = (1, 1), v = (1, -3), logistic loss; stored as the witness
theorem2-tightness--hand.json)

    X_1 = [(1, 0), (0, 0)]:  k_opt - k_other = e_1,       scores (1, 0)
    X_2 = [(0, 0), (2, 1)]:  k_other - k_opt = (2, 1),    scores (0, -1)

GD with ANY step eta > 0 started in R = {p_1 >= 0, p_1 + p_2 >= kappa}, kappa = log(12 (1 + e)),
never converges in direction to the GMM. Every step is exact (rational KKT systems) or a sympy
identity in the free variables p_1, p_2; nothing is sampled.
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import residuals

STATEMENT = ("hand instance (n = 2, T = 2, Assumption B, (ATT-SVM) for opt feasible, logistic loss): the GMM is (1, "
             "-3), (1, 0) is a locally optimal LMM, and GD with any step eta > 0 from R = {p_1 >= 0, p_1 + p_2 >= "
             "log(12(1+e))} (e.g. p_0 = (5, 0)) never converges in direction to the GMM")

X = [sp.Matrix([[1, 0], [0, 0]]), sp.Matrix([[0, 0], [2, 1]])]
Y = [1, 1]
V = sp.Matrix([1, -3])
KAPPA = sp.log(12 * (1 + sp.E))


def scores() -> list[sp.Matrix]:
    return [Y[i] * X[i] * V for i in range(2)]


def kkt(rows: list[sp.Matrix], active: list[int]) -> tuple[sp.Matrix, list, list]:
    """Exact KKT point of min ||p|| s.t. A p >= 1 with the given active rows: (p, duals, values)."""
    A = sp.Matrix.vstack(*[r.T for r in rows])
    AS = A.extract(active, [0, 1])
    mu = (AS * AS.T).LUsolve(sp.ones(len(active), 1))
    p = AS.T * mu
    duals = [0] * len(rows)
    for k, j in enumerate(active):
        duals[j] = mu[k]
    return p, duals, list(A * p)


def _kkt_ok(p, duals, values) -> bool:
    """Stationarity holds by construction (p = A_S^T mu); dual feasibility, primal feasibility and
    complementary slackness decided exactly: for a convex QP these make p the unique optimum."""
    slack = all(m == 0 or v == 1 for m, v in zip(duals, values))
    return all(m >= 0 for m in duals) and all(v >= 1 for v in values) and slack


def _rows(alpha: list[int]) -> list[sp.Matrix]:
    """One (ATT-SVM) row per input (T = 2): k_{alpha_i} - k_{other} with keys k = W^T x = x."""
    return [X[i].row(alpha[i]).T - X[i].row(1 - alpha[i]).T for i in range(2)]


def gmm() -> dict:
    g = scores()
    opt = [int(bool(g[i][1] > g[i][0])) for i in range(2)]
    p, duals, values = kkt(_rows(opt), [0, 1])
    return residuals(opt_is_first_token=opt == [0, 0], gmm=p - sp.Matrix([1, -3]),
                     kkt_optimal=_kkt_ok(p, duals, values), duals=duals == [7, 3])


def lmm() -> dict:
    """alpha = (opt, other): p_mm = (1, 0) with duals (1, 0); input 2's constraint has value 2 > 1 (no SVM-neighbour)
    and input 1's neighbour (its other token) scores 0 < 1: locally optimal (Definition 2)."""
    g = scores()
    p, duals, values = kkt(_rows([0, 1]), [0])
    neighbours_lower = all(g[i][1 - a] < g[i][a] for i, a in enumerate([0, 1]) if values[i] == 1)
    return residuals(lmm=p - sp.Matrix([1, 0]), kkt_optimal=_kkt_ok(p, duals, values), input2_inactive=values[1] == 2,
                     neighbours_score_lower=neighbours_lower)


def gradient_residuals() -> dict:
    """-dL/dp_1 = (c_1 - 2 c_2)/2 and -(dL/dp_1 + dL/dp_2) = (c_1 - 3 c_2)/2, c_i = |loss'(f_i)| sig(w_i) sig(-w_i),
    w_1 = p_1, w_2 = 2 p_1 + p_2 (score gaps 1), for every p (exponentials as positive symbols)."""
    p1, p2 = sp.symbols("p1 p2", real=True)
    sig = lambda x: 1 / (1 + sp.exp(-x))
    loss = lambda x: sp.log(1 + sp.exp(-x))
    dloss = lambda x: -sig(-x)
    w2 = 2 * p1 + p2
    f1, f2 = sig(p1), -sig(w2)                                          # margins <s_i, gamma_i>
    L = (loss(f1) + loss(f2)) / 2
    c1 = -dloss(f1) * sig(p1) * sig(-p1)
    c2 = -dloss(f2) * sig(w2) * sig(-w2)
    E1, E2 = sp.symbols("E1 E2", positive=True)

    def reduce(r):
        r = r.subs({p2: sp.log(E2) - 2 * p1}).subs({p1: sp.log(E1)})
        return sp.simplify(sp.cancel(sp.together(sp.expand(r))))

    return residuals(d_p1=reduce(-sp.diff(L, p1) - (c1 - 2 * c2) / 2),
                     d_p1_plus_p2=reduce(-sp.diff(L, p1) - sp.diff(L, p2) - (c1 - 3 * c2) / 2))


def ratio_bound() -> dict:
    """With E = e^w: sig(w) sig(-w) = E/(1 + E)^2 <= 1/E always and >= 1/(4E) for E >= 1 (w >= 0); |loss'(f)| =
    sig(-f) is decreasing in f (derivative < 0), so |loss'(f_1)| >= sig(-1) = 1/(1 + e) for f_1 in [0, 1], and
    |loss'(f_2)| <= 1. In R (w_1 = p_1 >= 0): c_2/c_1 <= e^{-w_2} / (e^{-w_1}/(4 (1 + e))) = 4 (1 + e) e^{-(p_1 + p_2)}
    <= 4 (1 + e) e^{-kappa} = 1/3."""
    E, x, f = sp.Symbol("E", positive=True), sp.Symbol("x", nonnegative=True), sp.Symbol("f", real=True)
    sigsig = E / (1 + E) ** 2
    upper = sp.factor(sp.together(1 / E - sigsig))
    lower = sp.factor(sp.together((sigsig - 1 / (4 * E)).subs(E, 1 + x)))
    dsig = sp.diff(1 / (1 + sp.exp(f)), f)                              # d/df sig(-f)
    p1, p2 = sp.symbols("p1 p2", real=True)
    exponent = sp.expand(-(2 * p1 + p2) + p1)                           # e^{-w_2} / e^{-w_1}
    return residuals(upper=bool(upper.is_nonnegative), lower=bool(lower.is_nonnegative),
                     loss_slope_negative=bool(dsig.is_negative), sig_minus_1=1 / (1 + sp.exp(1)) - 1 / (1 + sp.E),
                     exponent=exponent + (p1 + p2),
                     kappa=sp.simplify(4 * (1 + sp.E) * sp.exp(-KAPPA) - sp.Rational(1, 3)))


def invariance() -> dict:
    """c_1 > 0 and 0 < c_2 <= c_1/3 (c_2 = c_1/3 - e, e >= 0): c_1 - 2 c_2 > 0 and c_1 - 3 c_2 >= 0, so each GD step
    (any eta > 0) raises p_1 and does not lower p_1 + p_2: R is invariant."""
    c1, e = sp.Symbol("c1", positive=True), sp.Symbol("e", nonnegative=True)
    c2 = c1 / 3 - e
    return residuals(p1_rises=bool(sp.expand(c1 - 2 * c2).is_positive),
                     sum_does_not_fall=bool(sp.expand(c1 - 3 * c2).is_nonnegative))


def not_the_gmm() -> dict:
    """Every p in R has <p, (1, 1)> >= kappa > 0, the GMM direction has <(1, -3)/sqrt(10), (1, 1)> = -2/sqrt(10) < 0:
    a limit of p_t/||p_t|| has <., (1, 1)> >= 0, so it is not the GMM's. R is not empty: (5, 0), kappa < 5."""
    g = sp.Matrix([1, -3]) / sp.sqrt(10)
    return residuals(gmm_side=(g.T * sp.Matrix([1, 1]))[0] + 2 / sp.sqrt(10), kappa_positive=bool(KAPPA.is_positive),
                     start_in_R=bool(sp.exp(5) > 12 * (1 + sp.E)))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("the GMM: opt = (1, 1) (first tokens) and p_mm(opt) = (1, -3) with duals (7, 3), an exact KKT point",
             "exact", gmm, by=("definition1",)),
        Step("the LMM: alpha = (opt, other) has p_mm = (1, 0) with duals (1, 0); input 2's selected token has no "
             "SVM-neighbour (value 2 > 1), input 1's neighbour scores lower: locally optimal", "exact", lmm,
             by=("definition2",)),
        Step("exact gradient: -dL/dp_1 = (c_1 - 2 c_2)/2, -(dL/dp_1 + dL/dp_2) = (c_1 - 3 c_2)/2 for every p",
             "symbolic", gradient_residuals),
        Step("in R: c_2/c_1 <= 4 (1 + e) e^{-(p_1 + p_2)} <= 1/3", "exact", ratio_bound),
        Step("R is invariant under GD with any step eta > 0", "exact", invariance),
        Step("on R, p_1 + p_2 >= kappa > 0, while the GMM direction has negative (1, 1)-component: GD from R (e.g. "
             "p_0 = (5, 0)) does not converge in direction to the GMM, though n = 2 and B holds", "exact", not_the_gmm,
             by=("theorem2", "assumption-B")),
    ))
