"""Lemma 10 (Appendix B.5.2; docs/statements.md#lemma10): with keys in general position (Theorem 7: any at most d
rows k_{i,alpha_i} - k_it are linearly independent, and the all-ones vector is not in the range of
any d + 1 of them), every direction q != 0 has at most d directional neighbours (Definition 3).

Proof: the rows M of the neighbours satisfy M q = Gamma 1 (61). If there were d + 1 of them, M' say:
for Gamma != 0, 1 = M' (q/Gamma) would lie in range(M'), which general position excludes (the
paper's argument); for Gamma = 0 (a tied selection, which the paper's case (A) excludes; added
here), d of the rows N would give N q = 0 with N invertible, so q = 0. sympy checks both algebraic
facts for a symbolic dimension d.
"""

import sympy as sp

from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import d, residuals

STATEMENT = "keys in general position => sum_i |T_i(q)| <= d for every direction q != 0 (Definition 3)"
RECONSTRUCTION = ("the count's formula is lost in the text extraction ('at most d directional neighbours'); the case "
                  "Gamma(q) = 0 (tied selection) is our addition")


def ones_in_range() -> dict:
    """Gamma != 0: M' q = Gamma 1 gives M' (q/Gamma) = 1, so 1 is in range(M') (M' of size (d+1) x d, symbolic d)."""
    M = sp.MatrixSymbol("M", d + 1, d)
    q = sp.MatrixSymbol("q", d, 1)
    ones = sp.MatrixSymbol("one", d + 1, 1)
    G = sp.Symbol("Gamma", nonzero=True)
    # with M q = Gamma 1 substituted: M (q / Gamma) - 1 = (M q - Gamma 1)/Gamma
    resid = (M * (q / G) - ones) - (M * q - G * ones) / G
    return residuals(ones_in_range=resid)


def kernel_trivial() -> dict:
    """Gamma = 0: d of the rows, N (d x d, invertible by general position), with N q = 0 give q = N^{-1} (N q) = 0
    (symbolic d)."""
    N = sp.MatrixSymbol("N", d, d)
    q = sp.MatrixSymbol("q", d, 1)
    return residuals(inverse_recovers_q=(N.I * N * q).doit() - q)


def outline() -> Outline:
    return Outline(STATEMENT, (
        Step("Gamma(q) != 0: d + 1 neighbour rows M' with M' q = Gamma 1 would put 1 = M' (q/Gamma) in range(M'), "
             "which general position excludes (symbolic d)", "symbolic", ones_in_range, by=("definition3",)),
        Step("Gamma(q) = 0: d neighbour rows N are independent (general position), so N q = 0 forces q = N^{-1} N q = "
             "0, against q != 0 (symbolic d)", "symbolic", kernel_trivial, by=("definition3",)),
    ), RECONSTRUCTION)
