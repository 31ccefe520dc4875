"""Definition 3 of the core paper (Appendix B.5.1): selected tokens, directional margin and
directional neighbours of a direction q, in exact rational arithmetic, and the risk along a ray
R q (for Lemmas 8-10): in float64's log domain with a rounding bound on every term, and in
mpmath where that bound cannot settle the sign.

For q != 0 (exact entries): the selected tokens of input i are argmax_t k_it^T q (unique or not);
with alpha_i the first of them, the directional margin is Gamma(q) = min_{i, t != alpha_i}
(k_{i,alpha_i} - k_it)^T q and the directional neighbours T_i(q) = {t != alpha_i : (k_{i,alpha_i} -
k_it)^T q = Gamma(q)} (the minimum over all inputs: our reading of (60)-(61), whose formulas are
lost in the text). Margins scale with ||q||: for a unit direction divide by ||q||. q is
neighbour-optimal when every directional neighbour scores strictly below its selected token."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import mpmath

from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.numerics import EPS


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


def exact_rank(rows: Sequence[Sequence]) -> int:
    """The rank over Q of a matrix of rationals (ints, Fractions), exactly (python-flint)."""
    import flint

    rows = [[Fraction(x) for x in r] for r in rows]
    if not rows or not rows[0]:
        return 0
    entries = [flint.fmpq(x.numerator, x.denominator) for r in rows for x in r]
    return flint.fmpq_mat(len(rows), len(rows[0]), entries).rank()


def direction_of(ds: Dataset, q: Sequence) -> Direction:
    """`direction(ds, q)`, memoized on the dataset (hypotheses and conclusions share it)."""
    key = tuple(Fraction(x) for x in q)
    return ds.memo(("direction", key), lambda: direction(ds, key))


def unit_margin_order(ds: Dataset, p: Sequence, q: Sequence) -> int:
    """sign of Gamma(p)/||p|| - Gamma(q)/||q||, exactly (squares compared with their signs)."""
    gp, gq = direction_of(ds, p).margin, direction_of(ds, q).margin
    np2, nq2 = sum(Fraction(x) ** 2 for x in p), sum(Fraction(x) ** 2 for x in q)
    # sign-preserving squares of Gamma/||.|| times ||p||^2 ||q||^2
    a, b = gp * abs(gp) * nq2, gq * abs(gq) * np2
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


# ---- risk differences along rays, in float64's log domain with a rounding bound --------------

SMALL_SHIFT = 1e-6      # |m_i - gamma_{i,alpha_i}| below this: the loss increment is loss' times the shift


@dataclass(frozen=True)
class Signed:
    """A real number as sign (-1, 0, +1) and log |x| (-inf for 0)."""

    sign: int
    log_abs: float

    def text(self, digits: int = 6) -> str:
        """The number in mpmath.nstr's style ('-1.23457e-300'), whatever its exponent."""
        if self.sign == 0:
            return "0.0"
        e10 = self.log_abs / math.log(10)
        k = math.floor(e10)
        mant = 10 ** (e10 - k)
        if round(mant, digits - 1) >= 10:
            mant, k = mant / 10, k + 1
        body = f"{mant:.{digits}g}" + (f"e{k:+d}".replace("+", "") if k else "")
        return ("-" if self.sign < 0 else "") + body


def signed_sum(terms: Sequence[tuple[int, float, float]]) -> tuple[Signed, float] | None:
    """sum_k sign_k exp(log_k) for terms (sign, log |term|, relative error bound of the term), with
    the relative error bound of the sum, or None when the bound cannot settle its sign. The scaled
    terms are added exactly (math.fsum): the error is the terms' own plus one rounding of each exp
    and of the sum."""
    live = [(s, lg, r) for s, lg, r in terms if s != 0 and lg > -math.inf]
    if not live:
        return Signed(0, -math.inf), 0.0
    top = max(lg for _, lg, _ in live)
    vals = [(s * math.exp(lg - top), r + 2 * EPS) for s, lg, r in live]
    total = math.fsum(v for v, _ in vals)
    err = math.fsum(abs(v) * r for v, r in vals) + EPS * abs(total)
    if abs(total) <= err:
        return None
    return Signed(1 if total > 0 else -1, math.log(abs(total)) + top), err / abs(total)


def _softplus(x: float) -> float:
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def _log_abs_loss_deriv(loss: str, u: float) -> float:
    """log |loss'(u)| for the losses of Assumption A (loss' < 0): logistic -sigmoid(-u)."""
    if loss == "logistic":
        return -_softplus(u)
    if loss == "exponential":
        return -u
    if loss == "correlation":
        return 0.0
    raise ValueError(f"no log |loss'| for loss {loss!r}")


def _increment(loss: str, u: float, sign: int, log_delta: float, rel_delta: float) -> tuple[int, float, float]:
    """loss(u + delta) - loss(u) as (sign, log |.|, relative error bound), delta = sign e^log_delta
    known to relative error rel_delta. A shift below SMALL_SHIFT (it may underflow float64) takes
    the first-order form loss'(u) delta (1 + rho), |rho| <= 2 |delta| for these losses (|loss''| <=
    |loss'| and |loss'| changes by at most e^|delta| over the shift); a larger one is evaluated with
    expm1/log1p, each error scaled by the condition number of the step."""
    if log_delta < math.log(SMALL_SHIFT):
        rho = rel_delta + 2 * math.exp(log_delta) + EPS * (4 + 2 * abs(u))
        return -sign, _log_abs_loss_deriv(loss, u) + log_delta, rho
    delta = sign * math.exp(log_delta)
    rel = rel_delta + EPS
    if loss == "correlation":
        return -sign, math.log(abs(delta)), rel
    e = math.expm1(-delta)
    rel_e = rel * (1 + abs(delta)) + 2 * EPS
    if loss == "exponential":
        return -sign, -u + math.log(abs(e)), rel_e + EPS * (4 + 2 * abs(u))
    if loss == "logistic":
        sig = math.exp(-u) / (1 + math.exp(-u)) if u > 0 else 1 / (1 + math.exp(u))        # sigmoid(-u)
        y = e * sig
        cond = abs(y / ((1 + y) * math.log1p(y)))
        return -sign, math.log(abs(math.log1p(y))), (rel_e + EPS * (6 + 2 * abs(u))) * cond + 2 * EPS
    raise ValueError(f"no increment for loss {loss!r}")


