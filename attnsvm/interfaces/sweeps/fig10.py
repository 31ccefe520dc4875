"""Figure 10 of Max-Margin Token Selection (Appendix E): the cumulative distribution of the
minimum score gap of the saturated Figure-9 runs, g = min_i min_{t in T_i} (gamma_{i,alpha_i} -
gamma_it) over the SVM-neighbours T_i of the selected tokens alpha.

The runs are Figure 9's: this module runs (or resumes) `fig9.sweep` into the same directory
(its shards, fig9.json and fig9_runs.json; no fig9.png) and reads its records, so a Figure-9
output directory made with the same settings is reused as it is. The paper's claims:
* the CDF has a sharp transition at 0: negative gaps are rare (Figure 9's bound, < 1% of the
  saturated problems; Figure 10's own number is lost in extraction) -- `stats.upper_bound_check`;
* negative gaps are small: most negative-gap runs have |g| <= `gap_tol` (default 0.05, one bin
  of Figure 9(b)) -- `figures.sign_test` of that fraction against 1/2 (a median test);
* those runs still correlate with their SVM direction p_mm(alpha): mean corr(p_H, p_mm(alpha))
  over them >= 0.99 supports (below 0.9 refutes; in between, or fewer than `min_runs` such
  runs, is inconclusive), the proxy `fig9` uses for the LMM runs.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from attnsvm.interfaces.sweeps import fig9, params
from attnsvm.interfaces.sweeps.figures import finish, sign_test
from attnsvm.interfaces.sweeps.reports import check, with_conditions
from attnsvm.interfaces.sweeps.stats import upper_bound_check

SATURATED = ("lmm", "gmm", "neither")


OPTIONS = {"gap_tol": params.GAP_TOL, "min_runs": params.COUNT}       # fig10's own options beside fig9's settings


def settings(**overrides) -> fig9.Settings:
    """Figure 9's default conventions, with Figure 10's smaller default sweep."""
    return fig9.preset("default", **{"dims": (2, 4, 6, 8, 10, 12, 14, 16), "trials": 250, **overrides})


def summarize(s: fig9.Settings, records: list[dict], gap_tol: float = 0.05, min_runs: int = 5,
              bound: float = 0.01) -> dict:
    runs = [r for r in records if r["cls"] in SATURATED and r["gap"] is not None and math.isfinite(r["gap"])
            and r.get("status") != "non-finite"]                 # overflowed runs are never evidence
    neg = [r for r in runs if r["gap"] < 0]
    small = sum(abs(r["gap"]) <= gap_tol for r in neg)
    corr = [r["corr"] for r in neg if r["corr"] is not None]
    gaps = np.array([r["gap"] for r in runs])
    if len(corr) < min_runs:
        verdict, ev = "INCONCLUSIVE", f"only {len(corr)} negative-gap runs (need {min_runs})"
    else:
        m = float(np.mean(corr))
        verdict = "SUPPORTED" if m >= 0.99 else "REFUTED" if m < 0.9 else "INCONCLUSIVE"
        ev = (f"mean corr(p_H, p_mm(alpha)) {m:.5f} over {len(corr)} negative-gap runs (median {np.median(corr):.5f}, "
              f"min {min(corr):.4f}; proxy: mean >= 0.99)")
    checks = [
        upper_bound_check(f"sharp transition at 0: negative score gaps in < {bound:.0%} of saturated problems",
                          len(neg), len(runs), bound),
        sign_test(f"negative score gaps are small (|g| <= {gap_tol:g})", small, len(neg),
                  f"|g| <= {gap_tol:g} in most negative-gap runs (median |g| "
                  + (f"{np.median(np.abs([r['gap'] for r in neg])):.4f}" if neg else "-")
                  + (f"; for scale: median positive gap {np.median(gaps[gaps > 0]):.4f}, "
                     f"{np.mean(gaps[gaps > 0] <= gap_tol):.0%} of positive gaps <= {gap_tol:g})"
                     if (gaps > 0).any() else ")")),
        check("negative-gap runs still correlate with their SVM direction p_mm(alpha)", verdict, ev),
    ]
    conditions = (f"{s.trials} trials per d in {list(s.dims)}, n={s.n}, T={s.T}, {s.describe()}, seed {s.seed}; "
                  f"negative-gap correlation proxy needs >= {min_runs} runs")
    qs = (0.01, 0.05, 0.25, 0.5, 0.75, 0.95)
    per_d = [{"d": d, "saturated": sum(r["d"] == d for r in runs), "negative": sum(r["d"] == d for r in neg)}
             for d in s.dims]
    return {"settings": {**s.to_json(), "gap_tol": gap_tol, "min_runs": min_runs, "bound": bound},
            "saturated": len(runs), "negative": len(neg), "per_d": per_d,
            "quantiles": {f"{q:g}": float(np.quantile(gaps, q)) for q in qs} if len(gaps) else {},
            "negative_runs": [{k: r[k] for k in ("d", "trial", "gap", "corr", "certified")} for r in neg],
            "checks": with_conditions(checks, conditions)}


def plot(s: fig9.Settings, summary: dict, records: list[dict], path: Path) -> None:
    """(a) the empirical CDF of g over all saturated runs (dashed line at g = 0, as the paper)
    with a zoom around 0; (b) 1 - corr(p_H, p_mm(alpha)) against g, negative gaps in red."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from attnsvm.files import write_atomic

    runs = [r for r in records if r["cls"] in SATURATED and r["gap"] is not None and math.isfinite(r["gap"])]
    gaps = np.sort([r["gap"] for r in runs])
    fig = Figure(figsize=(15, 4.4), layout="constrained")       # (as fig9: no torch, no pyplot)
    FigureCanvasAgg(fig)
    ax1, ax2, ax3 = fig.subplots(1, 3)
    cdf = np.arange(1, len(gaps) + 1) / max(len(gaps), 1)
    for ax, title in ((ax1, "(a) CDF of the minimum score gap"), (ax2, "(b) zoom around g = 0")):
        ax.step(gaps, cdf, where="post", color="tab:blue", lw=1.8)
        ax.axvline(0, color="gray", ls="--", lw=1.2)
        ax.set(xlabel="minimum score gap g", ylabel="P(gap <= g)", title=title)
        ax.grid(alpha=0.3)
    ax2.set_xlim(-0.2, 0.2)
    ax2.set_ylim(0, max(0.05, 3 * summary["negative"] / max(len(gaps), 1)))
    g = np.array([r["gap"] for r in runs])
    c = np.array([1 - r["corr"] if r["corr"] is not None else np.nan for r in runs])
    neg = g < 0
    ax3.scatter(g[~neg], np.maximum(c[~neg], 1e-16), s=6, color="tab:blue", alpha=0.4, label="g > 0 (LMM)")
    ax3.scatter(g[neg], np.maximum(c[neg], 1e-16), s=18, color="tab:red", label=f"g < 0: {neg.sum()} runs")
    ax3.set_yscale("log")
    ax3.axhline(0.01, color="gray", ls=":", lw=1, label="corr 0.99")
    ax3.set(xlabel="minimum score gap g", ylabel="1 - corr(p_H, p_mm(alpha))", title="(c) alignment with p_mm(alpha)")
    ax3.grid(alpha=0.3)
    ax3.legend(fontsize=8)
    fig.suptitle(f"Figure 10: {summary['saturated']} saturated runs of Figure 9 (n={s.n}, T={s.T}, d in "
                 f"{list(s.dims)}, {s.trials} trials per d, seed {s.seed})", fontsize=9)
    buf = io.BytesIO()
    fig.savefig(buf, dpi=110, format="png")
    write_atomic(path, buf.getvalue())


def sweep(s: fig9.Settings, out: Path, executor=None, on_done=None, draw: bool = True, gap_tol: float = 0.05,
          min_runs: int = 5, bound: float = 0.01) -> tuple[dict, list[dict]]:
    """Figure 9's sweep into `out` (resumed if there), then fig10.json and fig10.png."""
    out = Path(out)
    _, records = fig9.sweep(s, out, executor, on_done, draw=False)
    summary = summarize(s, records, gap_tol, min_runs, bound)
    finish(out, "fig10", summary, (lambda p: plot(s, summary, records, p)) if draw else None)
    return summary, records
