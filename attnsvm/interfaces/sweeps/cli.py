"""`attnsvm reproduce ...`: the papers' experiments as resumable, batched sweeps."""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from attnsvm.errors import UserError
from attnsvm.interfaces.cli.app import consoles
from attnsvm.interfaces.sweeps import params
from attnsvm.interfaces.sweeps.params import MAX_SIZE

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Reproduce the papers' experiments as batched, resumable sweeps.")
console, _ = consoles()           # not a terminal: tables as wide as their content

WorkersOpt = typer.Option(None, "--workers", help="worker processes (default: CPU count); 1 = in-process")
ExecutorOpt = typer.Option("local", "--executor", help="local, dask (a local Dask cluster) or tcp://HOST:PORT "
                                                       "(an existing Dask scheduler; pip install \"attnsvm[dask]\")")
SeedOpt = typer.Option(0, "--seed", min=0, help="random seed (each trial has its own stream from (seed, d, trial))")


def int_list(text: str, name: str) -> tuple[int, ...]:
    """'2,4,6' or '2:16:2' (inclusive range) -> distinct positive ints, sorted ascending (so
    every verdict is independent of the order typed). Empty items ('1,,2', ',') and repeats
    ('12,12': each would count the same trials again) are one-line errors."""
    items = text.split(",") if ":" not in text else [text]
    if not text.strip() or any(not x.strip() for x in items):
        raise UserError(f"--{name}: empty item in {text!r} (expected integers like '2,4,8' or 'LO:HI[:STEP]')")
    try:
        if ":" in text:
            parts = [int(x) for x in text.split(":")]
            if len(parts) not in (2, 3):
                raise ValueError
            lo, hi, step = (parts + [1])[:3]
            if step <= 0:
                raise ValueError
            vals = tuple(range(lo, hi + 1, step))
        else:
            vals = tuple(int(x) for x in items)
    except ValueError:
        raise UserError(f"--{name}: expected integers like '2,4,8' or 'LO:HI[:STEP]', got {text!r}") from None
    if not vals or any(v < 1 for v in vals):
        raise UserError(f"--{name}: expected positive integers, got {text!r}")
    if max(vals) > MAX_SIZE:
        raise UserError(f"--{name}: sizes above {MAX_SIZE} are not supported, got {max(vals)}")
    repeats = sorted(v for v, k in Counter(vals).items() if k > 1)          # linear: --d 1:100000
    if repeats:
        raise UserError(f"--{name}: repeated value{'s' if len(repeats) > 1 else ''} "
                        f"{', '.join(map(str, repeats))} in {text!r} (each value once)")
    return tuple(sorted(vals))


def joined_int_list(text: str, name: str) -> tuple[int, ...]:
    """Comma-joined items, each an integer or 'LO:HI[:STEP]' range ('1:10,100'): distinct,
    sorted; empty items and repeats (also across ranges) are one-line errors."""
    parts = text.split(",")
    if not text.strip() or any(not x.strip() for x in parts):
        raise UserError(f"--{name}: empty item in {text!r} (expected e.g. '1,2,5' or '1:10,100')")
    vals = [v for part in parts for v in int_list(part.strip(), name)]
    repeats = sorted(v for v, k in Counter(vals).items() if k > 1)          # linear: --d 1:100000
    if repeats:
        raise UserError(f"--{name}: repeated value{'s' if len(repeats) > 1 else ''} "
                        f"{', '.join(map(str, repeats))} in {text!r} (each value once)")
    return tuple(sorted(vals))


