"""`attnsvm reproduce ...`: the papers' experiments as resumable, batched sweeps."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from attnsvm.errors import UserError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Reproduce the papers' experiments as batched, resumable sweeps.")
console = Console()

WorkersOpt = typer.Option(None, "--workers", help="worker processes (default: CPU count); 1 = in-process")
ExecutorOpt = typer.Option("local", "--executor", help="local, dask (a local Dask cluster) or tcp://HOST:PORT "
                                                       "(an existing Dask scheduler; pip install \"attnsvm[dask]\")")
SeedOpt = typer.Option(0, "--seed", help="random seed (each trial has its own stream from (seed, d, trial))")


def int_list(text: str, name: str) -> tuple[int, ...]:
    """'2,4,6' or '2:16:2' (inclusive range) -> positive ints."""
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
            vals = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise UserError(f"--{name}: expected integers like '2,4,8' or 'LO:HI[:STEP]', got {text!r}") from None
    if not vals or any(v < 1 for v in vals):
        raise UserError(f"--{name}: expected positive integers, got {text!r}")
    return vals


def positive(value, name: str, strict: bool = True):
    if (value <= 0) if strict else (value < 0):
        raise UserError(f"--{name} must be {'positive' if strict else 'non-negative'}, got {value}")
    return value


def execute(sweep_fn, settings, out: Path, workers: int | None, label: str, executor: str = "local"):
    """Run a sweep with a rich progress bar over shards; returns (result, seconds). No more
    worker processes than shards; one worker runs in-process. The kernel is loaded (and its
    status printed) before local workers fork, so they start with it."""
    from attnsvm.attention import fused
    from attnsvm.interfaces import executors

    workers = (os.cpu_count() or 1) if workers is None else positive(workers, "workers")
    total = len(settings.shards())
    workers = min(workers, total)
    threads = max(1, (os.cpu_count() or 1) // workers)
    t0 = time.perf_counter()
    console.print(f"gradient kernel: {fused.status()}")
    pool = executors.pool(executor, workers, threads, preload=())
    executors.start_workers(pool)
    if workers <= 1:
        executors.torch_threads(threads)
    try:
        with Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TextColumn("shards"),
                      TimeElapsedColumn(), console=console, transient=False) as bar:
            task = bar.add_task(label, total=total)
            result = sweep_fn(settings, out, pool, lambda shard, cached: bar.advance(task))
    finally:
        pool.shutdown(cancel_futures=True)
    return result, time.perf_counter() - t0


def print_checks(checks: list[dict]) -> None:
    """The verdicts; conditions every check shares (`conditions`) are printed once, as the caption."""
    shared = {c.get("conditions") for c in checks}
    common = shared.pop() if len(shared) == 1 else None
    t = Table(title="the paper's claims on this run", caption=common)
    for col in ("claim", "verdict", "evidence"):
        t.add_column(col, overflow="fold")
    colors = {"SUPPORTED": "green", "REFUTED": "red", "INCONCLUSIVE": "yellow"}
    for c in checks:
        evidence = c["evidence"].removesuffix(f"; {common}") if common else c["evidence"]
        t.add_row(c["claim"], f"[{colors.get(c['verdict'], 'white')}]{c['verdict']}", evidence)
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
         lr: Optional[float] = typer.Option(None, "--lr", help="normalized-GD step size [default 1; authors 0.1]"),
         loss: str = typer.Option("logistic", "--loss", help="logistic | exponential | correlation"),
         sat_tol: Optional[float] = typer.Option(None, "--sat-tol",
                                                 help="default conventions: saturated iff mean_i (1 - s_{i,alpha_i}) "
                                                      "<= this [1e-6]"),
         init_scale: float = typer.Option(0.01, "--init-scale", help="p0 ~ N(0, init_scale^2 I)"),
         shard_size: int = typer.Option(500, "--shard-size", help="trials per shard (one batched GD run)"),
         seed: int = SeedOpt,
         out: Path = typer.Option(Path("fig9-out"), "--out", help="output directory (reruns resume here)"),
         workers: int = WorkersOpt, executor: str = ExecutorOpt) -> None:
    """Figure 9 (Max-Margin Token Selection, App. E): LMM / GMM convergence of normalized GD vs d."""
    from attnsvm.interfaces.sweeps import fig9 as F

    for name, v in (("n", n), ("T", T), ("trials", trials), ("steps", steps), ("lr", lr), ("sat-tol", sat_tol),
                    ("shard-size", shard_size)):
        if v is not None:
            positive(v, name)
    if T < 2:
        raise UserError(f"--T must be at least 2, got {T}")
    positive(init_scale, "init-scale", strict=False)
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
               d: str = typer.Option("1:20", "--d", help="dimensions"),
               trials: int = typer.Option(5, "--trials", help="random instances per (n, T, d)"),
               nuclear: bool = typer.Option(True, "--nuclear/--no-nuclear", help="also solve W*_mm (cvxpy, slow)"),
               rank_tol: float = typer.Option(1e-5, "--rank-tol", help="rank = #singular values > tol * sigma_1"),
               seed: int = SeedOpt,
               out: Path = typer.Option(Path("tfsvm-rank-out"), "--out", help="output directory (reruns resume here)"),
               workers: int = WorkersOpt, executor: str = ExecutorOpt) -> None:
    """Transformers as SVMs: rank of W_mm (Frobenius) and W*_mm (nuclear) vs d."""
    from attnsvm.interfaces.sweeps import tfsvm_rank as R

    positive(trials, "trials")
    positive(rank_tol, "rank-tol")
    s = R.Settings(ns=int_list(n, "n"), Ts=int_list(T, "T"), dims=int_list(d, "d"), trials=trials, nuclear=nuclear,
                   rank_tol=rank_tol, seed=seed)
    if min(s.Ts) < 2:
        raise UserError("--T: need at least 2 tokens per input")
    (summary, _), secs = execute(R.sweep, s, out, workers, "tfsvm-rank", executor)
    t = Table(title=f"mean rank of W_mm / W*_mm (feasible of {trials}); columns d")
    t.add_column("n, T")
    for dd in s.dims:
        t.add_column(str(dd), justify="right")
    for nn in s.ns:
        for TT in s.Ts:
            rows = [r for r in summary["table"] if (r["n"], r["T"]) == (nn, TT)]
            cell = lambda r: "-" if r["mean_rank_fro"] is None else (
                f"{r['mean_rank_fro']:.1f}/{'-' if r['mean_rank_nuc'] is None else format(r['mean_rank_nuc'], '.1f')}")
            t.add_row(f"{nn}, {TT}", *[cell(r) for r in rows])
    console.print(t)
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
                kq_normalization: str = typer.Option("per-factor", "--kq-normalization",
                                                     help="per-factor (grad_K, grad_Q separately, as the authors) | joint"),
                seed: int = SeedOpt,
                out: Path = typer.Option(Path("tfsvm-local-out"), "--out", help="output directory (reruns resume here)"),
                workers: int = WorkersOpt, executor: str = ExecutorOpt) -> None:
    """Transformers as SVMs: W -> W_mm (Frobenius) and K Q^T -> W*_mm (nuclear) under normalized GD."""
    from attnsvm.attention.losses import get_loss
    from attnsvm.interfaces.sweeps import tfsvm_local as L

    get_loss(loss)
    for name, v in (("n", n), ("T", T), ("d", d), ("runs", runs), ("steps", steps), ("lr", lr), ("sat-tol", sat_tol),
                    ("shard-size", shard_size)):
        positive(v, name)
    positive(init_scale, "init-scale", strict=False)
    if kq_normalization not in ("per-factor", "joint"):
        raise UserError(f"--kq-normalization must be per-factor or joint, got {kq_normalization!r}")
    s = L.Settings(n=n, T=T, d=d, runs=runs, steps=steps, lr=lr, loss=loss, init_scale=init_scale, sat_tol=sat_tol,
                   seed=seed, shard_size=shard_size, kq_normalization=kq_normalization)
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
