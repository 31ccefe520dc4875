"""Theorem 8 (core paper, Appendix D, proof D.1): under Assumption D with optimal sets O_i and
(ATT-SVM') feasible, the regularization path p(R) = argmin_{||p|| <= R} L(p) of attention with a
nonlinear head converges to the solution set P^mm of (ATT-SVM'): dist(p(R)/R, P^mm/Xi) -> 0.

Proof (D.1): the baseline p*_R = R p*/Xi (p* in P^mm) has non-optimal mass q_max <= T e^{-R/Xi};
a p(R) that stays delta away from P^mm/Xi violates some (ATT-SVM') constraint by a factor
1 - eps, so it keeps q_max >= e^{-(1 - eps) R/Xi}/T (84); with mu = eps/2 both conditions of
Assumption D hold for large R, which makes L(p*_R) < L(p(R)): a contradiction. sympy checks
the mass bounds (reusing Theorem 1's, with the dominating token j in O_i in place of opt), the
exponent algebra of (84) -> Assumption D for a symbolic T, and the limit that makes the baseline's
mass fall below any Q_mu; the compactness step (a delta-far direction violates a constraint by
a uniform factor) and the final appeal to Assumption D are the paper's text (cited)."""

import sympy as sp

from attnsvm.claims.identities import mass_bounds, softmax_ratio
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import T, residuals, t, total

STATEMENT = ("Assumption D (sets O_i), (ATT-SVM') feasible => dist(p(R)/R, P^mm/Xi) -> 0 as R -> oo, "
             "p(R) = argmin_{||p|| <= R} L(p), P^mm the solution set of (ATT-SVM'), Xi its optimal norm")
RECONSTRUCTION = (
    "formulas lost in extraction, reconstructed from the proof: (ATT-SVM') min ||p|| s.t. max_{j in O_i} "
    "(k_ij - k_it)^T p >= 1 for t not in O_i; Assumption D: with q_i^p = sum_{t not in O_i} s_it(p), q^p = max_i "
    "q_i^p, for every mu > 0 there is Q_mu > 0 such that q^{p'} <= Q_mu and q^{p'} <= (q^p)^{1 + mu} imply L(p') < "
    "L(p); the choice mu = eps/2 in the closing step is ours (the paper's value is lost)")


def set_mass_union() -> dict:
    """Along R p*/Xi each of the M = T - |O_i| tokens outside O_i is dominated by some j in O_i by R/Xi + delta_t,
    delta_t >= 0, so s_t <= e^{-(R/Xi + delta_t)} and q_i <= sum_t e^{-R/Xi - delta_t} <= M e^{-R/Xi} <= T e^{-R/Xi}:
    the slack M e^{-R/Xi} - sum_t e^{-R/Xi - delta_t} = sum_t e^{-R/Xi} (1 - e^{-delta_t}) (symbolic M), each term
    nonnegative."""
    M = sp.Symbol("M", integer=True, positive=True)
    R, Xi = sp.symbols("R Xi", positive=True)
    delta = sp.IndexedBase("delta", nonnegative=True)
    w = sp.IndexedBase("w", nonnegative=True)                               # e^{-delta_t} = 1/(1 + w_t)
    bound = M * sp.exp(-R / Xi) - total(sp.exp(-R / Xi) / (1 + w[t]), t, M)
    slack = total(sp.exp(-R / Xi) * w[t] / (1 + w[t]), t, M)
    term = sp.exp(-R / Xi) * (1 - 1 / (1 + w[t]))
    return residuals(slack_identity=sp.simplify(bound - total(term, t, M)),
                     term_form=sp.simplify(term - sp.exp(-R / Xi) * w[t] / (1 + w[t])),
                     slack_nonnegative=bool(slack.is_nonnegative),
                     dominance_is_exp_delta=sp.simplify(sp.exp(-delta[t]) - 1 / (1 + (sp.exp(delta[t]) - 1))))


def exponent_condition() -> dict:
    """(84) -> Assumption D: with q* <= T e^{-R/Xi}, q >= e^{-(1 - eps) R/Xi}/T and mu = eps/2,
    log q* - (1 + mu) log q <= -R/Xi [1 - (1 + mu)(1 - eps)] + (2 + mu) log T, and
    1 - (1 + eps/2)(1 - eps) = eps/2 + eps^2/2 > 0, so q* <= q^{1 + mu} once R/Xi >= (2 + mu) log T/(eps/2 + eps^2/2);
    q* <= T e^{-R/Xi} -> 0 < Q_mu (symbolic T)."""
    R, Xi, eps = sp.symbols("R Xi epsilon", positive=True)
    mu = eps / 2
    log_qstar_bound = sp.log(T) - R / Xi
    log_q_lower = -(1 - eps) * R / Xi - sp.log(T)
    diff = log_qstar_bound - (1 + mu) * log_q_lower
    coeff = 1 - (1 + mu) * (1 - eps)
    closed = diff - (-R / Xi * coeff + (2 + mu) * sp.log(T))
    Rmin = (2 + mu) * sp.log(T) * Xi / coeff
    at_Rmin = sp.simplify(diff.subs(R, Rmin))
    return residuals(exponent_identity=sp.expand(closed), coefficient=sp.expand(coeff - (eps / 2 + eps ** 2 / 2)),
                     coefficient_positive=bool((eps / 2 + eps ** 2 / 2).is_positive),
                     zero_at_threshold=sp.expand(at_Rmin),
                     decreasing_in_R=bool(sp.factor(sp.diff(diff, R)).is_negative),
                     baseline_mass_vanishes=sp.limit(T * sp.exp(-R / Xi), R, sp.oo) == 0)


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("(ATT-SVM') as a union: max_{j in O_i} (k_ij - k_it)^T p >= 1 iff some j in O_i has (k_ij - k_it)^T p >= "
             "1; the solution set is a finite set of piece optima (svm.generalized, certified exactly per instance)",
             "cited",
             reference="Appendix D, (ATT-SVM') and its non-convexity example; attnsvm/svm/generalized.py",
             by=("example-attsvm-prime-nonconvex",)),
        Step("softmax ratio s_t = s_j exp(-(a_j - a_t)) for any two tokens (symbolic T)", "symbolic", softmax_ratio),
        Step("mass bounds: s_t <= exp(-(a_j - a_t)); a token t with a_max - a_t <= x keeps s_t >= exp(-x)/T "
             "(symbolic T)", "symbolic", mass_bounds),
        Step("(84): baseline p*_R = R p*/Xi has q_max <= T e^{-R/Xi} (each outside token dominated by some j in O_i by "
             "R/Xi); a violated constraint gives q_max >= e^{-(1 - eps) R/Xi}/T", "symbolic", set_mass_union),
        Step("compactness: if dist(p(R)/R, P^mm/Xi) >= delta, then p(R) Xi/R violates some constraint by a factor "
             "1 - eps, eps > 0 uniform in R (else p(R) Xi/R would be feasible with norm <= Xi, hence in P^mm)", "cited",
             reference="Appendix D.1, first paragraph of the proof"),
        Step("(84) meets Assumption D's conditions with mu = eps/2 for R large: q* <= q^{1 + mu} and q* <= Q_mu "
             "(symbolic T)", "symbolic", exponent_condition, by=("assumption-D",)),
        Step("Assumption D then gives L(p*_R) < L(p(R)) with ||p*_R|| = R, contradicting the optimality of p(R)",
             "cited", reference="Appendix D.1, last paragraph", by=("assumption-D",)),
    ), RECONSTRUCTION)
