"""SVM rank vs d (Transformers as SVMs, docs/statements.md#tfsvm-rank, #tfsvm-feasibility and
#tfsvm-nuclear; the authors' svm_rank.ipynb): solve W_mm (Frobenius) and W*_mm (nuclear norm)
for alpha = the notebook's best_ids and measure their ranks, for n in {5,10,15} at T = 5 and T
in {5,10,15} at n = 5 (the notebook's loop, `grid="cross"`; `"product"` takes every (n, T)),
d in {1,2,3,4,5,10,15,20}, 100 instances each.

Data (`attention`): "cross" is the notebook's generator (`notebooks.rank_data`: cross-attention
with random unit queries Z, unit tokens, seed + trial as the generator's seed); "self" is the
earlier self-attention variant (X rows and v standard Gaussian, Y uniform, z_i = x_i1, numpy
stream (seed, n, T, d, trial)).

Default conventions: W_mm on quadprog, certified exactly (`certificates.certify`: a KKT point
in rational arithmetic, or a Farkas vector for an infeasible instance), its rank the exact rank
of the certified rational matrix; W*_mm on cvxpy (Clarabel), its rank the number of singular
values above rank_tol * sigma_1, with sigma_r / sigma_1 and sigma_{r+1} / sigma_1 (the gap) kept:
a rank is *clear* when no singular value lies within two decades of the tolerance. Feasible,
infeasible and unresolved instances are counted apart and ranks averaged over feasible ones.

Authors' conventions (`conventions="authors"`): their procedure as published (`notebooks`):
both SVMs through cvxpy's default solver (Clarabel for the Frobenius norm, SCS for the nuclear
norm), `matrix_rank(W, tol=1e-7)` (absolute; 1 for an infeasible instance, whose value is None),
every instance counted, a seed whose solve raises skipped. Each instance's certified status and
rank are recorded beside theirs, and the nuclear solution's largest constraint violation.

Checks: rank(W_mm) <= n on every feasible instance (claim 5, counted where d > n); feasible for
every instance with d >= max(T-1, n) (claim 3); W*_mm has lower rank than W_mm (claim 2's
low-rank bias), paired per instance over certified and clear ranks: of the instances where the
ranks differ, W*_mm is lower on most (95% Wilson interval above 1/2; below 1/2 refutes).
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from attnsvm.claims.verdicts import Report
from attnsvm.files import write_json_atomic
from attnsvm.interfaces.sweeps import notebooks, params
from attnsvm.interfaces.sweeps.reports import check, json_ready, with_conditions
from attnsvm.interfaces.sweeps.shards import Shard, run_sweep
from attnsvm.interfaces.sweeps.stats import wilson

CLEAR = 100.0           # a tolerance rank is clear when no singular value is within this factor of the tolerance


@dataclass(frozen=True)
class Settings:
    ns: tuple[int, ...] = (5, 10, 15)
    Ts: tuple[int, ...] = (5, 10, 15)
    dims: tuple[int, ...] = (1, 2, 3, 4, 5, 10, 15, 20)
    trials: int = 100
    nuclear: bool = True
    rank_tol: float = 1e-6
    seed: int = 0
    grid: str = "cross"
    attention: str = "cross"
    conventions: str = "default"

    PARAMS: ClassVar[dict] = {"ns": params.Each(params.COUNT), "Ts": params.Each(params.TOKENS),
                              "dims": params.Each(params.COUNT), "trials": params.COUNT, "rank_tol": params.RANK_TOL,
                              "seed": params.SEED, "grid": params.Options(("cross", "product")),
                              "attention": params.ATTENTION, "conventions": params.CONVENTIONS}
    FLAGS: ClassVar[dict] = {"ns": "n", "Ts": "T", "dims": "d"}

    def __post_init__(self):
        params.validate(self)

    def size(self) -> tuple[str, int]:
        d = max(self.dims)
        return "n x T x d + d^2 of the largest instance", max(self.ns) * max(self.Ts) * d + d * d

    def to_json(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    def pairs(self) -> list[tuple[int, int]]:
        """(n, T) of the run: every n at the smallest T and every T at the smallest n (the
        notebook's loop), or every combination."""
        if self.grid == "product":
            return [(n, T) for n in self.ns for T in self.Ts]
        n0, T0 = min(self.ns), min(self.Ts)
        return [(n, T0) for n in self.ns] + [(n0, T) for T in self.Ts if T != T0]

    def shards(self) -> list[Shard]:
        return [Shard(f"n{n:03d}-T{T:03d}-d{d:03d}", {"n": n, "T": T, "d": d}) for n, T in self.pairs()
                for d in self.dims]


def self_attention_data(seed: int, n: int, T: int, d: int, trial: int) -> notebooks.Draw:
    """The self-attention variant: X rows, v Gaussian, Y uniform, z_i = x_i1, alpha = opt."""
    rng = np.random.default_rng([seed, n, T, d, trial])
    X = rng.standard_normal((n, T, d))
    v = rng.standard_normal(d)
    Y = rng.choice(np.array([-1.0, 1.0]), n)
    return notebooks.Draw(X, Y, X[:, 0], v, (Y[:, None] * (X @ v)).argmax(-1))


def draw(s: Settings, n: int, T: int, d: int, trial: int, seed: int) -> notebooks.Draw:
    if s.attention == "self":
        return self_attention_data(s.seed, n, T, d, trial)
    return notebooks.rank_data(seed, n, T, d)


def tolerance_rank(W: np.ndarray, tol: float) -> dict:
    """#singular values above tol * sigma_1, with the smallest kept and largest dropped ratio
    sigma_k / sigma_1 (the gap) and whether it is clear (none within CLEAR of tol)."""
    s = np.linalg.svd(W, compute_uv=False)
    if not s[0] > 0:
        return {"rank": 0, "kept": None, "dropped": None, "clear": True}
    r = s / s[0]
    k = int((r > tol).sum())
    kept, dropped = float(r[k - 1]), (float(r[k]) if k < len(r) else None)
    clear = kept >= CLEAR * tol and (dropped is None or dropped <= tol / CLEAR)
    return {"rank": k, "kept": kept, "dropped": dropped, "clear": bool(clear)}


def exact_rank(cert, d: int, tags) -> int:
    """The rank of a certified W_mm (d, d), exactly. W_mm = sum over active rows (i, t) of
    mu_it (x_{i,alpha_i} - x_it) z_i^T, so its rank is at most the number of inputs with an active
    row (and d); a rank modulo a prime is at most the rank over Q, so reaching that bound decides
    it; else the fraction-free rank over the integers."""
    import flint

    upper = min(d, len({tags[j][0] for j in cert.active}))
    p = (1 << 61) - 1
    if flint.nmod_mat(d, d, [int(v) % p for v in cert.xnum], p).rank() == upper:
        return upper
    return flint.fmpz_mat(d, d, [int(v) for v in cert.xnum]).rank()


def certified(x: notebooks.Draw, s: Settings) -> dict:
    """W_mm on quadprog with its exact certificate: status ('optimal', 'infeasible' or 'error'),
    whether certified, the rank (exact when certified, else at rank_tol) and the float solution."""
    from attnsvm import svm
    from attnsvm.attention.data import Dataset
    from attnsvm.svm.certificates import certify

    ds = Dataset.from_arrays(x.X, x.Y, x.v, z=None if s.attention == "self" else x.Z)
    res = svm.w_svm(ds, x.best)
    cert = certify(res) if res.status in ("optimal", "infeasible") else None
    out = {"status": res.status, "certified": bool(cert and cert.verified), "rank": None, "W": None}
    if res.ok:
        d = ds.d
        out["W"] = res.solution
        out["rank"] = (exact_rank(cert, d, res.problem.tags) if out["certified"]
                       else tolerance_rank(res.solution, s.rank_tol)["rank"])
    return out


def _default_record(s: Settings, x: notebooks.Draw) -> dict:
    from attnsvm import svm

    fro = certified(x, s)
    rec = {"status": fro["status"], "certified": fro["certified"], "rank_fro": fro["rank"], "rank_nuc": None}
    if fro["W"] is not None and s.nuclear:
        nuc = svm.w_svm_arrays(x.X, x.Z, x.best, norm="nuclear")
        rec["nuc_status"] = nuc.status
        if nuc.ok:
            t = tolerance_rank(nuc.solution, s.rank_tol)
            rec.update(rank_nuc=t["rank"], nuc_kept=t["kept"], nuc_dropped=t["dropped"], nuc_clear=t["clear"])
    return rec


def _violation(W, x: notebooks.Draw) -> float:
    """Largest relative miss of a constraint (x_alpha - x_t)^T W z_i >= 1 (0 when all hold)."""
    n, T, _ = x.X.shape
    worst = min(float((x.X[i, x.best[i]] - x.X[i, t]) @ W @ x.Z[i])
                for i in range(n) for t in range(T) if t != x.best[i])
    return max(0.0, 1.0 - worst)


def _authors_record(s: Settings, x: notebooks.Draw) -> dict:
    """Their procedure (raises where theirs does), with the default conventions' record beside
    (`reference`: certified status and W_mm rank, W*_mm's tolerance rank and gap)."""
    W, status, solver = notebooks.w_svm_solver(x.X, x.Z, x.best, fro=True)
    rec = {"status": status, "solver": solver, "rank_fro": notebooks.matrix_rank(W), "rank_nuc": None}
    if s.nuclear:
        Wn, nstatus, nsolver = notebooks.w_svm_solver(x.X, x.Z, x.best, fro=False)
        rec.update(nuc_status=nstatus, nuc_solver=nsolver, rank_nuc=notebooks.matrix_rank(Wn),
                   nuc_violation=None if Wn is None else _violation(Wn, x))
    rec["reference"] = _default_record(s, x)
    return rec


def run_shard(settings: dict, shard: Shard) -> dict:
    warnings.filterwarnings("ignore", module="cvxpy")
    warnings.filterwarnings("ignore", message=".*Solution may be inaccurate")   # statuses are recorded
    s = params.from_json(Settings, settings)
    n, T, d = shard.params["n"], shard.params["T"], shard.params["d"]
    recs, seed, skipped = [], s.seed, []
    while len(recs) < s.trials and len(skipped) <= 10 * s.trials:
        x = draw(s, n, T, d, len(recs), seed)
        base = {"n": n, "T": T, "d": d, "trial": len(recs), "seed": seed}
        if s.conventions == "authors":
            try:
                rec = _authors_record(s, x)
            except Exception:           # their loop: `except: seed += 1; continue`
                skipped.append(seed)
                seed += 1
                continue
        else:
            rec = _default_record(s, x)
        recs.append({**base, **rec})
        seed += 1
    return {"records": recs, "skipped_seeds": skipped}


def _mean(xs):
    return float(np.mean(xs)) if xs else None


def table(s: Settings, records: list[dict]) -> list[dict]:
    """Per (n, T, d): instances, feasible / infeasible / unresolved, mean ranks over the feasible
    ones; under the authors' conventions also their published means (every instance, an
    infeasible one at rank 1)."""
    rows = []
    for n, T in s.pairs():
        for d in s.dims:
            rs = [r for r in records if (r["n"], r["T"], r["d"]) == (n, T, d)]
            feas = [r for r in rs if r["status"] == "optimal"]
            row = {"n": n, "T": T, "d": d, "trials": len(rs), "feasible": len(feas),
                   "infeasible": sum(r["status"] == "infeasible" for r in rs),
                   "mean_rank_fro": _mean([r["rank_fro"] for r in feas if r["rank_fro"] is not None]),
                   "mean_rank_nuc": _mean([r["rank_nuc"] for r in feas if r["rank_nuc"] is not None])}
            row["unresolved"] = len(rs) - row["feasible"] - row["infeasible"]
            if s.conventions == "authors":
                row["published_rank_fro"] = _mean([r["rank_fro"] for r in rs])
                row["published_rank_nuc"] = _mean([r["rank_nuc"] for r in rs if r["rank_nuc"] is not None])
            else:
                row["uncertified"] = sum(not r["certified"] for r in rs)
                row["unclear_nuc"] = sum(r.get("nuc_clear") is False for r in feas)
            rows.append(row)
    return rows


def gaps(records: list[dict]) -> dict | None:
    """The nuclear ranks' singular-value gap over the feasible instances (default conventions):
    the smallest kept and largest dropped sigma_k / sigma_1, and how many ranks are not clear."""
    rs = [r for r in records if r.get("nuc_kept") is not None]
    if not rs:
        return None
    dropped = [r["nuc_dropped"] for r in rs if r["nuc_dropped"] is not None]
    return {"instances": len(rs), "smallest_kept": min(r["nuc_kept"] for r in rs),
            "largest_dropped": max(dropped) if dropped else None, "unclear": sum(not r["nuc_clear"] for r in rs)}


def artefacts(records: list[dict]) -> dict:
    """Under the authors' conventions: where their procedure and the default one part, counted
    over the instances the default procedure certifies infeasible or feasible (its W_mm rank
    exact, its W*_mm rank clear)."""
    ref = lambda r: r["reference"]
    infeasible = [r for r in records if ref(r)["status"] == "infeasible" and ref(r)["certified"]]
    feasible = [r for r in records if ref(r)["status"] == "optimal" and ref(r)["certified"]]
    clear = [r for r in feasible if ref(r).get("nuc_clear") and r["rank_nuc"] is not None]
    viol = [r["nuc_violation"] for r in records if r.get("nuc_violation") is not None]
    return {"certified_infeasible": len(infeasible), "certified_feasible": len(feasible),
            "infeasible_counted_as_rank_1": sum(r["rank_fro"] == 1 for r in infeasible),
            "rank_fro_differs": sum(r["rank_fro"] != ref(r)["rank_fro"] for r in feasible),
            "nuclear_compared": len(clear),
            "rank_nuc_above_reference": sum(r["rank_nuc"] > ref(r)["rank_nuc"] for r in clear),
            "rank_nuc_below_reference": sum(r["rank_nuc"] < ref(r)["rank_nuc"] for r in clear),
            "nuclear_violation_above_1e-3": sum(v > 1e-3 for v in viol),
            "largest_nuclear_violation": max(viol) if viol else None}


def checks(s: Settings, records: list[dict]) -> list[Report]:
    authors = s.conventions == "authors"
    feas = [r for r in records if r["status"] == "optimal" and r["rank_fro"] is not None]
    informative = [r for r in feas if r["d"] > r["n"]]          # d <= n: rank <= d <= n holds trivially
    over = [r for r in informative if r["rank_fro"] > r["n"]]
    big = [r for r in records if r["d"] >= max(r["T"] - 1, r["n"])]
    infeasible_big = [r for r in big if r["status"] != "optimal"]
    trusted = (lambda r: True) if authors else (lambda r: r["certified"] and r.get("nuc_clear", False))
    paired = [r for r in feas if r["rank_nuc"] is not None and trusted(r)]
    excluded = sum(r["rank_nuc"] is not None and not trusted(r) for r in feas)
    nuc_failed = [r for r in feas if s.nuclear and r["rank_nuc"] is None]     # a nuclear solve that ended in error
    lower = sum(r["rank_nuc"] < r["rank_fro"] for r in paired)
    higher = sum(r["rank_nuc"] > r["rank_fro"] for r in paired)
    mf = _mean([r["rank_fro"] for r in paired])
    mn = _mean([r["rank_nuc"] for r in paired])
    rank_how = ("their matrix_rank(tol=1e-7) on cvxpy's solutions" if authors else
                f"W_mm ranks exact (certified), W*_mm at relative tolerance {s.rank_tol:g}")
    where = (f"{s.trials} instances per (n, T, d), {s.attention}-attention data, {s.conventions} conventions, "
             f"{rank_how}, seed {s.seed}")
    lo, hi = wilson(lower, lower + higher)
    low_rank = ("INCONCLUSIVE" if lower + higher == 0 else "SUPPORTED" if lo > 0.5 else "REFUTED" if hi < 0.5
                else "INCONCLUSIVE")
    failed = (f"; {len(nuc_failed)} nuclear solve{'s' if len(nuc_failed) != 1 else ''} ended in error "
              f"({', '.join(sorted({str(r.get('nuc_status')) for r in nuc_failed}))})" if nuc_failed else "")
    left = (f"; {excluded} left out (an uncertified W_mm or a nuclear rank without a clear gap)"
            if excluded else "")
    return with_conditions([
        check("rank(W_mm) <= n on every feasible instance (KKT form; counted where d > n, as d <= n makes it trivial)",
              "INCONCLUSIVE" if not informative else "REFUTED" if over else "SUPPORTED",
              f"{len(over)} of {len(informative)} feasible instances with d > n exceed n "
              f"({len(feas) - len(informative)} with d <= n not counted)" if informative else
              f"no feasible instance with d > n ({len(feas)} with d <= n, where it holds trivially)"),
        check("feasible for every instance with d >= max(T-1, n)",
              "INCONCLUSIVE" if not big else "REFUTED" if infeasible_big else "SUPPORTED",
              f"{len(infeasible_big)} of {len(big)} such instances infeasible/unsolved"),
        check("nuclear-norm W*_mm has lower rank than Frobenius W_mm (low-rank bias; paired, per instance)", low_rank,
              (f"W*_mm lower on {lower}, higher on {higher}, equal on {len(paired) - lower - higher} of "
               f"{len(paired)} instances (lower on {lower} of {lower + higher} that differ, 95% CI "
               f"{lo:.3f}..{hi:.3f} vs 1/2); mean rank {mn:.2f} (W*_mm) vs {mf:.2f} (W_mm)"
               if paired else "no nuclear solves") + left + failed, lower=lower, higher=higher),
    ], where)


def summarize(s: Settings, records: list[dict]) -> dict:
    out = {"settings": s.to_json(), "table": table(s, records), "checks": checks(s, records)}
    if s.conventions == "authors":
        out["artefacts"] = artefacts(records)
    else:
        out["nuclear_gap"] = gaps(records)
    return out


def plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnsvm.interfaces.plotting.common import save_png

    s = summary["settings"]
    authors = s["conventions"] == "authors"
    n0, T0 = min(s["ns"]), min(s["Ts"])
    panels = [("n", [(n, T0) for n in s["ns"]], f"T = {T0}"), ("T", [(n0, T) for T in s["Ts"]], f"n = {n0}")]
    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    fro, nuc = ("published_rank_fro", "published_rank_nuc") if authors else ("mean_rank_fro", "mean_rank_nuc")
    for col, (what, pairs, fixed) in enumerate(panels):
        ax, axf = axes[0][col], axes[1][col]
        for (n, T), color in zip(pairs, ("tab:blue", "tab:green", "tab:red", "tab:purple", "tab:orange")):
            rows = [r for r in summary["table"] if (r["n"], r["T"]) == (n, T)]
            lab = f"{what}={n if what == 'n' else T}"
            for key, style in ((fro, "-"), (nuc, "--")):
                pts = [(r["d"], r[key]) for r in rows if r[key] is not None]
                if pts:
                    ax.plot(*zip(*pts), style, color=color, marker="o", ms=4, label=lab if style == "-" else None)
            axf.plot([r["d"] for r in rows], [r["feasible"] / max(r["trials"], 1) for r in rows], "-", color=color,
                     marker=".")
        ax.set_title(f"varying {what} at {fixed}: W_mm solid, W*_mm dashed")
        ax.set_ylabel("mean rank, every instance (infeasible = 1)" if authors else "mean rank, feasible instances")
        ax.legend(fontsize=8)
        axf.set_ylabel("feasible fraction")
        axf.set_xlabel("d")
        axf.set_ylim(-0.05, 1.05)
    fig.suptitle(f"rank of the SVM solutions ({s['attention']}-attention data, {s['conventions']} conventions)")
    fig.tight_layout()
    save_png(fig, path, dpi=110)
    plt.close(fig)


def sweep(s: Settings, out: Path, executor=None, on_done=None) -> tuple[dict, list[dict]]:
    """Run (or resume) into `out`: shards/, tfsvm_rank.json, tfsvm_rank.png."""
    out = Path(out)
    results, records = run_sweep("tfsvm-rank", s, run_shard, out, executor, on_done)
    summary = summarize(s, records)
    summary["skipped_seeds"] = sum(len(r["skipped_seeds"]) for r in results)
    write_json_atomic(out / "tfsvm_rank.json", {**json_ready(summary), "records": records})
    plot(summary, out / "tfsvm_rank.png")
    return summary, records