def execute(sweep_fn, settings, out: Path, workers: int | None, label: str, executor: str = "local"):
    """Run a sweep with a rich progress bar over shards; returns (result, seconds). No more
    worker processes than shards; one worker runs in-process. The kernel is loaded (and its
    status printed) before local workers fork, so they start with it."""
    from attnsvm import threads as numeric_threads
    from attnsvm.attention import fused
    from attnsvm.interfaces import executors
    from attnsvm.interfaces.sweeps.shards import check_out_dir

    check_out_dir(out, sub=("shards",))
    if workers is not None:
        params.COUNT.check("--workers", workers)
    workers = (os.cpu_count() or 1) if workers is None else workers
    total = len(settings.shards())
    workers = min(workers, total)
    threads = max(1, (os.cpu_count() or 1) // workers)
    t0 = time.perf_counter()
    console.print(f"gradient kernel: {fused.status()}")
    pool = executors.pool(executor, workers, threads, preload=())
    executors.start_workers(pool)
    if workers <= 1:
        numeric_threads.limit(threads)
    try:
        with Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TextColumn("shards"),
                      TimeElapsedColumn(), console=console, transient=False) as bar:
            task = bar.add_task(label, total=total)
            result = sweep_fn(settings, out, pool, lambda shard, cached: bar.advance(task))
    except MemoryError:
        executors.abort(pool)
        raise UserError(f"out of memory running {label}; use smaller sizes or --shard-size (finished shards in "
                        f"{out} are kept and a rerun resumes)") from None
    except BaseException:
        executors.abort(pool)           # an interrupt: the workers' running shards are dropped, not awaited
        raise
    pool.shutdown(cancel_futures=True)
    return result, time.perf_counter() - t0


def print_checks(checks) -> None:
    """The verdicts (`Report`s); conditions every report shares are printed once, as the caption."""
    from attnsvm.interfaces.sweeps.reports import line

    shared = {c.evidence.get("conditions") for c in checks}
    common = shared.pop() if len(shared) == 1 else None
    t = Table(title="the paper's claims on this run", caption=common)
    for col in ("claim", "verdict", "evidence"):
        t.add_column(col, overflow="fold")
    colors = {"SUPPORTED": "green", "REFUTED": "red", "INCONCLUSIVE": "yellow"}
    for c in checks:
        evidence = c.evidence["summary"] if common else line(c)
        t.add_row(c.claim, f"[{colors.get(str(c.verdict), 'white')}]{c.verdict}", evidence)
    console.print(t)


@app.command()
def fig9(n: int = typer.Option(6, "--n", help="inputs per problem"),
         T: int = typer.Option(8, "--T", help="tokens per input"),
         d: str = typer.Option("2:16:2", "--d", help="dimensions: '2,4,8' or 'LO:HI[:STEP]'"),
         trials: int = typer.Option(1000, "--trials", help="random problems per dimension"),
         steps: int = typer.Option(1000, "--steps", help="normalized-GD steps"),
         conventions: str = typer.Option("default", "--conventions",
                                         help="default | authors (the authors' public code: Gaussian-sign labels, "
                                              "lr 0.1 on g/(||g||+eps), saturation band 1e-3/1e-6 with discards)"),
         lr: float | None = typer.Option(None, "--lr", help="normalized-GD step size [default 1; authors 0.1]"),
         loss: str = typer.Option("logistic", "--loss", help="logistic | exponential | correlation"),
         sat_tol: float | None = typer.Option(None, "--sat-tol",
                                                 help="default conventions: saturated iff mean_i (1 - s_{i,alpha_i}) "
                                                      "<= this [1e-6]"),
         init_scale: float = typer.Option(0.01, "--init-scale", help="p0 ~ N(0, init_scale^2 I)"),
         shard_size: int = typer.Option(500, "--shard-size", help="trials per shard (one batched GD run)"),
         seed: int = SeedOpt,
         out: Path = typer.Option(Path("fig9-out"), "--out", help="output directory (reruns resume here)"),
         workers: int = WorkersOpt, executor: str = ExecutorOpt) -> None:
    """Figure 9 (Max-Margin Token Selection, App. E): LMM / GMM convergence of normalized GD vs d."""
    from attnsvm.interfaces.sweeps import fig9 as F

    s = F.preset(conventions, n=n, T=T, dims=int_list(d, "d"), trials=trials, steps=steps, lr=lr, loss=loss,
                 init_scale=init_scale, sat_tol=sat_tol, seed=seed, shard_size=shard_size)
    if sat_tol is not None and s.saturation != "mean":
        raise UserError(f"--sat-tol sets the default conventions' rule; the {conventions} conventions use the "
                        f"saturation band ({s.band[1]:g}, {s.band[0]:g}]")
    (summary, _), secs = execute(F.sweep, s, out, workers, "fig9", executor)
    t = Table(title=f"Figure 9 ({conventions} conventions): n={n}, T={T}, {trials} trials per d, {s.describe()}")
    band = s.saturation == "band"
    for col in ("d", *(("discarded",) if band else ()), "non-sat", "LMM (incl. GMM)", "GMM", "neither (gap<0)",
                "unresolved", "mean corr LMM", "certified"):
        t.add_column(col, justify="right")
    fmt = lambda x: "-" if x is None else f"{x:.3f}"
    for r in summary["per_d"]:
        t.add_row(str(r["d"]), *((str(r["discarded"]),) if band else ()),
                  fmt(None if r["frac_saturated"] is None else 1 - r["frac_saturated"]), fmt(r["frac_lmm"]),
                  fmt(r["frac_gmm"]), fmt(r["frac_negative_gap"]), str(r["unresolved"]),
                  "-" if r["mean_corr_lmm"] is None else f"{r['mean_corr_lmm']:.5f}", str(r["certified_runs"]))
    console.print(t)
    if band:
        console.print(f"fractions are over the kept runs; {summary['discarded']} of {trials * len(s.dims)} runs "
                      f"discarded (a softmax value in ({s.band[1]:g}, {s.band[0]:g}])")
    print_checks(summary["checks"])
    console.print(f"wrote {out / 'fig9.json'}, {out / 'fig9_runs.json'}, {out / 'fig9.png'} in {secs:.1f} s")


