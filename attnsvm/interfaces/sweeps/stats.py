"""Statistics behind a sweep's verdicts: Wilson intervals, a trend test for "fraction rises
with d", and an upper-bound test for "happens in < x% of problems". Thresholds are 3 sigma
(z = 3) so that a verdict is not a coin flip over the 5-10 tests of one report."""

from __future__ import annotations

import math

from attnsvm.claims.verdicts import Report
from attnsvm.interfaces.sweeps.reports import check

Z = 3.0


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion k/n (95% by default)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, mid - half), min(1.0, mid + half))


def trend_z(groups: list[tuple[float, int, int]]) -> float:
    """Cochran-Armitage trend statistic of counts k out of N at levels x: groups (x, k, N).
    NaN when every trial has the same outcome, or there are none."""
    N = sum(g[2] for g in groups)
    K = sum(g[1] for g in groups)
    if N == 0:
        return float("nan")
    pbar = K / N
    xbar = sum(x * n for x, _, n in groups) / N
    var = pbar * (1 - pbar) * sum(n * (x - xbar) ** 2 for x, _, n in groups)
    if var == 0:
        return float("nan")
    return sum(k * (x - xbar) for x, k, _ in groups) / math.sqrt(var)


def drop_z(a: tuple[float, int, int], b: tuple[float, int, int]) -> float:
    """Two-proportion z of b's fraction minus a's (negative = a drop from a to b)."""
    (_, k1, n1), (_, k2, n2) = a, b
    p = (k1 + k2) / (n1 + n2)
    se = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    return 0.0 if se == 0 else (k2 / n2 - k1 / n1) / se


def trend_check(claim: str, groups: list[tuple[float, int, int]]) -> Report:
    """SUPPORTED: increasing trend at z > 3 and no consecutive drop at z < -3; REFUTED: a
    decreasing trend or a significant drop; INCONCLUSIVE otherwise. The groups are taken in
    ascending x (the "drop" compares neighbours in x), so the verdict does not depend on the
    order they are given in."""
    groups = sorted(groups, key=lambda g: g[0])
    z = trend_z(groups)
    drops = [(groups[i][0], groups[i + 1][0], drop_z(groups[i], groups[i + 1])) for i in range(len(groups) - 1)]
    worst = min(drops, key=lambda t: t[2]) if drops else None
    fr = ", ".join(f"{x:g}: {k / n:.3f}" for x, k, n in groups)
    if math.isnan(z):
        verdict = "INCONCLUSIVE"
    elif z < -Z or (worst and worst[2] < -Z):
        verdict = "REFUTED"
    elif z > Z:
        verdict = "SUPPORTED"
    else:
        verdict = "INCONCLUSIVE"
    ev = f"fractions {{{fr}}}; trend z = {z:.1f}" if groups else "no runs counted"
    if worst:
        ev += f"; largest drop {worst[0]:g}->{worst[1]:g} at z = {worst[2]:.1f}"
    return check(claim, verdict, ev, trend_z=None if math.isnan(z) else z)       # (strict JSON)


def upper_bound_check(claim: str, k: int, n: int, bound: float) -> Report:
    """SUPPORTED if the 95% Wilson upper limit of k/n is below `bound`, REFUTED if the lower
    limit is above it, else INCONCLUSIVE (also with no runs, or too few for the interval to
    clear the bound)."""
    if n == 0:
        return check(claim, "INCONCLUSIVE", f"no runs that could show it (0 of 0) vs {bound:.2%}")
    lo, hi = wilson(k, n)
    verdict = "SUPPORTED" if hi < bound else "REFUTED" if lo > bound else "INCONCLUSIVE"
    return check(claim, verdict, f"{k} of {n} = {k / max(n, 1):.4%} (95% CI {lo:.4%}..{hi:.4%}) vs {bound:.2%}",
                 k=k, n=n)
