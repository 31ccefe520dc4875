"""Lemma 5 (gradient correlation conditions; docs/statements.md#lemma5, proof in Appendix B.1 after Lemma 4): under
Assumptions A and B with n = 1 and p_mm the GMM, for every pi > 0 there is R_pi such that
||p|| >= R_pi implies <grad L(p), p/||p||> >= (1 + pi) <grad L(p), p_mm/||p_mm||>.

The formula is lost in our text of the paper; reconstructed from the proof (two scenarios, (23))
and from its use in Theorem 2's (51). Under B with one input the loss factor cancels from the
comparison: -grad L(p) = |loss'| Delta s_opt sum_t s_t z_t (z_t = k_opt - k_t), so the lemma compares
sum_t s_t z_t^T p^ with sum_t s_t z_t^T p_mm^. sympy checks that reduction and Scenario 1's ratio
bound for a symbolic T; Scenario 2 (a row below the margin dominates the softmax) and the choice
of R are supported numerically by checks/lemma5.py.
"""

import sympy as sp

from attnsvm.claims.identities import gradient_under_B
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import residuals, t, total

STATEMENT = ("Assumptions A and B, n = 1, p_mm = p_mm(opt): for every pi > 0 there is R_pi such that ||p|| >= R_pi "
             "implies <grad L(p), p/||p||> >= (1 + pi) <grad L(p), p_mm/||p_mm||>")
RECONSTRUCTION = ("the lemma's formula is lost in the text extraction; reconstructed from its proof ((23), two "
                  "scenarios) and its use in Theorem 2's (51); n = 1 as in Theorem 2(b) (the proof has no input index)")
CHECK = "checks/lemma5.py"


def scenario_one() -> dict:
    """Scenario 1: with x_t = z_t^T p_mm^ >= 1/||p_mm|| > 0 and |z_t^T (p^ - p_mm^)| = |e_t| <= kappa x_t
    (kappa = D eps ||p_mm|| for ||p^ - p_mm^|| <= eps), (1 + kappa) sum_t s_t x_t - sum_t s_t (x_t + e_t)
    = sum_t s_t (kappa x_t - e_t) >= 0: rho <= 1 + kappa (non-optimal tokens t = 1..T-1, symbolic T)."""
    T1 = sp.Symbol("T_minus_1", integer=True, positive=True)
    s, x = sp.IndexedBase("s", positive=True), sp.IndexedBase("x", positive=True)
    e, h = sp.IndexedBase("e", real=True), sp.IndexedBase("h", nonnegative=True)   # h_t = kappa x_t - e_t >= 0
    kappa = sp.Symbol("kappa", nonnegative=True)
    slack = (1 + kappa) * total(s[t] * x[t], t, T1) - total(s[t] * (x[t] + e[t]), t, T1)
    as_h = total(s[t] * h[t], t, T1)
    return residuals(slack=slack - total(s[t] * (kappa * x[t] - e[t]), t, T1),
                     slack_nonnegative=bool(as_h.is_nonnegative),
                     denominator_positive=bool(total(s[t] * x[t], t, T1).is_positive))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("n = 1 under B: -grad L(p) = |loss'| Delta s_opt sum_{t != opt} s_t z_t, z_t = k_opt - k_t, so both sides "
             "carry the same positive factor and the lemma compares sum_t s_t z_t^T p^ with sum_t s_t z_t^T p_mm^ "
             "(symbolic T; 'repeating the proof of Lemma 4')", "symbolic", gradient_under_B,
             by=("lemma4", "assumption-B", "assumption-A")),
        Step("Scenario 1, ||p^ - p_mm^|| <= eps: every z_t^T p^ is within D eps of z_t^T p_mm^ >= 1/||p_mm||, so the "
             "ratio is at most 1 + D eps ||p_mm|| (symbolic T)", "symbolic", scenario_one, by=("definition1",)),
        Step("Scenario 2, ||p^ - p_mm^|| > eps: some row has value <= (1 - nu)/||p_mm|| along p^ (p_mm is the "
             "max-margin direction); for ||p|| >= R(nu, pi) its softmax weight dominates the rows above 1/||p_mm|| "
             "along p^ and (23) follows", "numeric",
             reference=f"{CHECK} (rho <= 1 + pi at seeded points of norm R..16R, uniform and near p_mm); proof: "
                       "Appendix B.1, Lemma 5, Scenario 2"),
        Step("choosing eps = pi/(D ||p_mm||) and R_pi from Scenario 2 gives the lemma for every p with ||p|| >= R_pi",
             "cited", reference="Appendix B.1, Lemma 5 (end of proof)"),
    ), RECONSTRUCTION)