@app.command("tfsvm-rank")
def tfsvm_rank(n: str = typer.Option("5,10,15", "--n", help="numbers of inputs"),
               T: str = typer.Option("5,10,15", "--T", help="tokens per input"),
               d: str = typer.Option("1,2,3,4,5,10,15,20", "--d", help="dimensions"),
               trials: int = typer.Option(100, "--trials", help="random instances per (n, T, d)"),
               grid: str = typer.Option("cross", "--grid", help="cross (every n at the smallest T, every T at the "
                                                                "smallest n: the notebook's loop) | product"),
               attention: str = typer.Option("cross", "--attention",
                                             help="cross (the notebook's data: random unit queries) | "
                                                  "self (z_i = x_i1)"),
               conventions: str = typer.Option("default", "--conventions",
                                               help="default (certified W_mm ranks, infeasible apart) | authors (their "
                                                    "cvxpy solves, matrix_rank(tol=1e-7), infeasible = rank 1)"),
               nuclear: bool = typer.Option(True, "--nuclear/--no-nuclear", help="also solve W*_mm (cvxpy, slow)"),
               rank_tol: float = typer.Option(1e-6, "--rank-tol", help="ranks not certified exactly (W*_mm): "
                                                                      "#singular values > tol * sigma_1"),
               seed: int = SeedOpt,
               out: Path = typer.Option(Path("tfsvm-rank-out"), "--out", help="output directory (reruns resume here)"),
               workers: int = WorkersOpt, executor: str = ExecutorOpt) -> None:
    """Transformers as SVMs (svm_rank.ipynb): rank of W_mm (Frobenius) and W*_mm (nuclear) vs d."""
    from attnsvm.interfaces.sweeps import tfsvm_rank as R

    s = R.Settings(ns=int_list(n, "n"), Ts=int_list(T, "T"), dims=int_list(d, "d"), trials=trials, nuclear=nuclear,
                   rank_tol=rank_tol, seed=seed, grid=grid, attention=attention, conventions=conventions)
    (summary, _), secs = execute(R.sweep, s, out, workers, "tfsvm-rank", executor)
    authors = conventions == "authors"
    t = Table(title=f"mean rank of W_mm / W*_mm over {'every instance (infeasible = 1)' if authors else 'the feasible'}"
                    f" of {trials}, [feasible]; columns d")
    t.add_column("n, T")
    for dd in s.dims:
        t.add_column(str(dd), justify="right")
    fro, nuc = ("published_rank_fro", "published_rank_nuc") if authors else ("mean_rank_fro", "mean_rank_nuc")
    fmt = lambda x: "-" if x is None else f"{x:.1f}"
    for nn, TT in s.pairs():
        rows = [r for r in summary["table"] if (r["n"], r["T"]) == (nn, TT)]
        t.add_row(f"{nn}, {TT}", *[f"{fmt(r[fro])}/{fmt(r[nuc])} [{r['feasible']}]" for r in rows])
    console.print(t)
    sci = lambda x: "-" if x is None else f"{x:.2g}"
    if summary.get("nuclear_gap"):
        g = summary["nuclear_gap"]
        console.print(f"W_mm ranks exact (certified); W*_mm ranks at {s.rank_tol:g} sigma_1: smallest kept "
                      f"sigma_r/sigma_1 {sci(g['smallest_kept'])}, largest dropped {sci(g['largest_dropped'])}; "
                      f"{g['unclear']} of {g['instances']} within two decades of the tolerance (not paired)")
    if summary.get("artefacts"):
        a = summary["artefacts"]
        console.print(f"their procedure: {a['infeasible_counted_as_rank_1']} certified-infeasible instances at rank 1; "
                      f"nuclear rank above the clear reference on {a['rank_nuc_above_reference']} of "
                      f"{a['nuclear_compared']}; largest constraint miss of W*_mm "
                      f"{sci(a['largest_nuclear_violation'])}")
    print_checks(summary["checks"])
    console.print(f"wrote {out / 'tfsvm_rank.json'}, {out / 'tfsvm_rank.png'} in {secs:.1f} s")


