"""Figure 3(c) of Max-Margin Token Selection (Section 3): in joint (v, p) training with the
logistic loss, the mean softmax probability of the optimal tokens, mean_i s_{i,opt}, and the
mean logistic probability, mean_i sigmoid(Y_i f(X_i)), both tend to 1.

Data (paper A, Section 3, Figure 3; the authors' joint-training notebook): n = 3, T = 2, d = 2,
W = I, inputs [(0,0),(1,1)], [(0,0),(1,-1)], [(0,0),(0.5,1)], labels (1,-1,1), the optimal token
of every input its second; start v0 = (-1, 0), p0 = (0, -1); the authors' step: lr 0.1 on each
block's gradient normalised separately (`dynamics.BlockNormalizedGD` on `dynamics.vp_joint`).
Figure 3(b)'s data (last token moved to (0.5, 1.5), Theorem 6's case) run beside it and are
reported; the verdicts are on Figure 3(c)'s own data, (a). Deterministic: no random draws.

Proxy of "tends to 1": 1 - probability stays at most `tol` over the second half [H/2, H] of the
horizon (`figures.vanishing`); the paper plots the first 200 iterations (`window`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from attnsvm.interfaces.plotting.common import save_png
from attnsvm.interfaces.sweeps import params
from attnsvm.interfaces.sweeps.figures import finish, vanishing
from attnsvm.interfaces.sweeps.reports import with_conditions
from attnsvm.interfaces.sweeps.shards import Shard, run_sweep

DATA = {"a": [[[0, 0], [1, 1]], [[0, 0], [1, -1]], [[0, 0], [0.5, 1]]],
        "b": [[[0, 0], [1, 1]], [[0, 0], [1, -1]], [[0, 0], [0.5, 1.5]]]}
LABELS = [1.0, -1.0, 1.0]
OPT = [1, 1, 1]
V0, P0 = [-1.0, 0.0], [0.0, -1.0]


@dataclass(frozen=True)
class Settings:
    steps: int = 1000
    lr: float = 0.1
    tol: float = 1e-6
    window: int = 200

    PARAMS: ClassVar[dict] = {"steps": params.HORIZON, "lr": params.STEP, "tol": params.TOL, "window": params.COUNT}
    RELATIONS: ClassVar[tuple] = (params.Relation("window", "<=", "steps"),)

    def __post_init__(self):
        params.validate(self)

    def to_json(self) -> dict:
        return asdict(self)

    def shards(self) -> list[Shard]:
        return [Shard("joint", {"datasets": sorted(DATA)})]

    def describe(self) -> str:
        return (f"{self.steps} steps of lr {self.lr:g} on each block's normalised gradient from v0 = {V0}, p0 = {P0}; "
                f"proxy: 1 - probability <= {self.tol:g} throughout [H/2, H], H = {self.steps}; deterministic data")


def run_shard(settings: dict, shard: Shard) -> dict:
    """Both datasets in one batched run; the two curves at every step."""
    from attnsvm import dynamics
    from attnsvm.dynamics.vp_joint import VPProblem

    s = Settings(**settings)
    names = shard.params["datasets"]
    prob = VPProblem.from_arrays(np.array([DATA[k] for k in names], dtype=float), np.array([LABELS] * len(names)))
    tr = dynamics.run(prob, dynamics.BlockNormalizedGD(s.lr, (2, 2)), np.array(V0 + P0), s.steps, every=1)
    off, miss = prob.complements(tr.p, OPT)
    records = [{"dataset": k, "status": tr.status[b], "off_mass": off[:, b].tolist(),
                "misclassification": miss[:, b].tolist(),
                "v": tr.p[-1, b, :2].tolist(), "p": tr.p[-1, b, 2:].tolist(),
                "path_v": tr.p[:s.window + 1, b, :2].tolist(), "path_p": tr.p[:s.window + 1, b, 2:].tolist()}
               for b, k in enumerate(names)]
    return {"records": records}


def summarize(s: Settings, records: list[dict]) -> dict:
    a = next(r for r in records if r["dataset"] == "a")
    H, h = s.steps, s.steps // 2
    checks = [vanishing("softmax probability of the optimal tokens tends to 1 (Figure 3(c), red)",
                        a["off_mass"][h], a["off_mass"][H], max(a["off_mass"][h:]), s.tol, "1 - mean_i s_{i,opt}"),
              vanishing("logistic probability of the outputs tends to 1 (Figure 3(c), blue)",
                        a["misclassification"][h], a["misclassification"][H], max(a["misclassification"][h:]), s.tol,
                        "1 - mean_i sigmoid(Y_i f_i)")]
    rows = [{"dataset": r["dataset"], "status": r["status"],
             **{f"softmax@{t}": 1 - r["off_mass"][t] for t in (s.window, H)},
             **{f"logistic@{t}": 1 - r["misclassification"][t] for t in (s.window, H)},
             "off_mass@H": r["off_mass"][H], "misclassification@H": r["misclassification"][H],
             "v": r["v"], "p": r["p"]} for r in records]
    return {"settings": s.to_json(), "rows": rows, "checks": with_conditions(checks, s.describe())}


def plot(s: Settings, records: list[dict], path: Path) -> None:
    """Left: the paper's view (both probabilities over the first `window` iterations, data (a));
    right: 1 - probability on a log scale over the whole horizon, both datasets."""
    from attnsvm.interfaces.plotting.common import new_figure

    fig, (ax1, ax2) = new_figure(2, (11, 4.2))
    a = next(r for r in records if r["dataset"] == "a")
    t = np.arange(s.window + 1)
    ax1.plot(t, 1 - np.array(a["off_mass"][:s.window + 1]), color="tab:red", lw=2.5,
             label="softmax prob. (mean_i s_i,opt)")
    ax1.plot(t, 1 - np.array(a["misclassification"][:s.window + 1]), color="tab:blue", lw=2.5,
             label="logistic prob. (mean_i sigmoid(Y_i f_i))")
    ax1.set(xlabel="iterations", ylabel="probabilities", title="Figure 3(c): joint (v, p) training, data (a)")
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=8, loc="lower right")
    T = np.arange(1, s.steps + 1)
    for r, style in zip(records, ("-", "--")):
        ax2.semilogy(T, np.maximum(r["off_mass"][1:], 1e-300), style, color="tab:red",
                     label=f"1 - softmax prob., data ({r['dataset']})")
        ax2.semilogy(T, np.maximum(r["misclassification"][1:], 1e-300), style, color="tab:blue",
                     label=f"1 - logistic prob., data ({r['dataset']})")
    ax2.axhline(s.tol, color="gray", ls=":", lw=1, label=f"tolerance {s.tol:g}")
    ax2.set(xlabel="iterations", ylabel="1 - probability (log)", title="the whole horizon; (b) = Figure 3(b)'s data")
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=7)
    save_png(fig, path)


def sweep(s: Settings, out: Path, executor=None, on_done=None, draw: bool = True) -> tuple[dict, list[dict]]:
    """Run (or resume) into `out`: shards/, fig3c.json, fig3c.png."""
    out = Path(out)
    _, records = run_sweep("fig3c", s, run_shard, out, executor, on_done)
    summary = summarize(s, records)
    finish(out, "fig3c", summary, (lambda p: plot(s, records, p)) if draw else None)
    return summary, records