def _loss_value(loss: str, u: float) -> float:
    if loss == "logistic":
        return _softplus(-u)
    if loss == "exponential":
        return math.exp(-u)
    if loss == "correlation":
        return -u
    raise ValueError(f"no value for loss {loss!r}")


def excess_terms(ds: Dataset, q: Sequence, R: float, loss: str) -> list[tuple[int, float, float]] | None:
    """n (L(R q/||q||) - L_*(alpha)) as signed log terms with error bounds (`signed_sum`), alpha
    the tokens q selects, one term per input: loss(m_i) - loss(gamma_{i,alpha_i}) (`_increment`),
    the shift delta_i = m_i - gamma_{i,alpha_i} = sum_{t != alpha_i} s_it (gamma_it - gamma_{i,alpha_i})
    in the log domain from the exact logit gaps (k_{i,alpha_i} - k_it)^T q grouped by value, so equal exponents
    combine exactly. None when a cancellation among one input's terms is below their rounding
    bound."""
    D = direction_of(ds, q)
    g = model.exact_scores(ds)
    nq = math.sqrt(float(sum(Fraction(x) ** 2 for x in q)))
    terms = []
    for i in range(ds.n):
        a = D.alpha[i]
        coeff: dict[Fraction, Fraction] = {}
        count: dict[Fraction, int] = {}
        for t in range(ds.T):
            if t != a:
                v = D.values[i, t]
                coeff[v] = coeff.get(v, Fraction(0)) + (g[i][t] - g[i][a])
                count[v] = count.get(v, 0) + 1
        xs = {v: -R * float(v) / nq for v in coeff}                        # log s_t / s_alpha, <= 0
        rel_x = {v: 6 * EPS * abs(x) + EPS for v, x in xs.items()}         # exp(x)'s error from x's rounding
        got = signed_sum([((c > 0) - (c < 0), math.log(abs(float(c))) + xs[v] if c else -math.inf, rel_x[v] + EPS)
                          for v, c in coeff.items()])
        if got is None:
            return None
        num, rel_num = got
        if num.sign == 0:
            continue                                                        # delta_i = 0 exactly
        Z = 1.0 + math.fsum(k * math.exp(xs[v]) for v, k in count.items())
        log_delta = num.log_abs - math.log(Z)
        rel_delta = rel_num + max(rel_x.values()) + 2 * EPS * (2 + abs(log_delta))
        terms.append(_increment(loss, float(g[i][a]), num.sign, log_delta, rel_delta))
    return terms


def baseline_terms(ds: Dataset, alpha: Sequence[int], loss: str, sign: int = 1) -> list[tuple[int, float, float]]:
    """n L_*(alpha) = sum_i loss(gamma_{i,alpha_i}) as signed log terms (times `sign`)."""
    g = model.exact_scores(ds)
    out = []
    for i, a in enumerate(alpha):
        x = _loss_value(loss, float(g[i][a]))
        out.append((sign * ((x > 0) - (x < 0)), math.log(abs(x)) if x else -math.inf,
                    EPS * (4 + 2 * abs(float(g[i][a])))))
    return out


def _mp(x) -> mpmath.mpf:
    x = Fraction(x)
    return mpmath.mpf(x.numerator) / x.denominator


def ray_difference(ds: Dataset, loss: str, R: float, p: Sequence, q: Sequence | None = None,
                   digits: int = 30) -> tuple[Signed, str]:
    """L(R p/||p||) - reference, reference = L(R q/||q||) when q is given, else L_*(alpha_p): in
    float64's log domain where every term's rounding bound settles the sign ('float'), else in
    mpmath at `digits` plus enough to resolve e^{-R spread} against 1 ('mpmath')."""
    alpha_p = direction_of(ds, p).alpha
    plus = excess_terms(ds, p, R, loss)
    minus = excess_terms(ds, q, R, loss) if q is not None else []
    if plus is not None and minus is not None:
        terms = plus + [(-s, lg, r) for s, lg, r in minus]
        if q is not None and direction_of(ds, q).alpha != alpha_p:
            terms += baseline_terms(ds, alpha_p, loss) + baseline_terms(ds, direction_of(ds, q).alpha, loss, -1)
        got = signed_sum(terms)
        if got is not None:
            total = got[0]
            return Signed(total.sign, total.log_abs - math.log(ds.n) if total.sign else -math.inf), "float"
    K = model.keys(ds)
    spread = max(float(math.dist(K[i][t], K[i][u])) for i in range(ds.n) for t in range(ds.T) for u in range(ds.T))
    with mpmath.workdps(digits + int(2 * R * max(spread, 1.0) / math.log(10))):
        def point(x):
            xs = [_mp(y) for y in x]
            nx = mpmath.sqrt(mpmath.fsum(y * y for y in xs))
            return [mpmath.mpf(R) * y / nx for y in xs]

        ref = mp_risk(ds, point(q), loss) if q is not None else mp_baseline(ds, alpha_p, loss)
        diff = mp_risk(ds, point(p), loss) - ref
        sign = (diff > 0) - (diff < 0)
        return Signed(sign, float(mpmath.log(abs(diff))) if sign else -math.inf), "mpmath"
