"""Start-up of the command line: `attnsvm --help` and `attnsvm list` end to end, beside
`python -c "import numpy"` measured the same way, and what each imports (in process).

    python benchmarks/bench_cli.py [--runs 20]

Target: each command within 4x the start-up of `python -c "import numpy"` (commands import the
layers they need inside their bodies; `attnsvm.claims` and `attnsvm.files` load no numerics).
End-to-end times come from hyperfine when it is installed (apt-get install hyperfine), else
from interleaved subprocess runs; both report the median and the minimum, and the ratio uses
the medians. CPU time (user + sys) is printed too: it is less disturbed by a busy machine.
Run from the repository root (`python -m attnsvm` then runs this checkout).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TARGET = 4.0
COMMANDS = {"import numpy": [sys.executable, "-c", "import numpy"],
            "attnsvm --help": [sys.executable, "-m", "attnsvm", "--help"],
            "attnsvm list": [sys.executable, "-m", "attnsvm", "list"]}
HEAVY = ("numpy", "torch", "sympy", "scipy", "hypothesis", "cvxpy", "matplotlib", "attnsvm.claims.search")


def with_hyperfine(runs: int) -> dict[str, dict]:
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmds = [shlex.join(c) for c in COMMANDS.values()]
        subprocess.run(["hyperfine", "-N", "--warmup", "3", "--runs", str(runs), "--export-json", f.name, *cmds],
                       check=True, capture_output=True)
        res = json.load(open(f.name))["results"]
    return {name: {"median": r["median"], "min": r["min"], "cpu": r["user"] + r["system"]}
            for name, r in zip(COMMANDS, res)}


def with_subprocess(runs: int) -> dict[str, dict]:
    times: dict[str, list] = {k: [] for k in COMMANDS}
    cpu: dict[str, list] = {k: [] for k in COMMANDS}
    for k in range(runs + 3):                              # interleaved; the first three are warm-up
        for name, cmd in COMMANDS.items():
            c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t = time.perf_counter() - t0
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if k >= 3:
                times[name].append(t)
                cpu[name].append(c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime)
    return {n: {"median": statistics.median(times[n]), "min": min(times[n]), "cpu": statistics.median(cpu[n])}
            for n in COMMANDS}


def imports(cmd: list[str]) -> tuple[float, list[str], list[tuple[float, str]]]:
    """(total import seconds, heavy modules loaded, the slowest top-level imports) from -X importtime."""
    err = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], capture_output=True, text=True).stderr
    rows = [m.groups() for m in re.finditer(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", err)]
    top = [(int(cum) / 1e6, name) for _, cum, indent, name in rows if len(indent) == 1]
    loaded = {name for *_, name in rows}
    return sum(t for t, _ in top), [h for h in HEAVY if h in loaded], sorted(top, reverse=True)[:4]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    tool = "hyperfine" if shutil.which("hyperfine") else "subprocess"
    res = with_hyperfine(args.runs) if tool == "hyperfine" else with_subprocess(args.runs)
    base = res["import numpy"]
    print(f"end to end ({tool}, {args.runs} runs, load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)")
    print(f"{'command':<16} {'median':>9} {'min':>9} {'cpu':>9} {'x numpy':>8}  target <= {TARGET:g}x")
    ok = True
    for name, r in res.items():
        ratio = r["median"] / base["median"]
        verdict = "" if name == "import numpy" else ("PASS" if ratio <= TARGET else "FAIL")
        ok &= verdict != "FAIL"
        print(f"{name:<16} {r['median'] * 1e3:7.0f}ms {r['min'] * 1e3:7.0f}ms {r['cpu'] * 1e3:7.0f}ms "
              f"{ratio:8.2f}  {verdict}")
    print("\nin process (python -X importtime): import time, heavy modules loaded, slowest top-level imports")
    for name, cmd in COMMANDS.items():
        total, heavy, top = imports(cmd)
        print(f"{name:<16} {total * 1e3:6.0f}ms  heavy: {', '.join(heavy) or 'none'}; "
              + ", ".join(f"{m} {t * 1e3:.0f}ms" for t, m in top))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
