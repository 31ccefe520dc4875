"""Lemma 4 (docs/statements.md#lemma4; proof in Appendix B.1, (17)-(22)): under Assumptions A and B, p_mm = p_mm(opt)
is a global descent direction, <grad L(p), p_mm> < 0 for every p.

Every step is checked by sympy for a symbolic number of tokens T and inputs n (sums over
t = 1..T, i = 1..n): the gradient correlation as a softmax covariance, the covariance under
Assumption B, its sign from the (ATT-SVM) constraints, and the sign of loss'.
"""

import sympy as sp

from attnsvm.claims.identities import covariance_under_B, descent_sign, gradient_covariance
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import residuals

STATEMENT = "Assumptions A and B, p_mm = p_mm(opt) (the GMM) exists => <grad L(p), p_mm> < 0 for every p"
RECONSTRUCTION = ("Assumption A(1) is used as loss' < 0 on bounded intervals: 'strictly decreasing' alone allows "
                  "loss' = 0 at a point, e.g. loss(x) = (1 - x)^3, and then the lemma fails (NOTES.md)")


def mean_sign() -> dict:
    """loss'_i = -m_i < 0 and Cov_i > 0 for every i make (1/n) sum_i loss'_i Cov_i < 0, every n."""
    i, n = sp.symbols("i n", integer=True, positive=True)
    m, C = sp.IndexedBase("m", positive=True), sp.IndexedBase("C", positive=True)
    return residuals(mean_negative=bool((sp.Sum(-m[i] * C[i], (i, 1, n)) / n).is_negative))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("<grad L(p), q> = (1/n) sum_i loss'_i Cov_{s_i}(K_i q, gamma_i), s_i = S(K_i p): the softmax Jacobian "
             "gives d<s, gamma>/da_u = s_u (gamma_u - f), and a = K p is linear (symbolic T)", "symbolic",
             gradient_covariance),
        Step("under Assumption B (gamma = g0 1 + Delta e_opt): Cov_s(a, gamma) = Delta s_opt sum_{t != opt} s_t "
             "(a_opt - a_t) (symbolic T)", "symbolic", covariance_under_B, by=("assumption-B",)),
        Step("with a = K_i p_mm the (ATT-SVM) constraints give a_opt - a_t >= 1, so Cov >= Delta s_opt (1 - s_opt) > 0 "
             "(Delta > 0 by B, softmax weights positive, T >= 2)", "symbolic", descent_sign,
             by=("assumption-B", "definition1")),
        Step("loss'_i < 0 (Assumption A) and Cov_i > 0 for every input: the mean (1/n) sum_i loss'_i Cov_i is negative "
             "at every finite p (symbolic n)", "symbolic", mean_sign, by=("assumption-A",)),
    ), RECONSTRUCTION)
