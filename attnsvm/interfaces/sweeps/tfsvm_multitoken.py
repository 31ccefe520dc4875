"""Multi-token convergence with a nonlinear head (Transformers as SVMs, docs/statements.md#tfsvm-mlp;
the authors' multi_token_converge.ipynb): n = 3, T = 4, d in {4, 6, 8, 10}, the head
h(x) = 1^T ReLU(V^T x) (`heads.ReLUHead`, V random of unit Frobenius norm), cross-attention with
random unit queries, W trained by normalized GD (lr 0.1, 2001 steps), all trials of a shard
advancing together through `dynamics.run` on `cross.HeadProblem`; W recorded every 100 steps.

Data: the notebook's generator (`notebooks.multitoken_data`), generator seed = seed + trial
(the notebook starts at 1); a draw with no label -1 is skipped untrained, as the notebook does.
The notebook draws seeds until 500 runs are kept; here `trials` seeds are drawn per d and the
kept runs reported (the same runs as the notebook's first ones from those seeds).

Per run, at the final iterate (the notebook's rules): a softmax value in (1e-6, 1e-3] discards
it ("discarded"); no value at or below 1e-6 leaves it "finite"; else O_i = {t : s_it >= 1e-3} are
the selected sets and three SVM directions are compared with W_t at every recorded step:
W^mm = the generalized SVM of the sets (`cross.generalized_w_svm`: 1 on the mask, 0 within
sets); W^SVMeq = W_fin + R W^mm with W_fin the minimum-norm W reproducing the final softmax's
within-set log-ratios (the projection of W_H on the within-set rows' span) and R by least
squares against W_H, the notebook's construction; W^1tok = W_mm of the argmax tokens. A run whose
SVMs fail is "infeasible". The scatter pairs the largest softmax value off the sets with
1 - corr(W_H, W^SVMeq).

Authors' conventions: W initialised as torch's linear layer (uniform in +-1/sqrt(d)), the step
g/(||g|| + eps), the float64 autograd gradient (`authors.AutogradHeadProblem`) and their cvxpy
procedures (`notebooks.svm_equivalence`, `notebooks.w_svm_solver`).

Checks: GD converges in direction to W^SVMeq (1 - mean corr within 0.01 over [H/2, H] at every
d); W^SVMeq predicts W_H better than the single-token SVM (paired sign test over kept runs);
the head selects several tokens (some kept run has a set of two or more); predictivity improves
as the mass off the sets vanishes (Spearman correlation of the scatter's logarithms, |z| > 3).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from attnsvm.dynamics import authors as authors_numerics
from attnsvm.interfaces.sweeps import notebooks, params
from attnsvm.interfaces.sweeps.figures import finish, finite, sign_test, vanishing
from attnsvm.interfaces.sweeps.reports import check, every, with_conditions
from attnsvm.interfaces.sweeps.shards import Shard, run_sweep
from attnsvm.interfaces.sweeps.stats import Z
from attnsvm.svm import geometry

TOL = 0.01              # 1 - corr within this over [H/2, H]: converged in direction (as fig1-fig5)
STATES = ("kept", "discarded", "finite", "infeasible", "no-negative-label")


@dataclass(frozen=True)
class Settings:
    n: int = 3
    T: int = 4
    dims: tuple[int, ...] = (4, 6, 8, 10)
    trials: int = 500
    steps: int = 2001
    lr: float = 0.1
    every: int = 100
    init_scale: float = 0.01
    seed: int = 1
    shard_size: int = 125
    init: str = "normal"              # normal: N(0, init_scale^2) | uniform: torch's Linear
    norm_eps: float = 0.0             # g / (||g|| + norm_eps)
    gradient: str = "log-domain"      # log-domain (cancellation-free) | naive (float64 autograd)
    solver: str = "library"           # library: quadprog + exact least squares | authors: their cvxpy

    PARAMS: ClassVar[dict] = {
        "n": params.COUNT, "T": params.TOKENS, "dims": params.Each(params.COUNT), "trials": params.COUNT,
        "steps": params.HORIZON, "lr": params.STEP, "every": params.COUNT, "init_scale": params.INIT_SCALE,
        "seed": params.SEED, "shard_size": params.COUNT, "init": params.INIT, "norm_eps": params.EPS,
        "gradient": params.GRADIENT, "solver": params.SOLVER}
    RELATIONS: ClassVar[tuple] = (params.Relation("every", "<=", "steps"),)
    FLAGS: ClassVar[dict] = {"dims": "d"}

    def __post_init__(self):
        params.validate(self)

    def size(self) -> tuple[str, int]:
        d = max(self.dims)
        per_run = self.n * self.T * d + 2 * d * d
        return "--shard-size x (n x T x d + 2 d^2)", min(self.shard_size, self.trials) * per_run

    def to_json(self) -> dict:
        return {**asdict(self), "dims": list(self.dims)}

    def shards(self) -> list[Shard]:
        return [Shard(f"d{d:03d}-t{a:05d}-{min(self.trials, a + self.shard_size):05d}",
                      {"d": d, "start": a, "stop": min(self.trials, a + self.shard_size)})
                for d in self.dims for a in range(0, self.trials, self.shard_size)]

    def describe(self) -> str:
        step = f"lr {self.lr:g} on g/(||g||+{self.norm_eps:.3g})" if self.norm_eps else f"lr {self.lr:g}"
        return (f"n={self.n}, T={self.T}, {self.trials} seeds per d from {self.seed}, {self.steps} NGD steps {step}, "
                f"{self.init} init, {self.gradient} gradient, {self.solver} SVM solves")


CONVENTIONS = {"default": {},
               "authors": {"init": "uniform", "norm_eps": authors_numerics.EPS, "gradient": "naive",
                           "solver": "authors"}}


def preset(conventions: str, **kw) -> Settings:
    """Settings under the `conventions` (default | authors); `kw` sets the rest."""
    return params.preset(Settings, CONVENTIONS, conventions, **kw)


def start(s: Settings, d: int, trial: int) -> np.ndarray:
    """vec(W_0) of a trial, from its own stream (seed, d, trial)."""
    if s.init == "uniform":
        return notebooks.linear_init(np.random.default_rng([s.seed, d, trial, 1]), d, d * d)
    return s.init_scale * np.random.default_rng([s.seed, d, trial]).standard_normal(d * d)


def train(s: Settings, draws: list, W0: np.ndarray):
    """One batched run of all draws: (HeadProblem, Trajectory)."""
    import torch

    from attnsvm import dynamics
    from attnsvm.attention.heads import ReLUHead
    from attnsvm.attention.losses import get_loss
    from attnsvm.dynamics import cross

    t = lambda a: torch.as_tensor(np.stack(a), dtype=torch.float64)
    prob = cross.HeadProblem(t([x.X for x in draws]), t([x.Z for x in draws]), t([x.Y for x in draws]),
                             ReLUHead(np.stack([x.v for x in draws])), get_loss("logistic"))
    d = draws[0].X.shape[-1]
    rule = (authors_numerics.EpsNormalizedGD(s.lr, (d * d,), s.norm_eps) if s.norm_eps else
            dynamics.NormalizedGD(s.lr))
    run_prob = authors_numerics.AutogradHeadProblem(prob) if s.gradient == "naive" else prob
    return prob, dynamics.run(run_prob, rule, W0, s.steps, every=s.every)


def directions(s: Settings, x: notebooks.Draw, soft: np.ndarray, w: np.ndarray) -> dict | None:
    """The three SVM directions (flattened) of a run with final softmax `soft` (n, T) and final
    vec(W) `w`, or None where a solve fails (their caller's `except: continue`)."""
    d = x.X.shape[-1]
    single = soft.argmax(-1)
    if s.solver == "authors":
        try:
            W_dir, W_eq = notebooks.svm_equivalence(x.X, x.Z, soft, w.reshape(d, d))
            W_one = notebooks.w_svm_solver(x.X, x.Z, single, fro=True)[0]
            if W_one is None:
                return None
        except Exception:
            return None
        return {"mm": np.ravel(W_dir), "svmeq": np.ravel(W_eq), "single": np.ravel(W_one)}
    from attnsvm import svm
    from attnsvm.attention.data import Dataset
    from attnsvm.dynamics import cross

    sets = [np.flatnonzero(row >= notebooks.SET_THRESHOLD).tolist() for row in soft]
    res, N, E = cross.generalized_w_svm(Dataset.from_arrays(x.X, x.Y, np.ones(d), z=x.Z), sets)
    one = svm.w_svm_arrays(x.X, x.Z, single)
    if not (res.ok and one.ok):
        return None
    mm = N @ res.x
    fin = np.linalg.lstsq(E, E @ w, rcond=None)[0] if len(E) else np.zeros_like(w)   # min-norm, the logits' ratios
    R = float((w - fin) @ mm / (mm @ mm))
    return {"mm": mm, "svmeq": fin + R * mm, "single": one.x}


def classify(soft: np.ndarray) -> str:
    """The notebook's rule on the final softmax (n, T): discarded, finite or kept (so far)."""
    hi, lo = notebooks.BAND
    if ((soft > lo) & (soft <= hi)).any():
        return "discarded"
    return "kept" if (soft <= lo).any() else "finite"


def run_shard(settings: dict, shard: Shard) -> dict:
    warnings.filterwarnings("ignore", module="cvxpy")
    import torch

    s = params.from_json(Settings, settings)
    d, trials = shard.params["d"], range(shard.params["start"], shard.params["stop"])
    draws = {t: notebooks.multitoken_data(s.seed + t, s.n, s.T, d) for t in trials}
    recs = {t: {"d": d, "trial": t, "seed": s.seed + t, "state": "no-negative-label"}
            for t, x in draws.items() if not (x.Y == -1).any()}
    runs = [t for t in trials if t not in recs]
    steps = None
    if runs:
        prob, tr = train(s, [draws[t] for t in runs], np.stack([start(s, d, t) for t in runs]))
        steps = tr.steps
        soft = torch.softmax(prob.logits(tr.final), -1).numpy()
        P = tr.p.numpy()
        for b, t in enumerate(runs):
            rec = {"d": d, "trial": t, "seed": s.seed + t, "status": tr.status[b], "state": classify(soft[b])}
            if rec["state"] == "kept":
                sel = soft[b] >= notebooks.SET_THRESHOLD
                rec["sets"] = [np.flatnonzero(row).tolist() for row in sel]
                rec["masked_max"] = float(np.where(sel, 0.0, soft[b]).max())
                dirs = directions(s, draws[t], soft[b], P[-1, b])
                if dirs is None:
                    rec["state"] = "infeasible"
                else:
                    for k, q in dirs.items():
                        rec[f"corr_{k}"] = [geometry.corr(row, q) for row in P[:, b]]
            recs[t] = rec
    return {"steps": steps, "records": [recs[t] for t in trials]}


def _trusted(r: dict) -> bool:
    return r["state"] == "kept" and r["status"] != "non-finite"


def _spearman(x, y) -> tuple[float, float]:
    """Spearman's rho and its Fisher z (sqrt((N - 3) / 1.06) atanh rho); (nan, nan) below 4 points."""
    from scipy.stats import spearmanr

    if len(x) < 4:
        return math.nan, math.nan
    rho = float(spearmanr(x, y).statistic)
    if not math.isfinite(rho):
        return math.nan, math.nan
    return rho, math.atanh(max(-0.999999, min(0.999999, rho))) * math.sqrt((len(x) - 3) / 1.06)


def summarize(s: Settings, steps: list[int], records: list[dict]) -> dict:
    steps_a = np.asarray(steps)
    half = steps_a >= steps_a[-1] / 2
    mid = int(np.argmax(half))
    rows, conv = [], []
    for d in s.dims:
        rs = [r for r in records if r["d"] == d]
        kept = [r for r in rs if _trusted(r)]
        row = {"d": d, "seeds": len(rs), **{st: sum(r["state"] == st for r in rs) for st in STATES},
               "non_finite": sum(r.get("status") == "non-finite" for r in rs),
               "multi_token": sum(max(map(len, r["sets"])) > 1 for r in kept)}
        for k in ("svmeq", "mm", "single"):
            row[f"1-corr_{k}"] = ([finite(1 - float(np.mean([r[f"corr_{k}"][j] for r in kept])))
                                   for j in range(len(steps))] if kept else None)
        rows.append(row)
        res = row["1-corr_svmeq"]
        conv.append(None if res is None else
                    vanishing(f"d={d}", res[mid], res[-1], max(res[j] for j in range(len(steps)) if half[j]), TOL,
                              "1 - mean corr(W_t, W^SVMeq)"))
    kept = [r for r in records if _trusted(r)]
    first = every(None if c is None else c.verdict for c in conv)
    per_d = "; ".join(f"d={d}: " + ("no kept run" if c is None else f"{c.evidence['summary']} ({c.verdict})")
                      for d, c in zip(s.dims, conv))
    better = [r for r in kept if r["corr_svmeq"][-1] != r["corr_single"][-1]]
    multi = sum(max(map(len, r["sets"])) > 1 for r in kept)
    pts = [(math.log10(max(r["masked_max"], 1e-300)), math.log10(max(1 - r["corr_svmeq"][-1], 1e-300))) for r in kept]
    rho, z = _spearman(*zip(*pts)) if len(pts) >= 4 else (math.nan, math.nan)
    checks = [
        check("GD on W converges in direction to the SVM-equivalence W^SVMeq = W_fin + R W^mm (every d)", first,
              per_d),
        sign_test("W^SVMeq predicts the GD iterate better than the single-token SVM W^1tok",
                  sum(r["corr_svmeq"][-1] > r["corr_single"][-1] for r in better), len(better),
                  "kept runs whose final corr with W^SVMeq exceeds that with W^1tok, of those where they differ"),
        check("the nonlinear head selects several tokens (a set O_i of two or more)",
              "SUPPORTED" if multi else "INCONCLUSIVE",
              f"{multi} of {len(kept)} kept runs select a set of two or more tokens", k=multi, n=len(kept)),
        check("predictivity improves as the softmax mass off the sets vanishes (scatter: log max masked softmax vs "
              "log(1 - corr(W_H, W^SVMeq)))",
              "INCONCLUSIVE" if not math.isfinite(z) else "SUPPORTED" if z > Z else "REFUTED" if z < -Z
              else "INCONCLUSIVE",
              f"Spearman rho {rho:.3f} over {len(pts)} kept runs (Fisher z = {z:.1f}; |z| > {Z:g} decides)",
              rho=finite(rho), z=finite(z)),
    ]
    with_conditions(checks, f"{s.describe()}; the notebook's band (1e-6, 1e-3] discards, sets at >= 1e-3; "
                            f"finite-horizon proxy 1 - corr <= {TOL:g} throughout [H/2, H]")
    return {"settings": s.to_json(), "steps": steps, "table": rows, "checks": checks,
            "scatter": [{"d": r["d"], "masked_max": r["masked_max"], "gap": finite(1 - r["corr_svmeq"][-1])}
                        for r in kept]}


def plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnsvm.interfaces.plotting.common import save_png

    s, steps = summary["settings"], summary["steps"]
    cols = len(s["dims"])
    fig, axes = plt.subplots(2, cols, figsize=(3.6 * cols, 6.4), squeeze=False)
    for j, row in enumerate(summary["table"]):
        ax, sc = axes[0][j], axes[1][j]
        for key, style, lab in (("svmeq", "-", "W^SVMeq"), ("mm", ":", "W^mm"), ("single", "--", "W^1tok")):
            if row[f"1-corr_{key}"] is not None:
                ax.plot(steps, [np.nan if v is None else max(v, 1e-16) for v in row[f"1-corr_{key}"]], style,
                        marker="o", ms=3, label=lab)
        ax.set_yscale("log")
        ax.set_title(f"d = {row['d']} ({row['kept']} kept, {row['multi_token']} multi-token)")
        ax.set_xlabel("iterations")
        pts = [(p["masked_max"], p["gap"]) for p in summary["scatter"] if p["d"] == row["d"] and p["gap"]]
        if pts:
            sc.scatter(*zip(*[(max(a, 1e-18), max(b, 1e-16)) for a, b in pts]), s=12, alpha=0.7)
            sc.set_xscale("log")
            sc.set_yscale("log")
        sc.set_xlabel("max softmax off the sets (< 1e-18 drawn at 1e-18)")
    axes[0][0].set_ylabel("1 - mean correlation")
    axes[1][0].set_ylabel("1 - corr(W_H, W^SVMeq)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"multi-token convergence, ReLU head ({'authors' if s['solver'] == 'authors' else 'default'} "
                 f"conventions)")
    fig.tight_layout()
    save_png(fig, path, dpi=100)
    plt.close(fig)


def sweep(s: Settings, out: Path, executor=None, on_done=None, draw: bool = True) -> tuple[dict, list[dict]]:
    """Run (or resume) into `out`: shards/, tfsvm_multitoken.json (summary, checks, records), .png."""
    out = Path(out)
    results, records = run_sweep("tfsvm-multitoken", s, run_shard, out, executor, on_done)
    steps = next((r["steps"] for r in results if r["steps"]), [0])
    summary = summarize(s, steps, records)
    finish(out, "tfsvm_multitoken", {**summary, "records": records},
           (lambda p: plot(summary, p)) if draw else None)
    return summary, records
