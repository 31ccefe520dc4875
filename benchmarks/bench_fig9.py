"""Figure-9 benchmark: the command end to end and the batched sweep in-process, against the
one-trial-at-a-time reference.

    python benchmarks/bench_fig9.py [--workers 2] [--subset 10] [--trials 1000] [--repeats 3] [--seed 0]
                                    [--conventions default|authors]

1. end to end, what a user sees: `python -m attnsvm reproduce fig9 --d 8 --trials N` and the
   full sweep (`--d 2:16:2`), each `--repeats` times in a fresh directory from this checkout
   (process start, imports, kernel load, worker start-up, sweep, JSON, PNG): wall times, the
   machine's load before each, peak memory of the largest process;
2. the full batched sweep in-process (`fig9.sweep`, as before): wall and CPU time, peak memory;
3. the reference (`reference_fig9`, cancellation-free gradient) on the first `--subset`
   trials of every d, same seeds: per-trial times, the per-trial speed-up of (1) and (2)
   against it, and whether the batched sweep classifies each trial the same way (every
   disagreement listed with its explanation); the end-to-end runs must reproduce the
   in-process records exactly;
4. the autograd reference on the same trials: how often it changes the selected tokens or
   the class, and its median correlation with its own SVM direction;
5. the batched GD step (the fused kernel driven from numpy, as the sweep runs it) against its
   own floor: the two batched mat-vecs the step performs (`Keys.logits`: a = K p,
   `Keys.combine`: sum_t w_t k_t) over the same arrays; also the einsum mat-vecs used before.
Targets are printed with PASS/FAIL. The 1-minute load average is printed with every figure: on
shared cores wall times are inflated by other processes (CPU time is not).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]      # this checkout's attnsvm, then the reference
from attnsvm import dynamics  # noqa: E402
from attnsvm.attention import fused  # noqa: E402
from attnsvm.interfaces.executors import local  # noqa: E402
from attnsvm.interfaces.sweeps import fig9  # noqa: E402

import reference_fig9 as ref  # noqa: E402


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def load() -> float:
    return os.getloadavg()[0]


def cpu_seconds() -> float:
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def end_to_end(args: list[str], repeats: int) -> tuple[list[float], list[float], Path]:
    """Wall seconds of `python -m attnsvm reproduce fig9 ARGS` from this checkout, each run in a
    fresh directory, with the load before each run; returns (walls, loads, last output dir)."""
    walls, loads = [], []
    for _ in range(repeats):
        out = Path(tempfile.mkdtemp(prefix="bench-fig9-e2e-")) / "out"
        loads.append(load())
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "attnsvm", "reproduce", "fig9", *args, "--out", str(out)],
                           cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        walls.append(time.perf_counter() - t0)
        if r.returncode != 0:
            sys.exit(f"attnsvm reproduce fig9 {' '.join(args)} failed:\n{r.stderr}")
    return walls, loads, out


def describe(walls: list[float], loads: list[float], trials: int) -> str:
    return (f"best {min(walls):.2f} s, median {statistics.median(walls):.2f} s of {len(walls)} "
            f"({', '.join(f'{w:.2f}' for w in walls)}; load before each {', '.join(f'{x:.2f}' for x in loads)}); "
            f"{min(walls) / trials * 1e3:.2f} ms per trial")


def full_sweep(s: fig9.Settings, workers: int) -> tuple[list[dict], float, float]:
    out = Path(tempfile.mkdtemp(prefix="bench-fig9-"))
    ex = local(workers, max(1, (os.cpu_count() or 1) // workers), preload=("torch", fig9.__name__))
    c0, t0 = cpu_seconds(), time.perf_counter()
    try:
        summary, records = fig9.sweep(s, out, ex)
    finally:
        if hasattr(ex, "shutdown"):
            ex.shutdown()
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    rss = [resource.getrusage(w).ru_maxrss / 1024 for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    peak = rss[0] + workers * rss[1] if workers > 1 else rss[0]
    print(f"in-process sweep: {len(records)} trials in {wall:.1f} s wall, {cpu:.1f} s CPU (load {load():.2f}); "
          f"peak memory <= {peak:.0f} MB (main {rss[0]:.0f} MB + {workers} x worker {rss[1]:.0f} MB); output {out}")
    for c in summary["checks"]:
        print(f"  [{c.verdict}] {c.claim}: {c.evidence['summary']}")
    return records, wall, peak


def explain(a: dict, b: dict) -> str:
    if a["alpha"] != b["alpha"]:
        return (f"different selected tokens (batched {b['alpha']} vs reference {a['alpha']}); "
                f"saturation {b['unsat']:.1e} vs {a['unsat']:.1e}: the trajectories parted")
    if (a["cls"] == "non-saturated") != (b["cls"] == "non-saturated"):
        return f"same tokens, saturation {b['unsat']:.3e} vs {a['unsat']:.3e} on two sides of sat_tol"
    return f"same tokens, score gap {b['gap']} vs {a['gap']} (neighbour sets differ)"


def best_times(fns: dict, calls: dict, repeats: int = 15) -> dict:
    """Seconds per call of each fns[k](), the best of `repeats` timings of calls[k] calls, the
    timings of the different fns interleaved so that all see the same load."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeats):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(calls[k]):
                fn()
            best[k] = min(best[k], (time.perf_counter() - t0) / calls[k])
    return best


