"""The checks as a user runs them: `attnsvm check all --budget B` end to end, and per check the
instances that met its hypotheses, how many held, the rate (instances per second of the part,
measured in process), and the power its SUPPORTED states (a failure rate above 3/N would have
shown). Optionally with busy loops beside it (a loaded machine) and on another device, and a
comparison of two runs: the same seed must give the same verdicts, counts and witnesses.

    python benchmarks/bench_checks.py [--budget quick] [--seed 0] [--load 2] [--device cpu|cuda]
                                      [--before OLD.json] [--out run.json]
    python benchmarks/bench_checks.py --compare A.json B.json

Targets (issue 19): at quick, every check evaluates >= 1000 instances meeting its hypotheses
(or covers its space exhaustively; 200 at least where the closing note says why); the whole
command within 90 s on the idle 2-core machine; standard (10x quick's instances) within 15
minutes. End-to-end wall time and the children's CPU time are printed with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_INSTANCES = 1000
FLOOR_INSTANCES = 200


def run_command(budget: str, seed: int, out: Path, load: int, device: str | None, workers: int | None) -> dict:
    """`attnsvm check all` end to end (wall and children's CPU seconds), with `load` busy loops."""
    env = dict(os.environ)
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    cmd = [sys.executable, "-m", "attnsvm", "check", "all", "--budget", budget, "--seed", str(seed), "--json", str(out)]
    if workers:
        cmd += ["--workers", str(workers)]
    busy = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(load)]
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load_before = os.getloadavg()[0]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        for b in busy:
            b.kill()
            b.wait()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"command": " ".join(cmd[1:]), "exit": proc.returncode, "wall_seconds": round(wall, 2),
            "cpu_seconds_without_busy_loops": round(cpu, 2), "load_before": round(load_before, 2),
            "load_after": round(os.getloadavg()[0], 2), "busy_loops": load,
            "tail": proc.stdout.strip().splitlines()[-1:]}


def per_check(reports: list[dict]) -> dict[str, dict]:
    """id -> what the check part shows: verdict, instances meeting the hypotheses, held, rate, power."""
    rows = {}
    for r in reports:
        if r["part"] != "check":
            continue
        e = r["evidence"]
        met = (e.get("evaluated") or 0) - (e.get("not_applicable") or 0)
        exhausted = bool(e.get("search", {}).get("exhaustive", {}).get("exhausted"))
        seconds = e.get("search_seconds") or r["seconds"]
        rows[r["id"]] = {"verdict": r["verdict"], "met": met, "held": e.get("instances"),
                         "undecided": e.get("inconclusive"),
                         "exhausted": exhausted, "seconds": seconds,
                         "rate": round(met / seconds, 1) if seconds else None,
                         "power": round(3 / e["instances"], 4) if e.get("instances") else None,
                         "target": "refuted" if r["verdict"] == "REFUTED" else "exhaustive" if exhausted else
                         "ok" if met >= TARGET_INSTANCES else "floor" if met >= FLOOR_INSTANCES else "below"}
    return rows


def table(rows: dict[str, dict], before: dict[str, dict] | None = None) -> str:
    head = (f"{'check':32s} {'verdict':12s} {'met':>6s} {'held':>6s} {'undec':>5s} {'s':>6s} {'inst/s':>8s} "
            f"{'power':>7s} target")
    if before:
        head += "   before: met, s"
    lines = [head]
    for id, r in rows.items():
        line = (f"{id:32s} {r['verdict']:12s} {r['met']:6d} {r['held'] or 0:6d} {r['undecided'] or 0:5d} "
                f"{r['seconds']:6.2f} {r['rate'] or 0:8.1f} {r['power'] or 0:7.4f} {r['target']}")
        if before and id in before:
            line += f"   {before[id]['met']:6d} {before[id]['seconds']:6.2f}"
        lines.append(line)
    short = [id for id, r in rows.items() if r["target"] == "below"]
    lines.append(f"{sum(r['target'] in ('ok', 'exhaustive') for r in rows.values())} of {len(rows)} checks at >= "
                 f"{TARGET_INSTANCES} instances or exhaustive ({sum(r['target'] == 'refuted' for r in rows.values())} "
                 f"refuted: one counterexample suffices); below {FLOOR_INSTANCES}: {', '.join(short) or 'none'}")
    return "\n".join(lines)


def signature(reports: list[dict]) -> dict[str, tuple]:
    """What must not change between two runs of one seed: verdict, counts, witness instance."""
    out = {}
    for r in reports:
        e = r["evidence"]
        w = r.get("witness") or {}
        out[f"{r['id']} {r['part']}"] = (r["verdict"], e.get("evaluated"), e.get("instances"), e.get("inconclusive"),
                                         json.dumps(w.get("instance"), sort_keys=True))
    return out


def compare(a: Path, b: Path) -> int:
    A, B = (signature(json.loads(p.read_text())["reports"]) for p in (a, b))
    diff = [k for k in A.keys() | B.keys() if A.get(k) != B.get(k)]
    for k in sorted(diff):
        print(f"differs: {k}: {A.get(k, 'missing')[:4]} vs {B.get(k, 'missing')[:4]}")
    print(f"{len(A)} parts compared: {'identical' if not diff else f'{len(diff)} differ'}")
    return 1 if diff else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", default="quick")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--load", type=int, default=0, help="busy loops (yes >/dev/null) running beside the command")
    ap.add_argument("--device", choices=("cpu", "cuda"), default=None, help="cpu hides any GPU; cuda requires one")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--before", type=Path, help="an earlier run's JSON to compare instances and seconds with")
    ap.add_argument("--out", type=Path, help="keep this run's report JSON here")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            print("error: --device cuda: no CUDA device here", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp) / "run.json"
        info = run_command(args.budget, args.seed, out, args.load, args.device, args.workers)
        reports = json.loads(out.read_text())["reports"]
    before = per_check(json.loads(args.before.read_text())["reports"]) if args.before else None
    print(json.dumps(info, indent=1))
    print(table(per_check(reports), before))
    return 0


if __name__ == "__main__":
    sys.exit(main())
