"""Empirical rates of finite-horizon proxies (the named stand-ins for t -> inf, R -> inf)."""

from __future__ import annotations

from typing import Sequence

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
