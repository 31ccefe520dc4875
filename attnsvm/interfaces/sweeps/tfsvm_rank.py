"""SVM rank vs d (Transformers as SVMs, claims (3) and (5); the authors' svm_rank
experiment): for n in {5,10,15}, T in {5,10,15}, d in 1..20, random self-attention data
(X rows and v standard Gaussian, Y uniform in {-1,+1}, z_i = x_i1) and alpha = opt, solve
W_mm (Frobenius, quadprog) and W*_mm (nuclear norm, cvxpy) and measure their ranks
(singular values above rank_tol * sigma_1; cvxpy's accuracy is ~1e-8 relative).

Checks: rank(W_mm) <= n on every feasible instance (claim 5: the KKT form has rank <= n),
counted only where d > n (for d <= n it holds trivially); feasible on every instance with
d >= max(T-1, n) (claim 3); W*_mm has lower rank than W_mm (the nuclear norm's low-rank bias,
claim 2), paired per instance: of the instances where the ranks differ, W*_mm is lower on most
(95% Wilson interval above 1/2; below 1/2 refutes); nuclear solves that ended in error are
counted in the evidence.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from attnsvm import svm
from attnsvm.files import write_json_atomic
from attnsvm.interfaces.sweeps.shards import Shard, run_sweep
from attnsvm.interfaces.sweeps.stats import wilson


@dataclass(frozen=True)
class Settings:
    ns: tuple[int, ...] = (5, 10, 15)
    Ts: tuple[int, ...] = (5, 10, 15)
    dims: tuple[int, ...] = tuple(range(1, 21))
    trials: int = 5
    nuclear: bool = True
    rank_tol: float = 1e-5
    seed: int = 0

    def to_json(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    def shards(self) -> list[Shard]:
        return [Shard(f"n{n:03d}-T{T:03d}-d{d:03d}", {"n": n, "T": T, "d": d})
                for n in self.ns for T in self.Ts for d in self.dims]


def rank(W: np.ndarray, tol: float) -> int:
    s = np.linalg.svd(W, compute_uv=False)
    return int((s > tol * s[0]).sum()) if s[0] > 0 else 0


def run_shard(settings: dict, shard: Shard) -> dict:
    warnings.filterwarnings("ignore", module="cvxpy")
    warnings.filterwarnings("ignore", message=".*Solution may be inaccurate")   # (raised from margin.py); statuses are checked
    n, T, d = shard.params["n"], shard.params["T"], shard.params["d"]
    recs = []
    for t in range(settings["trials"]):
        rng = np.random.default_rng([settings["seed"], n, T, d, t])
        X = rng.standard_normal((n, T, d))
        v = rng.standard_normal(d)
        Y = rng.choice(np.array([-1.0, 1.0]), n)
        alpha = (Y[:, None] * (X @ v)).argmax(-1)
        fro = svm.w_svm_arrays(X, X[:, 0], alpha)
        rec = {"n": n, "T": T, "d": d, "trial": t, "status": fro.status, "rank_fro": None, "rank_nuc": None}
        if fro.ok:
            rec["rank_fro"] = rank(fro.solution, settings["rank_tol"])
            if settings["nuclear"]:
                nuc = svm.w_svm_arrays(X, X[:, 0], alpha, norm="nuclear")
                rec["nuc_status"] = nuc.status
                if nuc.ok:
                    rec["rank_nuc"] = rank(nuc.solution, settings["rank_tol"])
        recs.append(rec)
    return {"records": recs}


def summarize(s: Settings, records: list[dict]) -> dict:
    rows = []
    for n in s.ns:
        for T in s.Ts:
            for d in s.dims:
                rs = [r for r in records if (r["n"], r["T"], r["d"]) == (n, T, d)]
                fr = [r["rank_fro"] for r in rs if r["rank_fro"] is not None]
                nu = [r["rank_nuc"] for r in rs if r["rank_nuc"] is not None]
                rows.append({"n": n, "T": T, "d": d, "trials": len(rs), "feasible": len(fr),
                             "mean_rank_fro": float(np.mean(fr)) if fr else None,
                             "mean_rank_nuc": float(np.mean(nu)) if nu else None})
    feas = [r for r in records if r["rank_fro"] is not None]
    informative = [r for r in feas if r["d"] > r["n"]]          # d <= n: rank <= d <= n holds trivially
    over = [r for r in informative if r["rank_fro"] > r["n"]]
    big = [r for r in records if r["d"] >= max(r["T"] - 1, r["n"])]
    infeasible_big = [r for r in big if r["status"] != "optimal"]
    paired = [r for r in feas if r["rank_nuc"] is not None]
    nuc_failed = [r for r in feas if s.nuclear and r["rank_nuc"] is None]     # a nuclear solve that ended in error
    lower = sum(r["rank_nuc"] < r["rank_fro"] for r in paired)
    higher = sum(r["rank_nuc"] > r["rank_fro"] for r in paired)
    mf = float(np.mean([r["rank_fro"] for r in paired])) if paired else None
    mn = float(np.mean([r["rank_nuc"] for r in paired])) if paired else None
    where = f"; {s.trials} trials per (n, T, d), rank_tol {s.rank_tol:g}, seed {s.seed}"
    # paired: of the instances where the two ranks differ, W*_mm is lower on most (95% Wilson
    # interval of lower / (lower + higher) above 1/2), REFUTED below 1/2; ties carry no evidence
    lo, hi = wilson(lower, lower + higher)
    low_rank = ("INCONCLUSIVE" if lower + higher == 0 else "SUPPORTED" if lo > 0.5 else "REFUTED" if hi < 0.5
                else "INCONCLUSIVE")
    failed = (f"; {len(nuc_failed)} nuclear solve{'s' if len(nuc_failed) != 1 else ''} ended in error "
              f"({', '.join(sorted({str(r.get('nuc_status')) for r in nuc_failed}))})" if nuc_failed else "")
    checks = [
        {"claim": "rank(W_mm) <= n on every feasible instance (KKT form; counted where d > n, as d <= n makes it trivial)",
         "verdict": "INCONCLUSIVE" if not informative else "REFUTED" if over else "SUPPORTED",
         "evidence": (f"{len(over)} of {len(informative)} feasible instances with d > n exceed n "
                      f"({len(feas) - len(informative)} with d <= n not counted)" if informative else
                      f"no feasible instance with d > n ({len(feas)} with d <= n, where it holds trivially)") + where},
        {"claim": "feasible for every instance with d >= max(T-1, n)",
         "verdict": "INCONCLUSIVE" if not big else "REFUTED" if infeasible_big else "SUPPORTED",
         "evidence": f"{len(infeasible_big)} of {len(big)} such instances infeasible/unsolved" + where},
        {"claim": "nuclear-norm W*_mm has lower rank than Frobenius W_mm (low-rank bias; paired, per instance)",
         "verdict": low_rank,
         "evidence": (f"W*_mm lower on {lower}, higher on {higher}, equal on {len(paired) - lower - higher} of "
                      f"{len(paired)} instances (lower on {lower} of {lower + higher} that differ, 95% CI "
                      f"{lo:.3f}..{hi:.3f} vs 1/2); mean rank {mn:.2f} (W*_mm) vs {mf:.2f} (W_mm)"
                      if paired else "no nuclear solves") + failed + where},
    ]
    return {"settings": s.to_json(), "table": rows, "checks": checks}


def plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnsvm.interfaces.plotting.common import save_png

    s = summary["settings"]
    fig, axes = plt.subplots(1, len(s["ns"]), figsize=(4.2 * len(s["ns"]), 3.8), squeeze=False)
    for ax, n in zip(axes[0], s["ns"]):
        for T, color in zip(s["Ts"], ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")):
            rows = [r for r in summary["table"] if r["n"] == n and r["T"] == T]
            for key, style, lab in (("mean_rank_fro", "-", "W_mm"), ("mean_rank_nuc", "--", "W*_mm")):
                pts = [(r["d"], r[key]) for r in rows if r[key] is not None]
                if pts:
                    ax.plot(*zip(*pts), style, color=color, marker=".", label=f"T={T} {lab}")
        ax.axhline(n, color="gray", lw=0.8, ls=":")
        ax.set_title(f"n = {n} (dotted: rank n)")
        ax.set_xlabel("d")
        ax.set_ylabel("mean rank")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    save_png(fig, path, dpi=110)
    plt.close(fig)


def sweep(s: Settings, out: Path, executor=None, on_done=None) -> tuple[dict, list[dict]]:
    """Run (or resume) into `out`: shards/, tfsvm_rank.json, tfsvm_rank.png."""
    out = Path(out)
    results, records = run_sweep("tfsvm-rank", s, run_shard, out, executor, on_done)
    summary = summarize(s, records)
    write_json_atomic(out / "tfsvm_rank.json", {**summary, "records": records})
    plot(summary, out / "tfsvm_rank.png")
    return summary, records
