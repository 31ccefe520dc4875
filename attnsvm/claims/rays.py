"""Rays R q of the key space (paper A, Definition 3 and Lemmas 8-10, docs/statements.md#definition3):
instance spaces of a dataset with integer directions, and the finite-horizon proxy of "for all
large R, L(R q) is below a reference": the sign of the risk difference on a doubling grid of radii
(`svm.directional.ray_difference`: float64's log domain with a rounding bound, mpmath where the
bound cannot settle it), judged on the largest radii. Each result passes its own grid size, top
count and exponent cap, so changing one result's proxy cannot change another's verdict."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims.claim import Instance, Outcome
from attnsvm.claims.spaces import Space
from attnsvm.svm.directional import Signed, ray_difference


def directions(datasets: Space, lo: int = -2, hi: int = 2, losses: bool = False, pair: bool = False) -> Space:
    """Instances: a dataset of `datasets` and an integer direction q != 0 of its dimension
    (params['q'], entries in [lo, hi]); with `losses`, a loss of Assumption A (params['loss']);
    with `pair`, a second integer direction p != 0 (params['p'], drawn last)."""
    names = sorted(LOSSES)

    def vector(c, d):
        x = [c.integer(lo, hi, "entry") for _ in range(d)]
        if not any(x):
            c.reject()
        return x

    def generate(c):
        ds = datasets.generate(c)
        params = {"q": vector(c, ds.d)}
        if losses:
            params["loss"] = c.sampled_from(names)
        if pair:
            params["p"] = vector(c, ds.d)
        return Instance(ds, params)

    more = (f"; loss in {names}" if losses else "") + (f"; integer p in [{lo}, {hi}]^d, p != 0" if pair else "")
    return Space(generate, f"{datasets.description}; integer q in [{lo}, {hi}]^d, q != 0{more}")


def candidates(d: int, lo: int = -2, hi: int = 2) -> np.ndarray:
    """Every integer direction of [lo, hi]^d except 0, shape (C, d)."""
    return np.array([x for x in itertools.product(range(lo, hi + 1), repeat=d) if any(x)], dtype=np.int64)


@dataclass(frozen=True)
class Table:
    """Definition 3 for many integer directions at once, exactly (integer arithmetic over the keys'
    and scores' common denominators, which scale every margin of one dataset alike): per
    direction the selected tokens `alpha` (C, n), `unique`, the scaled margin `margin`, whether it
    is `neighbor_optimal` / has `neighbors_better`, and its squared norm `norm2`."""

    directions: np.ndarray
    alpha: np.ndarray
    unique: np.ndarray
    margin: np.ndarray
    neighbor_optimal: np.ndarray
    neighbors_better: np.ndarray
    norm2: np.ndarray

    def margin_order(self) -> np.ndarray:
        """(C, C): sign of Gamma(a)/||a|| - Gamma(b)/||b|| (sign-preserving squares, exact)."""
        sq = self.margin * np.abs(self.margin)
        a, b = sq[:, None] * self.norm2[None, :], sq[None, :] * self.norm2[:, None]
        return np.sign(a - b)


def table(ds, dirs: np.ndarray) -> Table:
    """`Table` of the integer directions `dirs` (C, d) on `ds` (its exact keys and scores)."""
    Xn, _ = model.integer_tokens(ds)
    Wn, _ = model.to_integers(ds.exact["W"])
    K = np.array(Xn.dot(Wn).tolist(), dtype=object).reshape(ds.n, ds.T, ds.d)
    g = model.exact_scores(ds)
    gden = math.lcm(*(x.denominator for row in g for x in row))
    G = np.array([[int(x * gden) for x in row] for row in g], dtype=object)
    logit = np.einsum("itd,cd->cit", K, dirs.astype(object))                     # exact Python ints
    top = logit.max(-1)
    alpha = np.argmax(logit == top[..., None], axis=-1)
    unique = ((logit == top[..., None]).sum(-1) == 1).all(-1)
    vals = top[..., None] - logit
    own = np.arange(ds.T)[None, None, :] == alpha[..., None]
    big = max(int(v) for v in vals.ravel()) + 1
    margin = np.where(own, big, vals).reshape(len(dirs), -1).min(-1)
    nb = (~own) & (vals == margin[:, None, None])
    g_alpha = np.take_along_axis(np.broadcast_to(G, logit.shape), alpha[..., None], -1)
    worse = (G[None] < g_alpha).astype(bool)
    better = (G[None] > g_alpha).astype(bool)
    return Table(dirs, alpha, unique, margin, (~nb | worse).all((1, 2)), (~nb | better).all((1, 2)),
                 (dirs.astype(object) ** 2).sum(-1))


def norm(x: Sequence) -> float:
    return math.sqrt(float(sum(Fraction(y) ** 2 for y in x)))


def key_spread(ds) -> float:
    """max_{i,t,tau} ||k_it - k_itau||: the logit spread per unit of R."""
    K = model.keys(ds)
    return max(float(math.dist(K[i][t], K[i][u])) for i in range(ds.n) for t in range(ds.T) for u in range(ds.T))


@dataclass(frozen=True)
class Gap:
    """The risk difference at radius R: its sign and log, how it was computed ('float' or
    'mpmath'), and r = R / ||reference direction|| (the margin's exponent scale)."""

    R: float
    value: Signed
    how: str
    r: float


def radii(R1: float, count: int) -> list[float]:
    """R_k = 2^k R_1, k < count."""
    return [R1 * 2 ** k for k in range(count)]


def gaps(ds, loss: str, grid: Sequence[float], p: Sequence, q: Sequence | None, max_exponent: float,
         scale_norm: float) -> list[Gap]:
    """L(R p^) - reference (L(R q^), or L_*(alpha_p) when q is None) on the grid, stopping at the
    first R with R x max(spread, 1) > max_exponent (e^{-R spread} past what the proxy evaluates)."""
    spread = max(key_spread(ds), 1.0)
    out = []
    for R in grid:
        if R * spread > max_exponent:
            break
        value, how = ray_difference(ds, loss, R, p, q)
        out.append(Gap(R, value, how, R / scale_norm))
    return out


def decide(found: Sequence[Gap], margin_gamma, last: int, max_exponent: float) -> Outcome:
    """Negative at the last `last` radii: holds; nonnegative there: fails; mixed: undecided.
    Margin: -difference / e^{-r Gamma} at the last radius, clipped to [-1, 1]."""
    if len(found) < last:
        return Outcome(None, detail={"radii": [g.R for g in found]},
                       reason=f"fewer than {last} radii below R x spread = {max_exponent}: margins too small for the "
                              "grid")
    tail = found[-last:]
    signs = [g.value.sign < 0 for g in tail]
    end = tail[-1]
    if end.value.sign == 0:
        m = -0.0
    else:
        x = end.value.log_abs + end.r * float(margin_gamma)            # log |difference| / e^{-r Gamma}
        m = -end.value.sign * (1.0 if x >= 0 else math.exp(x))
    detail = {"radii": [g.R for g in found], "differences": [g.value.text() for g in found],
              "computed": [g.how for g in found], "margin": m}
    if all(signs):
        return Outcome(True, detail=detail, margin=m)
    if not any(signs):
        return Outcome(False, detail=detail, margin=min(m, 0.0))
    return Outcome(None, detail=detail, reason=f"the sign of the risk difference changes within the last {last} radii")
