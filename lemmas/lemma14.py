"""Lemma 14 (core paper, Appendix D.2, linear label mixing): if the head mixes labels linearly,
gamma*_i - C q_i <= Y_i f(X_i) <= gamma*_i - c q_i with 0 < c <= C (85), and -loss' lies in
[m, M], m > 0, on the margin interval, then Assumption D holds with the sets O_i.

The proof (Taylor with integral remainder): L(p) - L_* >= (m c/n) q_max^p (the worst input alone,
every other term >= 0), L(p') - L_* <= M C q_max^{p'}, and with q' <= Q_mu and q' <= q^{1+mu} the
second is below the first. sympy checks the two sums and the closing inequality for symbolic n,
mu and constants, with our reconstruction Q_mu = (1/2)(m c/(n M C))^{(1+mu)/mu} (the paper's
constants are lost in the extraction), and (85) itself for the linear head with tied optimal
sets (margin identity and gap bounds, symbolic T, as in Theorem 1). The mean-value bounds
m x <= loss(g - x) - loss(g) <= M x are the paper's Taylor step (cited)."""

import sympy as sp

from attnsvm.claims.identities import deficit_bounds, margin_identity
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import residuals, total

STATEMENT = ("(85) gamma*_i - C q_i <= Y_i f_p(X_i) <= gamma*_i - c q_i (0 < c <= C), -loss' in [m, M], m > 0, on the "
             "margin interval => Assumption D with the sets O_i, Q_mu = (1/2)(m c/(n M C))^{(1+mu)/mu}")
RECONSTRUCTION = ("statement and constants reconstructed from the proof (formulas lost): (85) as two-sided linear "
                  "bounds in q_i, Q_mu = (1/2)(m c/(n M C))^{(1+mu)/mu}; -loss' >= m > 0 is Assumption "
                  "A read as in NOTES.md")

n = sp.Symbol("n", integer=True, positive=True)
i = sp.Symbol("i", integer=True, positive=True)


def excess_sums() -> dict:
    """With e_i = loss(gamma*_i - x_i) - loss(gamma*_i) in [m c q_i, M C q_i] (e_i = m c q_i + l_i = M C q_i - h_i,
    l, h >= 0) and q_i <= q_max = q_1 + 0 (input 1 the worst, w.l.o.g.): mean_i e_i - (m c/n) q_1 =
    (1/n) [l_1 + sum_{i>=2} e_i] >= 0 and M C q_max - mean_i e_i = (1/n) sum_i (M C (q_max - q_i) + h_i) >= 0
    (symbolic n)."""
    m, c, M, C = sp.symbols("m c M C", positive=True)
    q, l, h, slack = (sp.IndexedBase(s, nonnegative=True) for s in ("q", "l", "h", "z"))
    e_low = m * c * q[i] + l[i]                                    # e_i from its lower bound
    e_high = M * C * q[i] - h[i]                                   # e_i from its upper bound
    qmax = sp.Symbol("q_max", positive=True)
    # lower: the worst input alone; the others' terms are >= m c q_i >= 0
    k = sp.Symbol("n_rest", integer=True, positive=True)            # n = 1 + n_rest (n = 1: no other term)
    worst = (m * c * qmax + l[1]) / (1 + k)
    rest = total(e_low, i, k) / (1 + k)                              # the other inputs, relabelled
    lower_gap = sp.expand(worst + rest - m * c * qmax / (1 + k))
    # upper: q_i = q_max - z_i, z_i >= 0
    upper_gap = sp.expand(M * C * qmax - total(e_high.subs(q[i], qmax - slack[i]), i, n) / n)
    upper_form = total(M * C * slack[i] + h[i], i, n) / n
    return residuals(lower_nonnegative=bool(lower_gap.is_nonnegative),
                     upper_identity=sp.simplify(upper_gap - sp.expand(upper_form)),
                     upper_nonnegative=bool(sp.expand(upper_form).is_nonnegative))


def closing() -> dict:
    """q' <= Q_mu = (1/2) a^{(1+mu)/mu}, a = m c/(n M C), gives q'^{mu/(1+mu)} <= a 2^{-mu/(1+mu)} < a, so with
    q' <= q^{1+mu} (q >= q'^{1/(1+mu)}): M C q' = M C q'^{mu/(1+mu)} q'^{1/(1+mu)} < M C a q = (m c/n) q (symbolic
    mu, constants)."""
    m, c, M, C, mu, a = sp.symbols("m c M C mu a", positive=True)
    Q = a ** ((1 + mu) / mu) / 2
    power = sp.powsimp(sp.expand_power_base(Q ** (mu / (1 + mu)), force=True), force=True)
    factor = sp.simplify(power / a)                                # 2^{-mu/(1+mu)}
    qp = sp.Symbol("qp", positive=True)
    split = sp.simplify(qp ** (mu / (1 + mu)) * qp ** (1 / (1 + mu)) - qp)
    return residuals(threshold_power=sp.simplify(factor - 2 ** (-mu / (1 + mu))),
                     factor_below_one=bool(sp.expand_log(sp.log(2 ** (-mu / (1 + mu))), force=True).is_negative),
                     split_identity=split,
                     constants=sp.simplify(M * C * (m * c / (n * M * C)) - m * c / n))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("(85) for the linear head with tied optimal sets: Y_i f = gamma* - sum_{t not in O_i} s_t (gamma* - "
             "gamma_t) (tokens of O_i have gap 0; symbolic T)", "symbolic", margin_identity, by=("definition1",)),
        Step("(85)'s constants: Gamma_min q_i <= sum_t s_t gap_t <= Gamma_max q_i over the tokens outside O_i (c = "
             "Gamma_min > 0 when O_i is the top-score set; symbolic count)", "symbolic", deficit_bounds),
        Step("Taylor with integral remainder: m x <= loss(g - x) - loss(g) <= M x for x >= 0 when -loss' in [m, M] on "
             "[g - x, g] (for h = phi(v^T x), phi' bounds enter m and M)", "cited",
             reference="Appendix D.2, proof of Lemma 14", by=("assumption-A",)),
        Step("L(p) - L_* >= (m c/n) q_max^p and L(p') - L_* <= M C q_max^{p'} (symbolic n)", "symbolic", excess_sums),
        Step("q' <= Q_mu and q' <= q^{1+mu} => M C q' < (m c/n) q, hence L(p') < L(p): Assumption D (symbolic mu)",
             "symbolic", closing, by=("assumption-D",)),
    ), RECONSTRUCTION)
