"""Lemma 13 (core paper, Appendix C.2): on the joint path restricted to the quadrant P of (77) (where
alpha is selected; Lemma 12 puts the path there), v/r -> v_mm/||v_mm|| and p/R -> p_relax/||p_relax||,
p_relax the solution of (10). The proof is Theorem 5's with a competitor from (78), (10) with its
non-support constraints tightened to >= eps: (1 - eps) p_relax + eps p_mm meets (78), so the support
margin of (78)'s solution is Lipschitz in eps. sympy checks that interpolation and the Lipschitz
bound, and reuses Theorem 6's exponent and threshold steps (the rate r = kappa R, kappa > kappa*,
is NOTES.md's finding, needed here as in Theorem 6); the logistic-loss sandwich (79)-(82) is cited."""

import sympy as sp

from attnsvm.claims.identities import direction_violates, kappa_threshold, nonsupport_exponent
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import residuals

STATEMENT = ("on the joint path restricted to the quadrant (77), v/r -> v_mm/||v_mm|| and p/R -> p_relax/||p_relax|| "
             "(problem (10)), under Theorem 6's hypotheses (r = kappa R with kappa > kappa*)")
RECONSTRUCTION = ("the restriction to (77) and the competitor (78) are read from the proof; the rate kappa > kappa* is "
                  "ours (NOTES.md, Theorem 6)")


def interpolation() -> dict:
    """Rows of (10): support values a >= 1 (relax) and b >= 1 (p_mm), non-support a' >= 0, b' >= 1: the combination
    (1 - eps) p_relax + eps p_mm has (1 - eps) a + eps b >= 1 and (1 - eps) a' + eps b' >= eps (eps in [0, 1]);
    with ||p^eps|| <= ||comb|| <= A + eps B (A = ||p_relax||, B = ||p_mm - p_relax||), the support margin
    1/||p^eps|| >= 1/(A + eps B) >= 1/A - eps B/A^2, the gap being eps^2 B^2/(A^2 (A + eps B)) >= 0."""
    x, y, z, w, e = sp.symbols("x y z w e", nonnegative=True)      # a = 1 + x, b = 1 + y, a' = z, b' = 1 + w
    eps = 1 / (1 + e)                                               # eps in (0, 1]
    support = (1 - eps) * (1 + x) + eps * (1 + y) - 1
    other = (1 - eps) * z + eps * (1 + w) - eps
    A, B = sp.symbols("A B", positive=True)
    ep = sp.Symbol("epsilon", positive=True)
    gap = 1 / (A + ep * B) - (1 / A - ep * B / A ** 2)
    return residuals(support_rows=bool(sp.factor(sp.together(support)).is_nonnegative),
                     other_rows=bool(sp.factor(sp.together(other)).is_nonnegative),
                     lipschitz_gap=sp.simplify(gap - ep ** 2 * B ** 2 / (A ** 2 * (A + ep * B))),
                     lipschitz_gap_nonnegative=bool((ep ** 2 * B ** 2 / (A ** 2 * (A + ep * B))).is_nonnegative))


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("Lemma 12: for large (r, R) the path lies in the quadrant (77), so the restricted path is the path",
             "cited", reference="Appendix C.2, Lemma 12 (PROVED here as lemma12)", by=("lemma12",)),
        Step("competitor (78): (1 - eps) p_relax + eps p_mm is feasible, so the support margin of (78)'s solution is "
             ">= 1/||p_relax|| - eps ||p_mm - p_relax||/||p_relax||^2 (symbolic)", "symbolic", interpolation),
        Step("strong convexity of (10): a direction delta away from p_relax's violates a support constraint by 1 - eps "
             "(symbolic d)", "symbolic", direction_violates),
        Step("non-support inputs along r = kappa R: exponent -R (c + kappa (m_i - 1)/||v_mm||) (symbolic)", "symbolic",
             nonsupport_exponent),
        Step("they are negligible exactly when kappa > kappa* (symbolic)", "symbolic", kappa_threshold),
        Step("loss sandwich (79)-(82) with Assumption C over S, and Case 2 for v, as in Theorem 5", "cited",
             reference="Appendix C.2, proof of Lemma 13", by=("theorem5", "assumption-C")),
    ), RECONSTRUCTION)