@app.command("tfsvm-local")
def tfsvm_local(n: int = typer.Option(6, "--n"), T: int = typer.Option(8, "--T"), d: int = typer.Option(10, "--d"),
                runs: int = typer.Option(100, "--runs", help="random problems"),
                steps: int = typer.Option(2000, "--steps", help="normalized-GD steps"),
                lr: float = typer.Option(0.1, "--lr"),
                loss: str = typer.Option("logistic", "--loss"),
                init_scale: float = typer.Option(0.01, "--init-scale", help="entries of W0, K0, Q0 ~ N(0, scale^2)"),
                sat_tol: float = typer.Option(1e-6, "--sat-tol"),
                shard_size: int = typer.Option(25, "--shard-size", help="runs per shard"),
                attention: str = typer.Option("cross", "--attention",
                                              help="cross (the notebook's data: random unit "
                                                   "queries) | self (z_i = x_i1)"),
                kq_normalization: str = typer.Option("per-factor", "--kq-normalization",
                                                     help="per-factor (grad_K, grad_Q separately, as "
                                                          "the authors) | joint"),
                conventions: str = typer.Option("default", "--conventions",
                                                help="default | authors (docs/reproducing.md: torch Linear init "
                                                     "U(+-1/sqrt(d)), g/(||g||+eps) per tensor, the eps "
                                                     "(||K||^2+||Q||^2) ridge, float64 autograd gradient, their cvxpy "
                                                     "SVM solves; sets --kq-normalization per-factor)"),
                seed: int = SeedOpt,
                out: Path = typer.Option(Path("tfsvm-local-out"), "--out",
                                        help="output directory (reruns resume here)"),
                workers: int = WorkersOpt, executor: str = ExecutorOpt) -> None:
    """Transformers as SVMs: W -> W_mm (Frobenius) and K Q^T -> W*_mm (nuclear) under normalized GD."""
    from attnsvm.interfaces.sweeps import tfsvm_local as L

    s = L.preset(conventions, n=n, T=T, d=d, runs=runs, steps=steps, lr=lr, loss=loss, init_scale=init_scale,
                 sat_tol=sat_tol, seed=seed, shard_size=shard_size, kq_normalization=kq_normalization,
                 attention=attention)
    (summary, _), secs = execute(L.sweep, s, out, workers, "tfsvm-local", executor)
    t = Table(title=f"final mean correlation over saturated runs (W: {summary['saturated']['W']}, "
                    f"KQ: {summary['saturated']['KQ']} of {runs})")
    for col in ("", "vs W_mm (Frobenius)", "vs W*_mm (nuclear)"):
        t.add_column(col, justify="right")
    f = summary["final"]
    fmt = lambda x: "-" if x is None else f"{x:.5f}"
    t.add_row("W", fmt(f["W~W_mm"]), fmt(f["W~W*_mm"]))
    t.add_row("K Q^T", fmt(f["KQ~W_mm"]), fmt(f["KQ~W*_mm"]))
    console.print(t)
    print_checks(summary["checks"])
    console.print(f"wrote {out / 'tfsvm_local.json'}, {out / 'tfsvm_local.png'} in {secs:.1f} s")