def gd_step_and_floor(s: fig9.Settings, d: int, steps: int = 1000) -> tuple[int, float, float, float]:
    """(d, seconds per batched GD step as the sweep takes it (the kernel's normalized_gd), per
    floor step (the step's own two mat-vecs), per einsum mat-vecs), at a saturated point."""
    X, Y, v, p0 = fig9.instances(s, d, range(min(s.trials, s.shard_size)))
    gamma = fig9.scores(X, Y, v)
    kernel = fused.FusedGrad.of_arrays(X, gamma, s.loss)
    p = kernel.normalized_gd(p0, 200, s.lr).p
    prob = dynamics.Problem.from_arrays(X, gamma, s.loss, device="cpu")
    keys, w, pt = prob.keys, torch.randn(prob.gamma.shape, dtype=torch.float64), torch.as_tensor(p)
    t = best_times({"step": lambda: kernel.normalized_gd(p, steps, s.lr),
                    "floor": lambda: (keys.logits(pt), keys.combine(w.view(len(pt), -1))),
                    "einsum": lambda: (torch.einsum("bntd,bd->bnt", prob.K, pt),
                                       torch.einsum("bnt,bntd->bd", w, prob.K))},
                   {"step": 1, "floor": steps // 10, "einsum": steps // 10}, repeats=7)
    return d, t["step"] / (steps + 1), t["floor"], t["einsum"]


def gd_floor(s: fig9.Settings, threads: int) -> list[tuple[int, float, float, float]]:
    """`gd_step_and_floor` for every d with `threads` torch threads."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return [gd_step_and_floor(s, d) for d in s.dims]
    finally:
        torch.set_num_threads(before)


def same_records(path: Path, records: list[dict]) -> bool:
    """Does an end-to-end run's fig9_runs.json hold exactly these records?"""
    return json.loads(path.read_text()) == json.loads(json.dumps(records))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--subset", type=int, default=10, help="reference trials per d")
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3, help="end-to-end runs of each command")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--conventions", default="default", choices=sorted(fig9.PRESETS))
    args = ap.parse_args()
    s = fig9.preset(args.conventions, trials=args.trials, seed=args.seed)
    print(f"load {load():.2f} at start on {os.cpu_count()} CPUs; torch {torch.__version__}; fused "
          f"kernel {fused.status()}")

    common = ["--trials", str(args.trials), "--seed", str(args.seed), "--workers", str(args.workers),
              "--conventions", args.conventions]
    e2e_d8, e2e_d8_loads, d8_out = end_to_end(["--d", "8", *common], args.repeats)
    print(f"end to end, attnsvm reproduce fig9 --d 8 --trials {args.trials}: "
          f"{describe(e2e_d8, e2e_d8_loads, args.trials)}")
    e2e_full, e2e_full_loads, full_out = end_to_end(["--d", "2:16:2", *common], args.repeats)
    e2e_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"end to end, attnsvm reproduce fig9 (8 dimensions, {len(s.dims) * args.trials} trials): "
          f"{describe(e2e_full, e2e_full_loads, len(s.dims) * args.trials)}; largest process {e2e_peak:.0f} MB")

    records, wall, peak = full_sweep(s, args.workers)
    batched = {(r["d"], r["trial"]): r for r in records}
    per_trial = wall / len(records)
    reproduced = same_records(full_out / "fig9_runs.json", records) and \
        same_records(d8_out / "fig9_runs.json", [r for r in records if r["d"] == 8])

    keys = [(d, t) for d in s.dims for t in range(min(args.subset, s.trials))]
    torch.set_num_threads(1)
    results = {}
    for grad in ("cancellation-free", "autograd"):
        times, recs = {}, {}
        for k in keys:
            t0 = time.perf_counter()
            recs[k] = ref.trial(s, *k, gradient=grad)
            times[k] = time.perf_counter() - t0
        results[grad] = (recs, times)
    cf, cf_times = results["cancellation-free"]
    ag, _ = results["autograd"]
    ref_per_trial = statistics.mean(cf_times.values())
    ref_d8 = statistics.mean(t for (d, _), t in cf_times.items() if d == 8) if 8 in s.dims else float("nan")
    ratio = ref_per_trial / per_trial
    ratio_e2e_full = ref_per_trial / (min(e2e_full) / len(records))
    ratio_e2e_d8 = ref_d8 / (min(e2e_d8) / args.trials)

    same = [k for k in keys if cf[k]["cls"] == batched[k]["cls"]]
    print(f"\nreference (cancellation-free): {len(keys)} trials, {ref_per_trial * 1e3:.0f} ms per trial "
          f"(median {statistics.median(cf_times.values()) * 1e3:.0f} ms; at d=8 {ref_d8 * 1e3:.0f} "
          f"ms; load {load():.2f})")
    print(f"per-trial speed-up against it: end to end d=8 {ratio_e2e_d8:.0f}x ({min(e2e_d8) / args.trials * 1e3:.2f} "
          f"ms per trial), end to end all d {ratio_e2e_full:.0f}x ({min(e2e_full) / len(records) * 1e3:.2f} ms), "
          f"in-process sweep {ratio:.0f}x ({per_trial * 1e3:.2f} ms)")
    print(f"agreement: {len(same)} of {len(keys)} trials classified identically ({len(same) / len(keys):.1%}); "
          f"end-to-end records {'identical to' if reproduced else 'DIFFERENT from'} the in-process ones")
    for k in keys:
        if k not in same:
            print(f"  disagreement d={k[0]} trial={k[1]}: batched {batched[k]['cls']}, reference {cf[k]['cls']}: "
                  f"{explain(cf[k], batched[k])}")

    tok = sum(ag[k]["alpha"] != cf[k]["alpha"] for k in keys)
    cls = sum(ag[k]["cls"] != cf[k]["cls"] for k in keys)
    corr_cf = [cf[k]["corr"] for k in keys if cf[k]["corr"] is not None]
    corr_ag = [ag[k]["corr"] for k in keys if ag[k]["corr"] is not None]
    print(f"\nautograd through softmax vs cancellation-free, same trials: different selected tokens in {tok} of "
          f"{len(keys)}, different class in {cls}; median corr with own SVM direction "
          f"{statistics.median(corr_ag):.5f} (autograd, {len(corr_ag)} saturated) vs "
          f"{statistics.median(corr_cf):.5f} (cancellation-free, {len(corr_cf)}); "
          f"min {min(corr_ag):.4f} vs {min(corr_cf):.4f}")
    for k in keys:
        if ag[k]["cls"] != cf[k]["cls"] or ag[k]["alpha"] != cf[k]["alpha"]:
            print(f"  d={k[0]} trial={k[1]}: autograd {ag[k]['cls']} {ag[k]['alpha']} vs "
                  f"{cf[k]['cls']} {cf[k]['alpha']}")

    threads = max(1, (os.cpu_count() or 1) // args.workers)
    rows = gd_floor(s, threads)
    print(f"\nbatched GD step (fused kernel from numpy) vs its floor (its two batched mat-vecs), batch "
          f"{min(s.trials, s.shard_size)}, {threads} thread(s), best of 7 (load {load():.2f}):")
    for d, st, fl, es in rows:
        print(f"  d={d:2d}: step {st * 1e3:.3f} ms, floor {fl * 1e3:.3f} ms, ratio {st / fl:.2f} "
              f"(einsum mat-vecs {es * 1e3:.3f} ms: ratio {st / es:.2f})")
    tot_step, tot_floor, tot_einsum = (sum(r[k] for r in rows) for k in (1, 2, 3))

    print(f"\nload {load():.2f} at end")
    print("targets:")
    print(f"  [{verdict(ratio_e2e_d8 >= 300)}] reproduce fig9 --d 8 end to end >= 300x faster per trial than the "
          f"reference: {ratio_e2e_d8:.0f}x")
    print(f"  [{verdict(min(e2e_full) <= 8)}] full Figure-9 sweep end to end <= 8 s on 2 cores: {min(e2e_full):.2f} s "
          f"(median {statistics.median(e2e_full):.2f} s)")
    print(f"  [{verdict(wall <= 30)}] full Figure-9 sweep in-process <= 30 s on 2 cores: {wall:.1f} s")
    print(f"  [{verdict(max(peak, e2e_peak) < 2048)}] peak memory < 2 GB: {peak:.0f} MB in-process, largest "
          f"end-to-end process {e2e_peak:.0f} MB")
    print(f"  [{verdict(ratio >= 200)}] in-process sweep >= 200x faster per trial than the reference: {ratio:.0f}x")
    print(f"  [{verdict(tot_step <= 2 * tot_floor)}] batched GD step within 2x of its floor: "
          f"{tot_step / tot_floor:.2f}x over all d (d=16: {rows[-1][1] / rows[-1][2]:.2f}x; "
          f"{tot_step / tot_einsum:.2f}x the einsum mat-vecs)")
    print(f"  [{verdict(len(same) >= 0.995 * len(keys) and reproduced)}] batched and reference agree on >= 99.5% "
          f"of trials: {len(same) / len(keys):.1%}; end to end reproduces in-process: {reproduced}")


if __name__ == "__main__":
    main()
