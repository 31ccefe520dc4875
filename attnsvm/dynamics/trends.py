"""Empirical rates of finite-horizon proxies (the named stand-ins for t -> inf, R -> inf)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def loglog_slope(x: Sequence[float], y: Sequence[float], floor: float = 0.0, min_points: int = 2) -> float | None:
    """Least-squares slope of log y against log x over the points with x > 0 and finite
    y > floor: the exponent of y ~ x^slope (e.g. 1 - corr against t or R). None when fewer
    than `min_points` points qualify."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    keep = (x > 0) & np.isfinite(y) & (y > floor)
    if keep.sum() < max(2, min_points):
        return None
    return float(np.polyfit(np.log(x[keep]), np.log(y[keep]), 1)[0])


FLOOR = 1e-12       # a gap at float resolution: nothing left to fall


def approaches(x: Sequence[float], gaps: Sequence[float], tol: float, slope: float = -1.0) -> bool:
    """The tail `gaps` (e.g. 1 - corr(p(R), target) at radii x) shows convergence to 0: the last
    gap is <= tol, no gap rises (relative slack 1e-6, absolute FLOOR), and the gaps still fall
    like a power of x (log-log slope <= `slope`) unless the last is at float resolution. A path
    that settled on a direction a small fixed angle away plateaus and fails this however small
    the angle, which a tolerance alone would pass."""
    gaps = [float(g) for g in gaps]
    monotone = all(b <= a * (1 + 1e-6) + FLOOR for a, b in zip(gaps, gaps[1:]))
    if gaps[-1] <= FLOOR:
        return monotone
    s = loglog_slope(x, gaps)
    return gaps[-1] <= tol and monotone and s is not None and s <= slope


def limit_estimate(e1: float, e2: float, e3: float, plateau: float = 1e-3) -> float | None:
    """The limit of a measure seen at H/4, H/2, H (equally spaced in log t), by Aitken's
    delta-squared (exact for e_inf + c t^-a): e3 when it is no longer decreasing, None when it
    rose then fell or its decrease accelerates (no trustworthy estimate) unless it is a plateau
    (both changes within `plateau` of e3 (relative) over two octaves of t: settled at e3), so rounding-level
    noise on a flat measure does not decide the verdict."""
    d1, d2 = e1 - e2, e2 - e3
    if d2 <= 1e-12 * max(1.0, abs(e3)):
        return e3
    if d1 <= 0 or d2 >= d1:
        return e3 if max(abs(d1), abs(d2)) <= plateau * abs(e3) else None
    r = d2 / d1
    return e3 - d2 * r / (1 - r)
