"""What the small-figure sweeps (`fig1`, `fig3c`, `fig4`, `fig5`, `fig10`, `tfsvm-*`) share:
verdicts of finite-horizon proxies, a sign test over trials, and writing a sweep's summary and
picture.

A verdict is a `Report` (`reports.check`): SUPPORTED, INCONCLUSIVE or REFUTED, always with the
numbers behind it; the proxy, horizon, tolerance and seed of the run are its evidence's
`conditions` (`reports.with_conditions`), so a report read on its own says what was measured."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from attnsvm.claims.verdicts import Report
from attnsvm.files import write_json_atomic
from attnsvm.interfaces.sweeps.reports import check, json_ready
from attnsvm.interfaces.sweeps.stats import wilson


def vanishing(claim: str, mid: float, final: float, worst: float, tol: float, what: str) -> Report:
    """Proxy of "x_t -> 0" for a residual x >= 0 (1 - corr, 1 - probability) over the second
    half of the horizon: `mid` at H/2, `final` at H, `worst` its largest value on [H/2, H].
    SUPPORTED if worst <= tol (within tolerance throughout the second half); REFUTED if it ends
    above tol and at least twice as large as at H/2 (clearly moving away at the horizon);
    INCONCLUSIVE otherwise (approaching, or a slow drift that a longer horizon may reverse:
    fixed-step GD's corr(p_t, p_mm) dips for thousands of steps before it rises, Figure 1(a))."""
    if worst <= tol:
        verdict = "SUPPORTED"
    elif final > tol and final >= 2 * mid:
        verdict = "REFUTED"
    else:
        verdict = "INCONCLUSIVE"
    return check(claim, verdict, f"{what} {mid:.3g} at H/2 -> {final:.3g} at H, at most {worst:.3g} on [H/2, H] "
                                 f"(tolerance {tol:g})", mid=mid, final=final, worst=worst, tol=tol)


def sign_test(claim: str, k: int, n: int, what: str) -> Report:
    """"In most trials": SUPPORTED if the 95% Wilson interval of k/n lies above 1/2, REFUTED if
    it lies below, INCONCLUSIVE otherwise (or with no trials)."""
    lo, hi = wilson(k, n)
    verdict = "INCONCLUSIVE" if n == 0 else "SUPPORTED" if lo > 0.5 else "REFUTED" if hi < 0.5 else "INCONCLUSIVE"
    return check(claim, verdict, f"{what}: {k} of {n} (95% CI {lo:.3f}..{hi:.3f} vs 1/2)", k=k, n=n)


def finite(x: float | None) -> float | None:
    """A number for strict JSON: inf / nan become None."""
    return None if x is None or not math.isfinite(x) else float(x)


def finish(out: Path, name: str, summary: dict, draw: Callable[[Path], None] | None) -> None:
    """Write `<out>/<name>.json` (strict JSON, atomically) and, with `draw`, `<out>/<name>.png`."""
    write_json_atomic(out / f"{name}.json", json_ready(summary))
    if draw is not None:
        draw(out / f"{name}.png")
