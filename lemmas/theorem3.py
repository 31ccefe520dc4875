"""Theorem 3 (
docs/statements.md#theorem3; proof in Appendix B.4): GD from a cone C_{mu,R_mu}(p_mm) around an LMM direction
p_mm = p_mm(alpha) converges to it in direction.

The proof rests on Lemma 7 (L1: no stationary point in the cone; L2: -grad L correlates
positively with p_mm; L3: for large norms -grad L is nearly as aligned with p_mm as with p),
keeps the iterates in the cone (Step 3, (54)-(58)), lets the norm diverge (Step 4, Lemma 6) and
telescopes as in Theorem 2's (51)-(52). sympy checks the one-step algebra and the telescoping
for a symbolic d; Lemma 7 and the cone invariance are supported numerically by
checks/theorem3.py (which measures the convergence itself with GD from cone starts, its step
from the empirical Lipschitz ratio there, and reports Lemma 7's premises on every rung), the
divergence of the norm is cited.
"""

import sympy as sp

from attnsvm.claims.identities import norm_step, telescoping
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import d, j, residuals, total

STATEMENT = ("Assumption A, alpha locally optimal, p_mm = p_mm(alpha): there are mu in (0, 1) and R_mu such that GD "
             "with eta <= 1/L_p from any p_0 in C_{mu,R_mu}(p_mm) has ||p_t|| -> oo and p_t/||p_t|| -> p_mm/||p_mm||")

RECONSTRUCTION = "Assumption A is used as -loss' >= c > 0 on bounded intervals (Lemma 7's constants; see lemma4)"
CHECK = "checks/theorem3.py"


def one_step() -> dict:
    """With g = grad L(p), q a unit vector, A = <-g, q>, B = <-g, p/||p||> (symbolic d):
    <p - eta g, q> = <p, q> + eta A, ||p - eta g||^2 = ||p||^2 + 2 eta B ||p|| + eta^2 ||g||^2, and to first order
    d/d eta corr(p - eta g, q) at 0 = (A - B corr(p, q))/||p||."""
    p, g, q = (sp.IndexedBase(x, real=True) for x in ("p", "g", "q"))
    eta = sp.Symbol("eta", real=True)
    inner = lambda x, y: total(x * y, j, d)
    along = inner(p[j] - eta * g[j], q[j]) - (inner(p[j], q[j]) - eta * inner(g[j], q[j]))
    norm2 = inner(p[j] - eta * g[j], p[j] - eta * g[j]) - (inner(p[j], p[j]) - 2 * eta * inner(g[j], p[j])
                                                          + eta ** 2 * inner(g[j], g[j]))
    P, G = sp.symbols("P G", positive=True)                              # ||p||, ||g||
    pq, A, B = sp.symbols("pq A B", real=True)                           # <p, q>, <-g, q>, <-g, p>/||p||
    corr = (pq + eta * A) / sp.sqrt(P ** 2 + 2 * eta * B * P + eta ** 2 * G ** 2)
    first = sp.simplify(sp.diff(corr, eta).subs(eta, 0) - (A - B * pq / P) / P)
    return residuals(along_q=along, norm_squared=norm2, first_order=first)


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("Lemma 7 (L1, L2): for small mu and large R there is no stationary point in C_{mu,R}(p_mm) and "
             "<-grad L(p), p_mm> > 0 there", "numeric",
             reference=f"{CHECK} (`lemma7` on every rung: sign of <-grad L, p_mm> from the log-domain gradient at "
                       "seeded cone points, norms R..8R); "
                       "proof: Appendix B.1, Lemma 7", by=("lemma7", "definition2", "assumption-A")),
        Step("Lemma 7 (L3): for every pi > 0 there is R_pi with <grad L(p), p/||p||> >= (1 + pi) <grad L(p), "
             "p_mm/||p_mm||> in C_{mu,R_pi}", "numeric",
             reference=f"{CHECK} (rho(p) <= 1 + PI_TOL at seeded cone points of norm 8R); proof: Appendix B.1, Lemma 7",
             by=("lemma7",)),
        Step("one GD step (54a)-(54c): <p_{t+1}, q> = <p_t, q> + eta A_t, ||p_{t+1}||^2 = ||p_t||^2 + 2 eta B_t "
             "||p_t|| + eta^2 ||g_t||^2; to first order corr moves by eta (A - B corr)/||p|| (symbolic d)", "symbolic",
             one_step),
        Step("cone invariance (Step 3): with eta <= 1/L_p and R_mu large, GD from C_{mu,R_mu} never leaves "
             "C_{mu,R} and its norm grows", "numeric",
             reference=f"{CHECK} (the conclusion itself is measured: GD at eta = 1/L_emp, the empirical Lipschitz "
                       "ratio in the cone, from seeded starts in the cone "
                       "converges, by the finite-horizon proxy of attnsvm.dynamics.limits, to p_mm(alpha) with alpha "
                       "selected; 1 - corr at start and horizon reported); proof: Appendix B.4, Step 3, (54)-(58)",
             by=("lemma6", "lemma7")),
        Step("||p_t|| -> oo: no stationary point in the cone (L1) and sum_t ||grad L(p_t)||^2 < oo (Lemma 6)", "cited",
             reference="Appendix B.4, Step 4", by=("lemma6", "lemma7")),
        Step("as (51): <delta, p_mm/||p_mm||> >= (1/(1 + pi)) (||p_{t+1}|| - ||p_t|| - ||delta||^2/(2||p_t||)) by L3 "
             "and the norm-step inequality (symbolic d)", "symbolic", norm_step),
        Step("as (52): telescoping gives liminf corr(p_t, p_mm) >= 1/(1 + pi); pi -> 0 as R grows (L3), so "
             "corr -> 1", "symbolic", telescoping, by=("lemma6", "lemma7")),
    ), RECONSTRUCTION)
