"""Theorem 1 (docs/statements.md#theorem1; proof in Appendix B.2 as a corollary of Lemma 14 and Theorem 8, whose proof
is Appendix D.1): the regularization path p(R) = argmin_{||p|| <= R} L(p) converges in direction
to the GMM p_mm = p_mm(opt) under Assumption A and strict optimality.

The proof compares the non-optimal softmax mass q_i = 1 - s_{i,opt} of p(R) with that of the
competitor R p_mm/||p_mm|| (norm R, inside the ball): a direction delta away from p_mm's
violates an (ATT-SVM) constraint by a factor 1 - eps, so it keeps exponentially more mass, and
Lemma 14 (Assumption D for the linear head) turns mass into risk. sympy checks the identities
and the closing limit for a symbolic T and d; Lemma 14's mean-value bounds are cited.
"""

import sympy as sp

from attnsvm.claims.identities import ratio_residual, softmax_ratio  # noqa: F401 (theorem4, theorem8)
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import T, d, j, o, residuals, t, total

STATEMENT = ("Assumption A, gamma_{i,opt_i} > gamma_it for t != opt_i, (ATT-SVM) for opt feasible => "
             "p(R)/R -> p_mm/||p_mm|| as R -> oo, p(R) = argmin_{||p|| <= R} L(p)")
RECONSTRUCTION = "Lemma 14 needs -loss' bounded below by a positive constant on the margin interval (loss' < 0, see lemma4)"

T1 = sp.Symbol("T_minus_1", integer=True, positive=True)          # the T - 1 >= 1 non-optimal tokens


def margin_identity() -> dict:
    """<s, gamma> = gamma_opt - sum_t s_t (gamma_opt - gamma_t) with sum_t s_t = 1, every T."""
    s, g = sp.IndexedBase("s", positive=True), sp.IndexedBase("gamma", real=True)
    res = total(s[t] * g[t]) - (g[o] - total(s[t] * (g[o] - g[t])))
    return residuals(identity=res.subs(sp.Sum(s[t], (t, 1, T)), 1))


def deficit_bounds() -> dict:
    """Non-optimal tokens t = 1..T-1 with gaps Gmin + e_t = Gmax - e'_t (e, e' >= 0) and mass q = sum_t s_t:
    Gmin q <= sum_t s_t gap_t <= Gmax q, the differences being sums of nonnegative terms."""
    s = sp.IndexedBase("s", positive=True)
    e, e2 = sp.IndexedBase("e", nonnegative=True), sp.IndexedBase("e2", nonnegative=True)
    Gmin, Gmax = sp.symbols("Gamma_min Gamma_max", positive=True)
    q = total(s[t], t, T1)
    low = total(s[t] * (Gmin + e[t]), t, T1) - Gmin * q
    high = Gmax * q - total(s[t] * (Gmax - e2[t]), t, T1)
    return residuals(lower_gap=low - total(s[t] * e[t], t, T1), upper_gap=high - total(s[t] * e2[t], t, T1),
                     lower_nonnegative=bool(low.is_nonnegative), upper_nonnegative=bool(high.is_nonnegative))


def mass_bounds() -> dict:
    """(a) s_t <= s_t / s_opt = exp(-(a_opt - a_t)) (s_opt = 1/(1 + w) <= 1), so along R p_mm/||p_mm||, where every
    a_opt - a_t >= R/||p_mm||, q <= (T - 1) exp(-R/||p_mm||); (b) s_t >= exp(a_t - a_max)/T, since
    T exp(a_max) - Z = sum_t (exp(a_max) - exp(a_t)) >= 0 (exp(a_t) = exp(a_max)/(1 + y_t), y_t >= 0), so a direction
    with a_opt - a_t <= (1 - eps) R/||p_mm|| keeps q >= exp(-(1 - eps) R/||p_mm||)/T (if a_max is not a_opt,
    q >= s_max >= 1/T, larger still)."""
    x, w = sp.Symbol("x", real=True), sp.Symbol("w", nonnegative=True)
    above = sp.exp(-x) - sp.exp(-x) / (1 + w)                          # exp(-(a_opt - a_t)) - s_t
    y, Emax = sp.IndexedBase("y", nonnegative=True), sp.Symbol("E_max", positive=True)
    term = Emax - Emax / (1 + y[t])                                    # exp(a_max) - exp(a_t)
    return residuals(upper_nonnegative=bool(sp.factor(sp.together(above)).is_nonnegative),
                     partition_slack=total(term) - (T * Emax - total(Emax / (1 + y[t]))),
                     slack_term=sp.together(term) - Emax * y[t] / (1 + y[t]),
                     partition_nonnegative=bool(total(Emax * y[t] / (1 + y[t])).is_nonnegative))


def _inner(x, y):
    return total(x[j] * y[j], j, d)