# ---------------------------------------------------------------- Figures 1, 3(c), 4, 5, 10 (issue 12)

JsonOpt = typer.Option(None, "--json", help="also write the summary and verdicts (strict JSON) to this file")
FigWorkersOpt = typer.Option(1, "--workers", help="worker processes (default 1: in-process; these runs are small)")


def _json_target(path: Path | None) -> Path | None:
    """Validate a --json path before any work (one-line error)."""
    from attnsvm.files import check_output

    return None if path is None else check_output(path)


def _finish_figure(name: str, summary: dict, out: Path, json_file: Path | None, secs: float) -> None:
    """Print the verdicts, write --json, and say what was written."""
    from attnsvm.files import write_json_atomic
    from attnsvm.interfaces.sweeps.reports import json_ready

    print_checks(summary["checks"])
    written = [out / f"{name}.json", out / f"{name}.png"]
    if json_file is not None:
        write_json_atomic(json_file, json_ready(summary))
        written.append(json_file)
    console.print(f"wrote {', '.join(map(str, written))} in {secs:.1f} s")


@app.command()
def fig1(steps: int = typer.Option(1000, "--steps", help="steps per path (horizon H)"),
         rule: str = typer.Option("ngd", "--rule", help="ngd (the authors' normalised step) | gd (fixed step)"),
         lr: float = typer.Option(0.1, "--lr", help="step size (the authors' 0.1)"),
         tol: float = typer.Option(0.01, "--tol", help="directional proxy: 1 - corr(p_H, p_mm) <= tol"),
         window: int = typer.Option(200, "--window", help="steps of each path drawn (the paper's 200)"),
         seed: int = typer.Option(0, "--seed", min=0, help="seed of panel (c)'s random keys"),
         out: Path = typer.Option(Path("fig1-out"), "--out", help="output directory (reruns resume here)"),
         json_file: Path | None = JsonOpt, workers: int = FigWorkersOpt, executor: str = ExecutorOpt) -> None:
    """Figure 1 (Max-Margin Token Selection, Section 2): GD paths, their max-margin limits, <p_t, p_mm> rising."""
    from attnsvm.interfaces.sweeps import fig1 as F

    s = F.Settings(steps=steps, rule=rule, lr=lr, tol=tol, window=window, seed=seed)
    json_file = _json_target(json_file)
    (summary, _), secs = execute(F.sweep, s, out, workers, "fig1", executor)
    t = Table(title=f"Figure 1: {s.describe()}")
    for col in ("panel", "p_0", "limit (closest direction)", "corr(p_H, limit)", "||p_H||", "<p_t,p_mm> decreases"):
        t.add_column(col, justify="right")
    for r in summary["rows"]:
        t.add_row(f"({r['panel']})", str(r["start"]), r["closest"], "-" if r["corr"] is None else f"{r['corr']:.5f}",
                  f"{r['norm']:.1f}",
                  "-" if r["ip_decreases"] is None else str(r["ip_decreases"]))
    console.print(t)
    _finish_figure("fig1", summary, out, json_file, secs)


@app.command()
def fig3c(steps: int = typer.Option(1000, "--steps", help="joint (v, p) steps (horizon H)"),
          lr: float = typer.Option(0.1, "--lr", help="step on each block's normalised gradient (the authors' 0.1)"),
          tol: float = typer.Option(1e-6, "--tol", help="proxy: 1 - probability <= tol at H"),
          window: int = typer.Option(200, "--window", help="iterations drawn in the paper's view"),
          out: Path = typer.Option(Path("fig3c-out"), "--out", help="output directory (reruns resume here)"),
          json_file: Path | None = JsonOpt, workers: int = FigWorkersOpt, executor: str = ExecutorOpt) -> None:
    """Figure 3(c) (Max-Margin Token Selection, Section 3): softmax and logistic probabilities -> 1 in joint (v, p) training."""  # noqa: E501 - one line: typer shows a docstring's line breaks in the command list
    from attnsvm.interfaces.sweeps import fig3c as F

    s = F.Settings(steps=steps, lr=lr, tol=tol, window=window)
    json_file = _json_target(json_file)
    (summary, _), secs = execute(F.sweep, s, out, workers, "fig3c", executor)
    t = Table(title=f"Figure 3(c): joint (v, p) training, {steps} steps")
    for col in ("data", f"softmax @{window}", f"logistic @{window}", "1 - softmax @H", "1 - logistic @H", "v_H", "p_H"):
        t.add_column(col, justify="right")
    for r in summary["rows"]:
        t.add_row(f"({r['dataset']})", f"{r[f'softmax@{window}']:.6f}", f"{r[f'logistic@{window}']:.6f}",
                  f"{r['off_mass@H']:.2e}", f"{r['misclassification@H']:.2e}",
                  str([round(x, 3) for x in r["v"]]), str([round(x, 3) for x in r["p"]]))
    console.print(t)
    _finish_figure("fig3c", summary, out, json_file, secs)


