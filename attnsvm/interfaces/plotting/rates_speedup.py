"""Rate curves of paper C (`attnsvm plot rates-speedup`): on seeded self-attention instances in
a covered setting (n = 1, Assumption B: v = e_1, the score in the first coordinate), GD with
eta = 1/L_p, normalized GD (eta 0.5) and Polyak (f_star = L_inf) run side by side from one random
start; left 1 - corr(W_t, W_mm), right the softmax mass off the optimal tokens, both against t
on log scales."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnsvm import dynamics
from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.claims import get_budget
from attnsvm.dynamics import cross
from attnsvm.dynamics.trends import loglog_slope
from attnsvm.interfaces.plotting.common import save_png
from attnsvm.svm import w_svm

RULES = (("GD (eta = 1/L_p)", "tab:blue"), ("NGD (eta = 0.5)", "tab:orange"), ("Polyak (f* = L_inf)", "tab:green"))
LEVEL = 0.99


def assumption_b_dataset(seed: int, T: int = 4, d: int = 3, gap: float = 1.0) -> Dataset:
    """n = 1, Gaussian tokens; v = e_1 and x_t[0] = score: the optimal token scores `gap` above
    the others, which share one score (Assumption B)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(1, T, d))
    X[0, :, 0] = 0.0
    X[0, int(rng.integers(T)), 0] = gap
    return Dataset.from_arrays(X, [1], np.eye(d)[0], name=f"assumption-B-seed{seed}")


def plot(out: Path, seed: int = 0, budget: str = "quick", instances: int = 3) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    steps = int(500 * get_budget(budget).horizon)
    fig, (ax_c, ax_m) = plt.subplots(1, 2, figsize=(10, 4))
    summary = []
    for k in range(instances):
        ds = assumption_b_dataset(seed + k)
        target = w_svm(ds, model.optimal_tokens(ds))
        if not target.ok:
            continue
        eta_gd = 1.0 / float(cross.smoothness([ds])[0])
        rules = (dynamics.GD(eta_gd), dynamics.NormalizedGD(0.5), dynamics.Polyak("infimum"))
        W0 = np.random.default_rng(seed + k).normal(size=ds.d * ds.d)
        tr = dynamics.run(cross.w_problem([ds] * 3), dynamics.PerInstance(rules), W0, steps, every=1)
        c = cross.alignment_curves([ds] * 3, tr, target.x, model.optimal_tokens(ds))
        t = np.asarray(tr.steps[1:], dtype=float)
        row = {"dataset": ds.name, "gd_eta": eta_gd}
        for b, (label, color) in enumerate(RULES):
            kw = dict(color=color, alpha=0.85, lw=1.2, label=label if k == 0 else None)
            ax_c.loglog(t, np.clip(c["gap"][1:, b], 1e-17, None), **kw)
            ax_m.loglog(t, np.clip(c["off_mass"][1:, b], 1e-300, None), **kw)
            name = label.split()[0].lower()
            row[name] = {"iterations_to_corr_0.99": cross.first_step_at_least(tr.steps, 1 - c["gap"][:, b], LEVEL),
                         "rate_gap_loglog": loglog_slope(tr.steps, c["gap"][:, b], floor=1e-14, min_points=3),
                         "final_off_mass": float(c["off_mass"][-1, b])}
        summary.append(row)
    ax_c.axhline(1 - LEVEL, color="gray", ls=":", lw=0.8)
    ax_c.set(xlabel="iteration t", ylabel="1 - corr(W_t, W_mm)", title="directional convergence")
    ax_m.set(xlabel="iteration t", ylabel="mean softmax mass off opt", title="attention sparsification")
    ax_m.set_ylim(top=2.0)
    ax_c.legend(fontsize=8)
    fig.suptitle(f"n = 1, Assumption B, {len(summary)} seeded instances (seed {seed}), {steps} steps", fontsize=9)
    fig.tight_layout()
    save_png(fig, out)
    plt.close(fig)
    iters = {r: [row[r]["iterations_to_corr_0.99"] for row in summary] for r in ("gd", "ngd", "polyak")}
    return {"instances": summary, "iterations_to_corr_0.99": iters,
            "summary": f"iterations to corr {LEVEL}: " + ", ".join(f"{r} {v}" for r, v in iters.items())}
