"""Figure 4 of Max-Margin Token Selection (Section 4, "Sparsity of softmax"): normalized GD
saturates the softmax faster than fixed-step GD, whose norm ||p_t|| levels off (vanishing
gradients), while normalized GD's keeps growing.

Data: Figure 1(c)'s model (`fig1.multi_input`: n = 3, T = 7, scores 1 and 1/2), one dataset per
trial from its own stream (seed, trial); p0 = 0 (the authors' plotted start); the authors'
rules: normalized GD lr 0.1 (p - 0.1 g/||g||) and GD lr 1, both batched over the trials of a
shard. The curve of Figure 4(a) is mean_i s_{i,opt} (softmax probability of the optimal
tokens), of Figure 4(b) ||p_t||; the horizon H = `steps` defaults to the figure's 200 iterations.

Proxies, per trial, then a sign test over trials (`figures.sign_test`: the 95% Wilson interval
of the fraction against 1/2):
* faster saturation: NGD reaches mean_i s_{i,opt} >= `level` at an earlier step than GD (GD
  never reaching it within H counts as later; neither reaching it does not count for NGD);
* levelling off: GD's norm grows over [H/2, H] by less than half of its growth over [0, H/2]
  (rho_GD < 1/2; linear growth has rho = 1, logarithmic growth far less), while NGD's does not
  (rho_NGD >= 1/2).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from attnsvm.interfaces.plotting.common import save_png
from attnsvm.interfaces.sweeps import params
from attnsvm.interfaces.sweeps.figures import finish, finite, sign_test
from attnsvm.interfaces.sweeps.reports import with_conditions
from attnsvm.interfaces.sweeps.shards import Shard, run_sweep

RULES = ("ngd", "gd")


@dataclass(frozen=True)
class Settings:
    trials: int = 50
    steps: int = 200
    ngd_lr: float = 0.1
    gd_lr: float = 1.0
    level: float = 0.99
    seed: int = 0
    shard_size: int = 25

    PARAMS: ClassVar[dict] = {
        "trials": params.COUNT, "steps": params.HORIZON, "ngd_lr": params.STEP, "gd_lr": params.STEP,
        "seed": params.SEED, "shard_size": params.COUNT,
        "level": params.Interval(float, 0.5, 1, closed="left", why_low="a softmax mass below 1/2 selects nothing")}

    def __post_init__(self):
        params.validate(self)

    def to_json(self) -> dict:
        return asdict(self)

    def shards(self) -> list[Shard]:
        return [Shard(f"t{a:05d}-{min(self.trials, a + self.shard_size):05d}",
                      {"start": a, "stop": min(self.trials, a + self.shard_size)})
                for a in range(0, self.trials, self.shard_size)]

    def describe(self) -> str:
        return (f"{self.trials} random Figure-1(c) datasets (seed {self.seed}), p0 = 0, H = {self.steps} steps, "
                f"NGD lr {self.ngd_lr:g} vs GD lr {self.gd_lr:g}, saturation level {self.level:g}")


def datasets(s: Settings, trials) -> list:
    from attnsvm.interfaces.sweeps.fig1 import multi_input

    return [multi_input(np.random.default_rng([s.seed, 4, t]), name=f"Figure 4 trial {t}") for t in trials]


def run_shard(settings: dict, shard: Shard) -> dict:
    """Both rules on all trials of the shard: mean_i s_{i,opt} and ||p_t|| at every step."""
    from attnsvm import dynamics

    s = Settings(**settings)
    trials = range(shard.params["start"], shard.params["stop"])
    prob = dynamics.Problem.from_datasets(datasets(s, trials))
    K = prob.K.cpu().numpy()
    curves = {}
    for name, rule in (("ngd", dynamics.NormalizedGD(s.ngd_lr)), ("gd", dynamics.GD(s.gd_lr))):
        tr = dynamics.run(prob, rule, np.zeros(K.shape[-1]), s.steps, every=1)
        P = tr.p.cpu().numpy()                                            # (H+1, B, d)
        a = np.einsum("bntd,rbd->rbnt", K, P)
        a -= a.max(-1, keepdims=True)
        sopt = (np.exp(a[..., 0]) / np.exp(a).sum(-1)).mean(-1)          # optimal token first (multi_input)
        curves[name] = (sopt, np.linalg.norm(P, axis=-1), tr.status)
    records = []
    for b, t in enumerate(trials):
        rec = {"trial": t}
        for name, (sopt, norms, status) in curves.items():
            hit = np.flatnonzero(sopt[:, b] >= s.level)
            rec[name] = {"softmax": sopt[:, b].tolist(), "norm": norms[:, b].tolist(), "status": status[b],
                         "hit": int(hit[0]) if hit.size else None}
        records.append(rec)
    return {"records": records}


def rho(norm: list[float]) -> float:
    """Growth of ||p_t|| over [H/2, H] over its growth over [0, H/2]."""
    H, h = len(norm) - 1, (len(norm) - 1) // 2
    first = norm[h] - norm[0]
    return (norm[H] - norm[h]) / first if first > 0 else float("inf")


def _step(x: float | None) -> str:
    return "not reached" if x is None else f"{x:g}"


def summarize(s: Settings, records: list[dict]) -> dict:
    first = lambda a, b: a is not None and (b is None or a < b)     # a reaches the level at an earlier step than b
    faster = [first(r["ngd"]["hit"], r["gd"]["hit"]) for r in records]
    slower = [first(r["gd"]["hit"], r["ngd"]["hit"]) for r in records]
    decisive = sum(faster) + sum(slower)          # ties and trials where neither reached the level are no evidence
    rg, rn = [rho(r["gd"]["norm"]) for r in records], [rho(r["ngd"]["norm"]) for r in records]
    levels = [a < 0.5 <= b for a, b in zip(rg, rn)]
    hits = {k: [r[k]["hit"] for r in records] for k in RULES}
    reached = {k: [h for h in v if h is not None] for k, v in hits.items()}
    med = lambda xs: float(np.median(xs)) if xs else None
    checks = [
        sign_test("normalized GD saturates the softmax faster than GD (Figure 4(a))", sum(faster), decisive,
                  f"NGD first reaches mean_i s_i,opt >= {s.level:g} earlier (median first step NGD "
                  f"{_step(med(reached['ngd']))}, GD {_step(med(reached['gd']))}; NGD reached it in "
                  f"{len(reached['ngd'])}, GD in {len(reached['gd'])} of {len(records)} within H; "
                  f"{len(records) - decisive} trials tied or neither reached it, not counted)"),
        sign_test("GD's norm levels off while normalized GD's keeps growing (Figure 4(b))", sum(levels), len(records),
                  f"rho_GD < 1/2 <= rho_NGD (median rho_GD {np.median(rg):.3f}, rho_NGD {np.median(rn):.3f}; "
                  f"median ||p_H|| GD {np.median([r['gd']['norm'][-1] for r in records]):.2f}, "
                  f"NGD {np.median([r['ngd']['norm'][-1] for r in records]):.2f})"),
    ]
    curves = {}
    for k in RULES:
        for key in ("softmax", "norm"):
            M = np.array([r[k][key] for r in records])
            curves[f"{k}:{key}"] = {"mean": M.mean(0).tolist(), "min": M.min(0).tolist(), "max": M.max(0).tolist()}
    rows = [{"rule": k, "median_hit": med(reached[k]), "reached": len(reached[k]),
             "median_softmax_H": float(np.median([r[k]["softmax"][-1] for r in records])),
             "median_norm_H": float(np.median([r[k]["norm"][-1] for r in records])),
             "median_rho": finite(float(np.median(rg if k == "gd" else rn)))} for k in RULES]
    return {"settings": s.to_json(), "rows": rows, "curves": curves, "checks": with_conditions(checks, s.describe())}


def plot(s: Settings, summary: dict, records: list[dict], path: Path) -> None:
    """(a) mean_i s_{i,opt} and (b) ||p_t|| against t: trial 0 bold (the paper's single run), the
    range over all trials shaded; red normalized GD, blue GD (the paper's colours)."""
    from attnsvm.interfaces.plotting.common import new_figure

    fig, (ax1, ax2) = new_figure(2, (11, 4.2))
    t = np.arange(s.steps + 1)
    for k, color, label in (("ngd", "tab:red", f"normalized GD (lr {s.ngd_lr:g})"),
                            ("gd", "tab:blue", f"GD (lr {s.gd_lr:g})")):
        for ax, key in ((ax1, "softmax"), (ax2, "norm")):
            c = summary["curves"][f"{k}:{key}"]
            ax.fill_between(t, c["min"], c["max"], color=color, alpha=0.15, lw=0)
            ax.plot(t, records[0][k][key], color=color, lw=2.5, label=label)
    ax1.axhline(s.level, color="gray", ls=":", lw=1, label=f"level {s.level:g}")
    ax1.set(xlabel="iterations", ylabel="softmax probability mean_i s_i,opt", title="(a) softmax saturation")
    ax2.set(xlabel="iterations", ylabel="attention norm ||p_t||", title="(b) norm growth")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"Figure 4: trial 0 bold, range over {s.trials} trials shaded (seed {s.seed})", fontsize=9)
    save_png(fig, path)


def sweep(s: Settings, out: Path, executor=None, on_done=None, draw: bool = True) -> tuple[dict, list[dict]]:
    """Run (or resume) into `out`: shards/, fig4.json, fig4.png."""
    out = Path(out)
    _, records = run_sweep("fig4", s, run_shard, out, executor, on_done)
    summary = summarize(s, records)
    finish(out, "fig4", summary, (lambda p: plot(s, summary, records, p)) if draw else None)
    return summary, records