@app.command()
def fig4(trials: int = typer.Option(50, "--trials", help="random datasets of Figure 1(c)'s model"),
         steps: int = typer.Option(200, "--steps", help="horizon H (the figure's 200 iterations)"),
         ngd_lr: float = typer.Option(0.1, "--ngd-lr", help="normalized-GD step (the authors' 0.1)"),
         gd_lr: float = typer.Option(1.0, "--gd-lr", help="fixed GD step (the authors' 1)"),
         level: float = typer.Option(0.99, "--level", help="saturated once mean_i s_{i,opt} >= level"),
         shard_size: int = typer.Option(25, "--shard-size", help="trials per shard (one batched run per rule)"),
         seed: int = SeedOpt,
         out: Path = typer.Option(Path("fig4-out"), "--out", help="output directory (reruns resume here)"),
         json_file: Path | None = JsonOpt, workers: int = FigWorkersOpt, executor: str = ExecutorOpt) -> None:
    """Figure 4 (Max-Margin Token Selection, Section 4): normalized GD saturates the softmax faster; GD's norm levels off."""  # noqa: E501 - one line: typer shows a docstring's line breaks in the command list
    from attnsvm.interfaces.sweeps import fig4 as F

    s = F.Settings(trials=trials, steps=steps, ngd_lr=ngd_lr, gd_lr=gd_lr, level=level, seed=seed,
                   shard_size=shard_size)
    json_file = _json_target(json_file)
    (summary, _), secs = execute(F.sweep, s, out, workers, "fig4", executor)
    t = Table(title=f"Figure 4: {s.describe()}")
    for col in ("rule", f"median first step >= {level:g}", "reached", "median mean_i s_i,opt at H", "median ||p_H||",
                "median rho (growth 2nd half / 1st)"):
        t.add_column(col, justify="right")
    for r in summary["rows"]:
        t.add_row(r["rule"], F._step(r["median_hit"]), f"{r['reached']} of {trials}", f"{r['median_softmax_H']:.6f}",
                  f"{r['median_norm_H']:.2f}", "-" if r["median_rho"] is None else f"{r['median_rho']:.3f}")
    console.print(t)
    _finish_figure("fig4", summary, out, json_file, secs)


@app.command()
def fig5(C: str = typer.Option("1:10,100", "--C", help="scores C of input 1's optimal token: '1,2,5' or 'LO:HI[:STEP]' "
                                                       "(ranges and lists may be joined by commas)"),
         steps: int = typer.Option(1000, "--steps", help="normalized-GD steps (horizon H)"),
         lr: float = typer.Option(0.1, "--lr", help="normalized-GD step (the authors' 0.1)"),
         window: int = typer.Option(200, "--window", help="transient horizon t* where the bias is read "
                                                          "(the paper draws 200)"),
         out: Path = typer.Option(Path("fig5-out"), "--out", help="output directory (reruns resume here)"),
         json_file: Path | None = JsonOpt, workers: int = FigWorkersOpt, executor: str = ExecutorOpt) -> None:
    """Figure 5 (Max-Margin Token Selection, Section 4): the correlation and logistic losses bias GD to different tokens."""  # noqa: E501 - one line: typer shows a docstring's line breaks in the command list
    from attnsvm.interfaces.sweeps import fig5 as F

    Cs = joined_int_list(C, "C")
    s = F.Settings(Cs=Cs, steps=steps, lr=lr, window=window)
    json_file = _json_target(json_file)
    (summary, _), secs = execute(F.sweep, s, out, workers, "fig5", executor)
    t = Table(title=f"Figure 5: {s.describe()}")
    for col in ("C", "b correlation @t*", "b logistic @t*", "b correlation @H", "b logistic @H"):
        t.add_column(col, justify="right")
    by = {(r["loss"], r["C"]): r for r in summary["rows"]}
    for c in Cs:
        t.add_row(str(c), *(f"{by[(loss, c)][key]:+.4f}" for key in ("bias", "bias_H")
                            for loss in ("correlation", "logistic")))
    console.print(t)
    _finish_figure("fig5", summary, out, json_file, secs)


