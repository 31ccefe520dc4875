"""Figure 9 of Max-Margin Token Selection (paper A, Appendix E):
over-parameterisation and the convergence of normalized GD to LMM / GMM directions.

Each trial draws X_i rows and v uniform on the unit sphere (Gaussian rows over their norms),
Y_i uniform in {-1, +1}, W = I, and runs normalized GD on p (logistic loss) from
p0 ~ N(0, init_scale^2 I) (the authors' `randn * 0.01`). All trials of a shard advance
together on the fused kernel (`attnsvm.attention.fused`, numpy and C: no torch is imported),
or on `dynamics.run` (torch, a GPU when present) where the kernel does not run. Two presets
(`PRESETS`):

* `default`: lr 1, the exact step p <- p - lr g/||g||, saturated iff the mean softmax mass off
  the selected tokens mean_i (1 - s_{i,alpha_i}) is at most sat_tol (1e-6; the paper's
  threshold is lost in extraction), labels uniform;
* `authors`: the conventions of the authors' public code (docs/reproducing.md): labels +1 iff a
  Gaussian draw is positive, lr 0.1 on g/(||g|| + eps) with eps float64's machine epsilon,
  and the saturation band of their multi-token notebook: a run with any softmax value in
  (1e-6, 1e-3] is discarded as not yet separated (counted and reported; fractions are over
  the kept runs), a run with no value at or below 1e-6 is finite (non-saturated), the rest
  are saturated.

Either way the selected tokens are the final iterate's argmax (max logit), and a saturated
run is classified by Definition 2 (`svm.classify.classify_runs`: GMM, LMM, or neither when an
SVM-neighbour scores higher; decided exactly where the numeric active set leaves it open).
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import ClassVar

import numpy as np

from attnsvm.attention import fused
from attnsvm.files import write_atomic, write_json_atomic
from attnsvm.interfaces.sweeps import params
from attnsvm.interfaces.sweeps.reports import check, json_ready, with_conditions
from attnsvm.interfaces.sweeps.shards import Shard, run_sweep
from attnsvm.interfaces.sweeps.stats import trend_check, upper_bound_check, wilson
from attnsvm.svm.classify import classify_runs, scores

CLASSES = ("non-saturated", "gmm", "lmm", "neither", "unresolved", "discarded")
MACHINE_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class Settings:
    """One Figure-9 run. `labels`: 'uniform' (Y_i uniform in {-1, +1}) or 'gaussian-sign'
    (+1 iff a standard Gaussian draw is positive); `eps`: the step is lr g / (||g|| + eps);
    `saturation`: 'mean' (saturated iff mean_i (1 - s_{i,alpha_i}) <= sat_tol) or 'band'
    (`band` = (hi, lo): discard a run with a softmax value in (lo, hi], non-saturated if none
    is <= lo)."""

    n: int = 6
    T: int = 8
    dims: tuple[int, ...] = (2, 4, 6, 8, 10, 12, 14, 16)
    trials: int = 1000
    steps: int = 1000
    lr: float = 1.0
    loss: str = "logistic"
    init_scale: float = 0.01
    sat_tol: float = 1e-6
    seed: int = 0
    shard_size: int = 500
    labels: str = "uniform"
    eps: float = 0.0
    saturation: str = "mean"
    band: tuple[float, float] = (1e-3, 1e-6)

    PARAMS: ClassVar[dict] = {
        "n": params.COUNT, "T": params.TOKENS, "dims": params.Each(params.COUNT), "trials": params.COUNT,
        "steps": params.COUNT, "lr": params.STEP, "loss": params.LOSS, "init_scale": params.INIT_SCALE,
        "sat_tol": params.SAT_TOL, "seed": params.SEED, "shard_size": params.COUNT,
        "labels": params.Options(("uniform", "gaussian-sign")), "eps": params.EPS,
        "saturation": params.Options(("mean", "band")),
        "band": params.Satisfies(lambda b: len(b) == 2 and 0 < b[1] < b[0] < 1, "(hi, lo) with 0 < lo < hi < 1")}
    FLAGS: ClassVar[dict] = {"dims": "d"}

    def __post_init__(self):
        params.validate(self)

    def size(self) -> tuple[str, int]:
        return "--shard-size x n x T x d", min(self.shard_size, self.trials) * self.n * self.T * max(self.dims)

    def to_json(self) -> dict:
        return {**asdict(self), "dims": list(self.dims), "band": list(self.band)}

    @classmethod
    def from_json(cls, obj: dict) -> Settings:
        return params.from_json(cls, obj)

    def describe(self) -> str:
        """The run's conventions in a line (checks' evidence, titles)."""
        step = f"lr {self.lr:g} on g/(||g||+{self.eps:.3g})" if self.eps else f"lr {self.lr:g}"
        sat = (f"saturated iff mean_i(1 - s_alpha) <= {self.sat_tol:g}" if self.saturation == "mean" else
               f"saturation band ({self.band[1]:g}, {self.band[0]:g}] discards")
        return f"{self.steps} NGD steps {step}, {sat}, labels {self.labels}"

    def shards(self) -> list[Shard]:
        out = []
        for d in self.dims:
            for start in range(0, self.trials, self.shard_size):
                stop = min(self.trials, start + self.shard_size)
                out.append(Shard(f"d{d:03d}-t{start:06d}-{stop:06d}", {"d": d, "start": start, "stop": stop}))
        return out


PRESETS = {
    "default": {},
    "authors": {"lr": 0.1, "eps": MACHINE_EPS, "labels": "gaussian-sign", "saturation": "band"},
}


def preset(name: str, **overrides) -> Settings:
    """Settings of a preset (`PRESETS`), with explicit overrides (None = the preset's value)."""
    params.CONVENTIONS.check("--conventions", name)
    known = {f.name for f in fields(Settings)}
    return Settings(**{**PRESETS[name], **{k: v for k, v in overrides.items() if v is not None and k in known}})


def instance(seed: int, d: int, trial: int, n: int, T: int, init_scale: float, labels: str = "uniform"):
    """Trial `trial` at dimension d: (X (n,T,d), Y (n,), v (d,), p0 (d,)), from its own stream
    (seed, d, trial), so a trial's data never depend on how trials are sharded or batched."""
    rng = np.random.default_rng([seed, d, trial])
    X = rng.standard_normal((n, T, d))
    X /= np.linalg.norm(X, axis=-1, keepdims=True)
    v = rng.standard_normal(d)
    v /= np.linalg.norm(v)
    if labels == "gaussian-sign":
        Y = np.where(rng.standard_normal(n) > 0, 1.0, -1.0)
    else:
        Y = np.array([-1.0, 1.0])[rng.integers(0, 2, n)]       # (= rng.choice(...), its stream, a third the time)
    p0 = init_scale * rng.standard_normal(d)
    return X, Y, v, p0


def instances(s: Settings, d: int, trials: Sequence[int]):
    X, Y, v, p0 = (np.stack(a) for a in zip(*(instance(s.seed, d, t, s.n, s.T, s.init_scale, s.labels)
                                              for t in trials)))
    return X, Y, v, p0


def run_batch(X, Y, v, p0, s: Settings) -> fused.Run:
    """Normalized GD on all trials at once (W = I, so keys are X): final p (B,d), selected tokens
    (B,n), log(1 - s_{i,alpha_i}) (B,n) and statuses. On the fused kernel (numpy, no torch) where
    it runs, else on `dynamics.run` (a GPU when present, results brought back to the CPU)."""
    gamma = scores(X, Y, v)
    kernel = fused.FusedGrad.of_arrays(X, gamma, s.loss)
    if kernel is not None:
        return kernel.normalized_gd(p0, s.steps, s.lr, s.eps)
    from attnsvm import dynamics
    from attnsvm.dynamics import rules

    rule = rules.chain(rules.Normalize(eps=s.eps), rules.Descend(s.lr)) if s.eps else dynamics.NormalizedGD(s.lr)
    tr = dynamics.run(dynamics.Problem.from_arrays(X, gamma, s.loss), rule, p0, s.steps, every=s.steps)
    return fused.Run(tr.final.cpu().numpy(), tr.selected.cpu().numpy(), tr.log_unsat[-1].cpu().numpy(), tr.status)


def log_softmax(X, P) -> np.ndarray:
    """log S(X_i p) (B,n,T) for keys X (B,n,T,d) and p (B,d)."""
    a = np.einsum("bntd,bd->bnt", X, P)
    top = a.max(-1, keepdims=True)
    return a - top - np.log(np.exp(a - top).sum(-1, keepdims=True))


def saturation(s: Settings, X, P, log_unsat) -> list[dict]:
    """Per run: 'state' ('saturated', 'non-saturated' or 'discarded', by `s.saturation`) and
    'unsat' = mean_i (1 - s_{i,alpha_i}); with the band rule also 'in_band' (softmax values in
    (lo, hi]) and 'multi_inputs' (inputs with more than one token above hi: a selected set of
    several tokens in the authors' reading, of which the argmax is classified)."""
    unsat = np.exp(log_unsat).mean(-1)
    if s.saturation == "mean":
        return [{"state": "saturated" if u <= s.sat_tol else "non-saturated", "unsat": float(u)} for u in unsat]
    hi, lo = s.band
    soft = np.exp(log_softmax(X, P))
    in_band = ((soft > lo) & (soft <= hi)).sum((-1, -2))
    below = (soft <= lo).any((-1, -2))
    multi = ((soft > hi).sum(-1) > 1).sum(-1)
    return [{"state": "discarded" if k else "saturated" if b else "non-saturated", "unsat": float(u),
             "in_band": int(k), "multi_inputs": int(m)} for u, k, b, m in zip(unsat, in_band, below, multi)]


def classify(X, Y, v, P, alpha, sats: list[dict]) -> list[dict]:
    """The record of each finished run of a batch: its saturation (`sats`, from `saturation`),
    tokens, optimal tokens and norm, and for a saturated run its Definition-2 class
    (`svm.classify.classify_runs`). X (B,n,T,d), Y (B,n), v (B,d), final P (B,d), alpha (B,n)."""
    alpha = np.asarray(alpha)
    opt = scores(X, Y, v).argmax(-1)
    norms = [float(np.linalg.norm(x)) for x in P]                     # (per vector: np.dot's rounding)
    found = classify_runs(X, Y, v, P, alpha, [sat["state"] == "saturated" for sat in sats])
    return [{**{k: x for k, x in sat.items() if k != "state"}, "alpha": alpha[b].tolist(), "opt": opt[b].tolist(),
             "norm": norms[b], "gap": None, "corr": None, "certified": None, "n_active": None,
             **(found[b] or {"cls": sat["state"]})} for b, sat in enumerate(sats)]


def run_shard(settings: dict, shard: Shard) -> dict:
    """All trials of one shard: batched GD, then one QP (and, if needed, a certificate) per
    saturated run."""
    s = Settings.from_json(settings)
    d, trials = shard.params["d"], range(shard.params["start"], shard.params["stop"])
    X, Y, v, p0 = instances(s, d, trials)
    run = run_batch(X, Y, v, p0, s)
    sats = saturation(s, X, run.p, run.log_unsat)
    recs = [{"trial": t, "d": d, "status": st, **r}
            for t, st, r in zip(trials, run.status, classify(X, Y, v, run.p, run.selected, sats))]
    return {"d": d, "records": recs}


# ---------------------------------------------------------------- summaries and checks

def summarize(settings: Settings, records: list[dict]) -> dict:
    """Per-d fractions over the kept (not discarded) runs, with 95% Wilson intervals,
    correlations, score gaps, and the paper's qualitative claims as checks with verdicts."""
    rows = []
    untrusted = sum(r.get("status") == "non-finite" for r in records)      # overflowed runs: never evidence
    for d in settings.dims:
        rs = [r for r in records if r["d"] == d and r.get("status") != "non-finite"]
        cnt = {c: sum(r["cls"] == c for r in rs) for c in CLASSES}
        N = len(rs) - cnt["discarded"]
        sat = N - cnt["non-saturated"]
        lmm = cnt["lmm"] + cnt["gmm"]
        frac = (lambda k: k / N) if N else (lambda k: None)     # noqa: B023 - called in this iteration only
        corr_lmm = [r["corr"] for r in rs if r["cls"] in ("lmm", "gmm")]
        corr_nei = [r["corr"] for r in rs if r["cls"] == "neither"]
        rows.append({"d": d, "trials": len(rs), "kept": N, **cnt, "saturated": sat, "lmm_incl_gmm": lmm,
                     "frac_discarded": cnt["discarded"] / len(rs) if rs else None,
                     "frac_saturated": frac(sat), "frac_lmm": frac(lmm), "frac_gmm": frac(cnt["gmm"]),
                     "frac_negative_gap": frac(cnt["neither"]),
                     "ci_negative_gap": wilson(cnt["neither"], N),
                     "mean_corr_lmm": float(np.mean(corr_lmm)) if corr_lmm else None,
                     "min_corr_lmm": float(np.min(corr_lmm)) if corr_lmm else None,
                     "mean_corr_neither": float(np.mean(corr_nei)) if corr_nei else None,
                     "certified_runs": sum(r["certified"] is not None for r in rs)})
    kept = [r for r in rows if r["kept"]]
    neg = sum(r["neither"] for r in rows)
    classified = sum(r["lmm_incl_gmm"] + r["neither"] for r in rows)     # saturated runs with a class (not unresolved)
    corr_all = [r["corr"] for r in records if r["cls"] in ("lmm", "gmm") and r.get("status") != "non-finite"]
    checks = [
        trend_check("saturation fraction rises with d", [(r["d"], r["saturated"], r["kept"]) for r in kept]),
        trend_check("LMM fraction rises with d", [(r["d"], r["lmm_incl_gmm"], r["kept"]) for r in kept]),
        trend_check("GMM fraction rises with d", [(r["d"], r["gmm"], r["kept"]) for r in kept]),
        upper_bound_check("negative score gaps in < 1% of problems (of the saturated, classified runs: only "
                          "those can show one)", neg, classified, 0.01),
        check("saturated LMM runs correlate ~0.99+ with their LMM direction",
              "SUPPORTED" if corr_all and np.mean(corr_all) >= 0.99 else "REFUTED" if corr_all else "INCONCLUSIVE",
              f"mean corr {np.mean(corr_all):.5f} over {len(corr_all)} LMM/GMM runs (min {np.min(corr_all):.4f})"
              if corr_all else "no saturated LMM runs"),
    ]
    discarded = sum(r["discarded"] for r in rows)
    conditions = (f"{settings.trials} trials per d ({discarded} discarded in all"
                  + (f", {untrusted} non-finite runs not counted" if untrusted else "")
                  + f"), n={settings.n}, T={settings.T}, "
                  f"{settings.describe()}, seed {settings.seed}")
    with_conditions(checks, conditions)
    sens = {f"{tol:g}": sum(r["unsat"] <= tol for r in records) for tol in (1e-3, 1e-6, 1e-9, 1e-12)}
    out = {"settings": settings.to_json(), "per_d": rows, "checks": checks, "discarded": discarded,
           "non_finite": untrusted,
           "saturated_at_tolerance": sens,
           "unresolved": [r for r in records if r["cls"] == "unresolved"],
           "statuses": {s: sum(r["status"] == s for r in records) for s in sorted({r["status"] for r in records})}}
    if settings.saturation == "band":
        out["multi_token_saturated_runs"] = sum(r["multi_inputs"] > 0 for r in records
                                                if r["cls"] not in ("non-saturated", "discarded"))
    return out


def plot(summary: dict, records: list[dict], path: Path) -> None:
    """Figure 9: (a) stacked class fractions per d (of all trials), (b) histogram of the minimum
    score gap of saturated runs (negative = a higher-scoring SVM-neighbour). Object-oriented
    matplotlib on the Agg canvas, imported here only."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, NullLocator

    rows = summary["per_d"]
    ds = [r["d"] for r in rows]
    fig = Figure(figsize=(11, 4.2))
    FigureCanvasAgg(fig)
    ax1, ax2 = fig.subplots(1, 2)
    bottom = np.zeros(len(rows))
    for key, label, color in (("non-saturated", "non-saturated", "tab:red"), ("gmm", "GMM", "tab:green"),
                              ("lmm", "LMM (not GMM)", "tab:blue"), ("neither", "neither (gap < 0)", "tab:gray"),
                              ("unresolved", "unresolved", "black"),
                              ("discarded", "discarded (in band)", "tab:orange")):
        h = np.array([r[key] / max(r["trials"], 1) for r in rows])
        if key in ("unresolved", "discarded") and not h.any():
            continue
        ax1.bar(ds, h, bottom=bottom, color=color, label=label, width=1.4)
        bottom += h
    ax1.set_xlabel("d")
    ax1.set_ylabel("fraction of trials")
    ax1.set_xticks(ds)
    st = summary["settings"]
    ax1.set_title(f"(a) n={st['n']}, T={st['T']}, {st['trials']} trials per d, lr {st['lr']:g}"
                  + (", authors' band" if st["saturation"] == "band" else ""), fontsize=10)
    ax1.set_ylim(0, 1.22)
    ax1.legend(fontsize=7, loc="upper center", ncol=3)
    gaps = np.array([r["gap"] for r in records if r["gap"] is not None and math.isfinite(r["gap"])])
    if len(gaps):
        bins = np.arange(math.floor(gaps.min() * 20) / 20, gaps.max() + 0.05, 0.05)
        ax2.hist(gaps[gaps > 0], bins=bins, color="tab:blue", label="gap > 0 (LMM)")
        ax2.hist(gaps[gaps <= 0], bins=bins, color="tab:red", label=f"gap <= 0: {np.sum(gaps <= 0)} of {len(gaps)}")
        ax2.set_yscale("log")
        ax2.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))   # counts as 1, 10, 100: no mathtext
        ax2.yaxis.set_minor_locator(NullLocator())
        ax2.legend(fontsize=8)
    ax2.set_xlabel("minimum score gap over SVM-neighbours")
    ax2.set_ylabel("saturated runs (log scale)")
    ax2.set_title("(b) score gaps, all d (bin width 0.05)")
    fig.subplots_adjust(left=0.06, right=0.99, bottom=0.12, top=0.92, wspace=0.2)   # (fixed: tight_layout cost 0.2 s)
    buf = io.BytesIO()
    fig.savefig(buf, dpi=120, format="png")
    write_atomic(path, buf.getvalue())


def _load_plotting() -> None:
    """Import what `plot` needs (about 0.7 s), called while the workers compute the shards."""
    import matplotlib.backends.backend_agg
    import matplotlib.figure  # noqa: F401


def sweep(s: Settings, out: Path, executor=None, on_done=None, draw: bool = True) -> tuple[dict, list[dict]]:
    """Run (or resume) the sweep into `out`: shards/, fig9.json (summary and checks),
    fig9_runs.json (one record per trial), fig9.png (unless draw=False)."""
    out = Path(out)
    results, records = run_sweep("fig9", s, run_shard, out, executor, on_done,
                                 on_submitted=_load_plotting if draw else None)
    summary = summarize(s, records)
    write_json_atomic(out / "fig9.json", json_ready(summary))
    write_json_atomic(out / "fig9_runs.json", records, indent=None)
    if draw:
        plot(summary, records, out / "fig9.png")
    return summary, records