def direction_violates() -> dict:
    """If ||p/R - p_mm/m|| >= delta (m = ||p_mm||, ||p|| <= R), p violates some constraint: value < (1 - eps) R/m for
    eps < delta^2/2. (i) the feasible set is convex (a segment between feasible points is feasible); (ii)
    ||p_mm + tau (x - p_mm)||^2 - m^2 = 2 tau <p_mm, x - p_mm> + tau^2 ||x - p_mm||^2, which is < 0 for small tau > 0
    when <p_mm, x - p_mm> = -beta < 0: so p_mm minimal forces <p_mm, x> >= m^2 for every feasible x; (iii) if all
    values of p = rho R u are >= (1 - eps) R/m, x = p m/((1 - eps) R) is feasible, so rho <u, p_mm/m> >= 1 - eps and
    ||rho u - p_mm/m||^2 = rho^2 - 2 rho <u, p_mm/m> + 1 <= 2 eps (rho <= 1) (symbolic d)."""
    e1, e2, y = sp.symbols("e1 e2 y", nonnegative=True)
    tau = y / (1 + y)                                                  # any tau in [0, 1)
    segment = (1 - tau) * (1 + e1) + tau * (1 + e2) - 1
    p, x, uu, ph = (sp.IndexedBase(n, real=True) for n in ("p", "x", "u", "phat"))
    tt = sp.Symbol("tau", real=True)
    norm2 = lambda z: total(z ** 2, j, d)
    quad = (norm2(p[j] + tt * (x[j] - p[j])) - norm2(p[j])
            - (2 * tt * (_inner(p, x) - norm2(p[j])) + tt ** 2 * norm2(x[j] - p[j])))
    beta, D, c = sp.symbols("beta D c", positive=True)
    small_tau = 2 * (beta / D) * (-beta) + (beta / D) ** 2 * D         # tau = beta/D <= 1: -beta^2/D
    unit = 2 * (-beta) + (beta - c)                                    # tau = 1 when D = beta - c < beta
    z, b, eps = sp.Symbol("z", nonnegative=True), sp.Symbol("b", nonnegative=True), sp.Symbol("eps", positive=True)
    rho = 1 / (1 + z)                                                  # any rho in (0, 1]
    gap = 2 * eps - (rho ** 2 - 2 * (1 - eps + b) + 1)                 # rho <u, p_hat> = 1 - eps + b
    unit_norm = (norm2(uu[j] - ph[j]) - (2 - 2 * _inner(uu, ph))).subs(
        {sp.Sum(uu[j] ** 2, (j, 1, d)): 1, sp.Sum(ph[j] ** 2, (j, 1, d)): 1})
    return residuals(segment_nonnegative=bool(sp.factor(sp.together(segment)).is_nonnegative),
                     segment_quadratic=sp.expand(quad), small_step_decreases=bool(small_tau.is_negative),
                     unit_step_decreases=bool(unit.is_negative), unit_vectors=unit_norm,
                     direction_bound=bool(sp.factor(sp.together(gap)).is_nonnegative))


def closing_limit() -> dict:
    """[(c_lo/n) exp(-(1 - eps) R/m)/T] / [c_hi (T - 1) exp(-R/m)] -> oo as R -> oo: the path's risk excess exceeds
    the competitor's for large R (all constants positive)."""
    R, m, eps, clo, chi, n = sp.symbols("R m epsilon c_lo c_hi n", positive=True)
    ratio = (clo / n * sp.exp(-(1 - eps) * R / m) / (T1 + 1)) / (chi * T1 * sp.exp(-R / m))
    return residuals(limit_is_infinite=sp.limit(sp.simplify(ratio), R, sp.oo) == sp.oo)


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("margin identity: Y_i f_i = <s_i, gamma_i> = gamma_opt - sum_t s_t (gamma_opt - gamma_t) (symbolic T)",
             "symbolic", margin_identity, by=("definition1",)),
        Step("with Gamma_min = min gap > 0 (strict optimality), Gamma_max = max gap: Gamma_min q_i <= gamma_opt - "
             "Y_i f_i <= Gamma_max q_i, q_i = 1 - s_{i,opt} (symbolic T)", "symbolic", deficit_bounds),
        Step("Lemma 14: the linear head meets Assumption D: by the mean value theorem with -loss' in [c, M1], c > 0, on "
             "the margin interval, c Gamma_min q_i <= loss(Y_i f_i) - loss(gamma_opt) <= M1 Gamma_max q_i", "cited",
             reference="Appendix D.2, Lemma 14 (Taylor's theorem with integral remainder); Appendix B.2",
             by=("lemma14", "assumption-A", "assumption-D")),
        Step("softmax ratio: s_t = s_opt exp(-(a_opt - a_t)) (symbolic T)", "symbolic", softmax_ratio),
        Step("mass bounds (D.1): along R p_mm/||p_mm|| every q_i <= (T - 1) exp(-R/||p_mm||); a p violating a constraint "
             "of input i by a factor 1 - eps keeps q_i >= exp(-(1 - eps) R/||p_mm||)/T (symbolic T)", "symbolic",
             mass_bounds, by=("theorem8",)),
        Step("a p with ||p|| <= R and ||p/R - p_mm/||p_mm|| || >= delta violates a constraint by the factor 1 - eps, "
             "eps < delta^2/2: p_mm is the least-norm point of a convex set, so <p_mm, x> >= ||p_mm||^2 for feasible x "
             "(symbolic d)", "symbolic", direction_violates),
        Step("closing: by steps 3, 5, 6, L(p) - L_* >= (c/n) exp(-(1 - eps) R/||p_mm||)/T exceeds L(R p_mm/||p_mm||) - L_* "
             "<= M1 Gamma_max (T - 1) exp(-R/||p_mm||) for large R (limit of the ratio = oo), so p(R) stays within delta "
             "of the direction for large R, for every delta", "symbolic", closing_limit, by=("theorem8",)),
    ), RECONSTRUCTION)