@app.command()
def fig10(n: int = typer.Option(6, "--n", help="inputs per problem"),
          T: int = typer.Option(8, "--T", help="tokens per input"),
          d: str = typer.Option("2:16:2", "--d", help="dimensions: '2,4,8' or 'LO:HI[:STEP]'"),
          trials: int = typer.Option(250, "--trials", help="random problems per dimension (Figure 9: 1000)"),
          steps: int = typer.Option(1000, "--steps", help="normalized-GD steps"),
          conventions: str = typer.Option("default", "--conventions", help="default | authors (as `fig9`)"),
          gap_tol: float = typer.Option(0.05, "--gap-tol", help="a negative gap is small if |g| <= this"),
          min_runs: int = typer.Option(5, "--min-runs", help="negative-gap runs needed to judge their correlation"),
          shard_size: int = typer.Option(500, "--shard-size", help="trials per shard (one batched GD run)"),
          seed: int = SeedOpt,
          out: Path = typer.Option(Path("fig10-out"), "--out", help="output directory; a fig9 directory of the same "
                                                                    "settings is reused"),
          json_file: Path | None = JsonOpt, workers: int = WorkersOpt, executor: str = ExecutorOpt) -> None:
    """Figure 10 (Max-Margin Token Selection, App. E): CDF of Figure 9's minimum score gaps; negative gaps small, runs aligned."""  # noqa: E501 - one line: typer shows a docstring's line breaks in the command list
    from attnsvm.interfaces.sweeps import fig9 as F9
    from attnsvm.interfaces.sweeps import fig10 as F

    s = F9.preset(conventions, n=n, T=T, dims=int_list(d, "d"), trials=trials, steps=steps, seed=seed,
                  shard_size=shard_size)
    params.check_values(F.OPTIONS, {"gap_tol": gap_tol, "min_runs": min_runs})
    json_file = _json_target(json_file)
    run = lambda s_, out_, pool, on_done: F.sweep(s_, out_, pool, on_done, gap_tol=gap_tol, min_runs=min_runs)
    (summary, _), secs = execute(run, s, out, workers, "fig10", executor)
    t = Table(title=f"Figure 10: {summary['saturated']} saturated runs, {summary['negative']} with a negative gap")
    for col in ("d", "saturated", "gap < 0"):
        t.add_column(col, justify="right")
    for r in summary["per_d"]:
        t.add_row(str(r["d"]), str(r["saturated"]), str(r["negative"]))
    console.print(t)
    console.print("quantiles of the gap: " + ", ".join(f"{q}: {v:.4f}" for q, v in summary["quantiles"].items()))
    _finish_figure("fig10", summary, out, json_file, secs)


