"""Definition 3 of the core paper (Appendix B.5.1): selected tokens, directional margin and
directional neighbours of a direction q, in exact rational arithmetic, and the risk along a ray
R q in mpmath (for Lemmas 8-10).

For q != 0 (exact entries): the selected tokens of input i are argmax_t k_it^T q (unique or not);
with alpha_i the first of them, the directional margin is Gamma(q) = min_{i, t != alpha_i}
(k_{i,alpha_i} - k_it)^T q and the directional neighbours T_i(q) = {t != alpha_i : (k_{i,alpha_i} -
k_it)^T q = Gamma(q)} (the minimum over all inputs: our reading of (60)-(61), whose formulas are
lost in the text). Margins scale with ||q||: for a unit direction divide by ||q||. q is
neighbour-optimal when every directional neighbour scores strictly below its selected token."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import mpmath

from attnsvm.attention import model
from attnsvm.attention.data import Dataset


@dataclass(frozen=True)
class Direction:
    alpha: tuple[int, ...]                    # first selected token per input
    unique: bool                              # every input's argmax is unique
    values: dict                              # (i, t) -> (k_{i,alpha_i} - k_it)^T q, t != alpha_i (exact)
    margin: Fraction                          # Gamma(q) (unnormalised)
    neighbors: tuple[tuple[int, ...], ...]    # T_i(q)
    neighbor_optimal: bool
    neighbors_better: bool                    # every neighbour scores strictly above its selected token

    @property
    def count(self) -> int:
        return sum(len(x) for x in self.neighbors)


def direction(ds: Dataset, q: Sequence) -> Direction:
    """Definition 3 for the direction q (exact)."""
    q = [Fraction(x) for x in q]
    K, g = model.exact_keys(ds), model.exact_scores(ds)
    logit = [[sum(K[i, t][j] * q[j] for j in range(ds.d)) for t in range(ds.T)] for i in range(ds.n)]
    alpha, unique = [], True
    for row in logit:
        top = max(row)
        ties = [t for t in range(ds.T) if row[t] == top]
        alpha.append(ties[0])
        unique &= len(ties) == 1
    values = {(i, t): logit[i][alpha[i]] - logit[i][t] for i in range(ds.n) for t in range(ds.T) if t != alpha[i]}
    margin = min(values.values())
    nb = tuple(tuple(t for t in range(ds.T) if t != alpha[i] and values[i, t] == margin) for i in range(ds.n))
    scored = [(g[i][alpha[i]], g[i][t]) for i in range(ds.n) for t in nb[i]]
    return Direction(tuple(alpha), unique, values, margin, nb, all(a > b for a, b in scored),
                     all(b > a for a, b in scored))


def unit_margin_order(ds: Dataset, p: Sequence, q: Sequence) -> int:
    """sign of Gamma(p)/||p|| - Gamma(q)/||q||, exactly (squares compared with their signs)."""
    gp, gq = direction(ds, p).margin, direction(ds, q).margin
    np2, nq2 = sum(Fraction(x) ** 2 for x in p), sum(Fraction(x) ** 2 for x in q)
    a, b = gp * abs(gp) * nq2, gq * abs(gq) * np2            # sign-preserving squares of Gamma/||.|| times ||p||^2 ||q||^2
    return (a > b) - (a < b)


_MP_LOSSES = {
    "logistic": lambda u: mpmath.log1p(mpmath.exp(-u)),
    "exponential": lambda u: mpmath.exp(-u),
    "correlation": lambda u: -u,
}


def mp_risk(ds: Dataset, p: Sequence, loss: str) -> mpmath.mpf:
    """L(p) = (1/n) sum_i loss(<gamma_i, S(K_i p)>) in mpmath at the working precision (exact keys and scores)."""
    K, g = model.exact_keys(ds), model.exact_scores(ds)
    mp = lambda x: mpmath.mpf(x.numerator) / x.denominator
    pm = [mpmath.mpf(x) if not isinstance(x, Fraction) else mp(x) for x in p]
    total = mpmath.mpf(0)
    for i in range(ds.n):
        a = [mpmath.fsum(mp(K[i, t][j]) * pm[j] for j in range(ds.d)) for t in range(ds.T)]
        top = max(a)
        e = [mpmath.exp(x - top) for x in a]
        f = mpmath.fsum(w * mp(gg) for w, gg in zip(e, g[i])) / mpmath.fsum(e)
        total += _MP_LOSSES[loss](f)
    return total / ds.n


def mp_baseline(ds: Dataset, alpha: Sequence[int], loss: str) -> mpmath.mpf:
    """L_*(alpha) = (1/n) sum_i loss(gamma_{i,alpha_i}): the risk of selecting alpha exactly (Lemma 8's baseline)."""
    g = model.exact_scores(ds)
    return mpmath.fsum(_MP_LOSSES[loss](mpmath.mpf(g[i][a].numerator) / g[i][a].denominator)
                       for i, a in enumerate(alpha)) / ds.n
