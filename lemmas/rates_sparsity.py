"""Implicit bias and fast rates (
docs/statements.md#rates-sparsity), attention sparsification: under normalized GD and the Polyak
step the softmax mass off the optimal tokens decays exponentially in t,
mean_i (1 - s_i,opt(W_t)) <= C exp(-c t), c_NGD = eta/(Z ||W_mm||^2), c_Polyak = rho_0/(Z^2 ||W_mm||^2)
(OUR reconstruction of the law; paper C's expressions are not in papers/).

sympy checks (symbolic T and d): 1 - s_opt = s_opt sum_{t != opt} exp(-(a_opt - a_t)) <= (T-1) exp(-min gap);
the logit gap along the run, z . W = ||W|| (z . u - z . (u - U)) with ||u - U||^2 = 2 (1 - corr) for unit
u, U (so it is at least ||W|| (1/||W_mm|| - Z sqrt(2 (1 - corr)))); and the limit of the resulting rate
when 1 - corr -> 0 and ||W_t|| grows like ell t/(Z ||W_mm||) (rates-ngd, rates-polyak). Directional
convergence (the open step of rates-ngd) is cited; the rate is checked numerically.
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.rate_identities import linear_growth, progress_per_step
from attnsvm.claims.symbolic import d, j, o, residuals, softmax, t, total

STATEMENT = ("in the covered settings (rates-global), mean_i (1 - s_i,opt(W_t)) <= C exp(-c t) under NGD "
             "(c = eta/(Z ||W_mm||^2)) and Polyak (c = rho_0/(Z^2 ||W_mm||^2))")
RECONSTRUCTION = ("the exponential law and its constants are our reconstruction from the per-step progress bound "
                  "(lemmas/rates_ngd.py, lemmas/rates_polyak.py); paper C's expressions are not in papers/")


def off_mass_identity() -> dict:
    """s_opt sum_t exp(a_t - a_opt) = 1 (symbolic T), i.e. 1 - s_opt = s_opt sum_{t != opt} exp(-(a_opt - a_t)) and each
    term is at most exp(-min gap) (s_opt <= 1)."""
    a = sp.IndexedBase("a", real=True)
    s, _ = softmax(a)
    lhs = s(o) * total(sp.exp(a[t]) * sp.exp(-a[o]))
    return residuals(normalisation=sp.simplify(lhs - 1))


def unit_distance() -> dict:
    """||u - U||^2 = 2 - 2 <u, U> for unit vectors (symbolic d)."""
    u, U = sp.IndexedBase("u", real=True), sp.IndexedBase("U", real=True)
    sq = total((u[j] - U[j]) ** 2, j, d)
    one_u, one_U = sp.Sum(u[j] ** 2, (j, 1, d)), sp.Sum(U[j] ** 2, (j, 1, d))
    return residuals(distance=sp.expand(sq.subs({one_u: 1, one_U: 1}) - (2 - 2 * total(u[j] * U[j], j, d))))


def rate_limit() -> dict:
    """log off-mass slope: -(ell t/(Z m)) (1/m - Z sqrt(2 g)) / t -> -ell/(Z m^2) as g -> 0 (m = ||W_mm||)."""
    ell, Z, m, g, tt = sp.symbols("ell Z m g t", positive=True)
    rate = (ell * tt / (Z * m)) * (1 / m - Z * sp.sqrt(2 * g)) / tt
    return residuals(limit=sp.limit(rate, g, 0) - ell / (Z * m ** 2))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("1 - s_opt = s_opt sum_{t != opt} exp(-(a_opt - a_t)) <= (T-1) exp(-min_t (a_opt - a_t)) (symbolic T)",
             "symbolic", off_mass_identity),
        Step("every step gains at least ell/Z along W_mm/||W_mm|| (ell = eta for NGD, >= rho_0/Z for Polyak), so "
             "<W_t, W_mm>/||W_mm|| grows linearly (rates-ngd, rates-polyak; symbolic)", "symbolic", progress_per_step,
             by=("rates-ngd", "rates-polyak")),
        Step("the gains telescope (symbolic t)", "symbolic", linear_growth),
        Step("z . W = ||W|| (z . u - z . (u - U)), ||u - U||^2 = 2 (1 - corr) for unit u, U (symbolic d): the logit "
             "gap "
             "of an active token is >= ||W|| (1/||W_mm|| - Z sqrt(2 (1 - corr)))", "symbolic", unit_distance),
        Step("directional convergence 1 - corr(W_t, W_mm) -> 0 (rates-ngd, rates-polyak; their open step)", "cited",
             reference="lemmas/rates_ngd.py step 5, checks/rates_ngd.py, checks/rates_polyak.py",
             by=("rates-ngd", "rates-polyak")),
        Step("hence the rate of log(1 - s_opt) tends to at least ell/(Z ||W_mm||^2) (limit, sympy)", "symbolic",
             rate_limit),
        Step("the fitted decay rate of log mean_i (1 - s_i,opt) is at least 0.9 x the law's, for NGD and Polyak",
             "numeric", reference="checks/rates_sparsity.py (log-domain off-mass, rate fitted over [H/8, H])",
             by=("rates-global",)),
    ), RECONSTRUCTION)