@app.command("tfsvm-multitoken")
def tfsvm_multitoken(n: int = typer.Option(3, "--n"), T: int = typer.Option(4, "--T"),
                     d: str = typer.Option("4,6,8,10", "--d", help="dimensions"),
                     trials: int = typer.Option(500, "--trials", help="seeds drawn per d (the kept runs are reported)"),
                     steps: int = typer.Option(2001, "--steps", help="normalized-GD steps"),
                     lr: float = typer.Option(0.1, "--lr"),
                     every: int = typer.Option(100, "--every", help="record W every this many steps"),
                     init_scale: float = typer.Option(0.01, "--init-scale", help="W0 ~ N(0, scale^2) "
                                                                                 "(default conventions)"),
                     conventions: str = typer.Option("default", "--conventions",
                                                     help="default | authors (torch Linear init, g/(||g||+eps), "
                                                          "float64 autograd gradient, their cvxpy generalized SVM)"),
                     shard_size: int = typer.Option(125, "--shard-size", help="seeds per shard (one batched run)"),
                     seed: int = typer.Option(1, "--seed", min=0, help="generator seed of the first "
                                                                       "draw (the notebook's 1)"),
                     out: Path = typer.Option(Path("tfsvm-multitoken-out"), "--out",
                                              help="output directory (reruns resume here)"),
                     json_file: Path | None = JsonOpt, workers: int = WorkersOpt, executor: str = ExecutorOpt) -> None:
    """Transformers as SVMs (multi_token_converge.ipynb): ReLU head, 1 - corr with the generalized SVM vs iterations."""
    from attnsvm.interfaces.sweeps import tfsvm_multitoken as M

    s = M.preset(conventions, n=n, T=T, dims=int_list(d, "d"), trials=trials, steps=steps, lr=lr, every=every,
                 init_scale=init_scale, seed=seed, shard_size=shard_size)
    json_file = _json_target(json_file)
    (summary, _), secs = execute(M.sweep, s, out, workers, "tfsvm-multitoken", executor)
    t = Table(title=f"multi-token convergence: {s.describe()}")
    for col in ("d", "kept", "discarded", "finite", "infeasible", "no -1 label", "multi-token",
                "1-corr W^SVMeq", "1-corr W^mm", "1-corr W^1tok"):
        t.add_column(col, justify="right")
    fmt = lambda c: "-" if c is None or c[-1] is None else f"{c[-1]:.2e}"
    for r in summary["table"]:
        t.add_row(str(r["d"]), *(str(r[k]) for k in ("kept", "discarded", "finite", "infeasible", "no-negative-label",
                                                     "multi_token")),
                  fmt(r["1-corr_svmeq"]), fmt(r["1-corr_mm"]), fmt(r["1-corr_single"]))
    console.print(t)
    _finish_figure("tfsvm_multitoken", summary, out, json_file, secs)


@app.command("tfsvm-paths")
def tfsvm_paths(steps: int = typer.Option(2000, "--steps", help="normalized-GD steps"),
                lr: float = typer.Option(0.1, "--lr"),
                starts: int = typer.Option(8, "--starts", help="random K0 draws per picture (Q0 = 0)"),
                conventions: str = typer.Option("default", "--conventions",
                                                help="default | authors (g/(||g||+eps) per tensor, the eps ridge, "
                                                     "float64 autograd gradient, their cvxpy SVM solves)"),
                seed: int = SeedOpt,
                out: Path = typer.Option(Path("tfsvm-paths-out"), "--out",
                                        help="output directory (reruns resume here)"),
                json_file: Path | None = JsonOpt, workers: int = FigWorkersOpt, executor: str = ExecutorOpt) -> None:
    """Transformers as SVMs (visualization notebooks): GD paths of W and (K, Q) beside W_mm and W*_mm."""
    from attnsvm.interfaces.sweeps import tfsvm_paths as G

    s = G.preset(conventions, steps=steps, lr=lr, starts=starts, seed=seed)
    json_file = _json_target(json_file)
    (summary, _), secs = execute(G.sweep, s, out, workers, "tfsvm-paths", executor)
    t = Table(title=f"GD paths: {s.describe()}")
    for col in ("picture", "best_ids", "corr(W_mm, W*_mm)", "corr(W_H, W_mm)", "corr(W_H, W*_mm)",
                "min corr(KQ_H, W*_mm)", "max corr(KQ_H, W_mm)"):
        t.add_column(col, justify="right")
    fmt = lambda x: "-" if x is None else f"{x:.5f}"
    for r in summary["pictures"]:
        f = r["final"]
        t.add_row(r["picture"], str(r["best"]), fmt(r["corr(W_mm, W*_mm)"]), fmt(f["W~W_mm"]), fmt(f["W~W*_mm"]),
                  fmt(None if f["KQ~W*_mm"] is None else min(f["KQ~W*_mm"])),
                  fmt(None if f["KQ~W_mm"] is None else max(f["KQ~W_mm"])))
    console.print(t)
    _finish_figure("tfsvm_paths", summary, out, json_file, secs)
