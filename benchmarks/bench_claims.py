"""Users' claims as a user runs them (issue 19, target 4): three claims files written to a fresh
directory and run end to end, each with its wall time, children's CPU time, verdicts and the
instances evaluated.

- exact LMM sets (n <= 2, T <= 3, d <= 3, the README's style): two true claims at quick's 4000
  evaluations each, target under 5 s per claim (the part's seconds in the report);
- three trivial claims (n = 1, T = 2) under `pytest --attnsvm-claims`: target under 10 s;
- a dynamics claim from the batched blocks (normalized GD, 1500 steps, n = 1, T <= 4, Assumption
  B: Theorem 2's setting): its 4000 quick instances evaluated within the part's limit.

    python benchmarks/bench_claims.py [--load 2] [--seed 0] [--out run.json]
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

LMM_CLAIMS = '''
from attnsvm.attention import model
from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.claims.strategies import instances, integer_datasets
from attnsvm.svm import geometry

STRICT = Hypothesis("strict_optimality", "unique top score", lambda i: model.strict_optimality(i.dataset))
GMM = Hypothesis("gmm_feasible", "ATT-SVM(opt) feasible", lambda i: geometry.gmm(i.dataset).feasible)
SPACE = lambda dropped: instances(integer_datasets(n=(1, 2), T=(2, 3), d=(1, 3)))

def gmm_is_lmm(inst, budget):
    found = geometry.lmms(inst.dataset)
    return Outcome(any(s.is_gmm for s in found), certified=all(s.certified for s in found))

def at_most_T_pow_n(inst, budget):
    found, ds = geometry.lmms(inst.dataset), inst.dataset
    return Outcome(len(found) <= ds.T ** ds.n, certified=all(s.certified for s in found))

gmm_lmm = Claim("gmm-is-lmm", "strict optimality, GMM feasible => the GMM is an LMM", (STRICT, GMM), gmm_is_lmm, SPACE)
count = Claim("lmm-count", "strict optimality => at most T^n LMMs", (STRICT,), at_most_T_pow_n, SPACE)
'''

TRIVIAL_CLAIMS = '''
from attnsvm.claims import Claim, Outcome
from attnsvm.claims.strategies import instances, integer_datasets
from attnsvm.svm import geometry

SPACE = lambda dropped: instances(integer_datasets(n=1, T=2, d=(1, 2)))
decided = Claim("decided", "n = 1, T = 2: (ATT-SVM)(opt) is decided exactly", (),
                lambda i, b: Outcome(geometry.gmm(i.dataset).certified), SPACE)
one_input = Claim("one-input", "n = 1", (), lambda i, b: Outcome(i.dataset.n == 1), SPACE)
two_tokens = Claim("two-tokens", "T = 2", (), lambda i, b: Outcome(i.dataset.T == 2), SPACE)
'''

DYNAMICS_CLAIMS = '''
from attnsvm.claims import Claim, batched, blocks
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import instances, keyed_datasets

@batched
def ngd_aligns(insts, budget):
    runs = blocks.run(insts, "ngd", steps=blocks.horizon(1500, budget), eta=0.1)
    corr = runs.corr(blocks.gmm_directions(insts))
    return blocks.outcomes(corr >= 0.99, undecided=~runs.trusted, reasons=runs.reasons,
                           detail={"corr": corr}, margin=corr - 0.99)

ngd = Claim("ngd-from-zero", "n = 1, T <= 4, Assumption B, GMM feasible => NGD from 0 aligns with the GMM",
            (hyp.get("scores.assumption_B"), hyp.get("att_svm.gmm_feasible")), ngd_aligns,
            lambda dropped: instances(keyed_datasets(n=1, T=(2, 4), dk=2, scores="B")), confirm=(4,))
'''


def timed(cmd: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run `cmd`: (the process, wall seconds, children's CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def check(name: str, text: str, seed: int, cwd: Path) -> dict:
    """`attnsvm check FILE --budget quick` end to end, with each claim's verdict and counts."""
    (cwd / f"{name}.py").write_text(text)
    out = cwd / f"{name}.json"
    proc, wall, _ = timed([sys.executable, "-m", "attnsvm", "check", f"{name}.py", "--budget", "quick",
                             "--seed", str(seed), "--json", str(out)], cwd)
    reports = json.loads(out.read_text())["reports"] if out.exists() else []
    claims = {r["id"]: {"verdict": r["verdict"], "evaluated": r["evidence"].get("evaluated"),
                        "held": r["evidence"].get("instances"), "seconds": r.get("seconds")} for r in reports}
    # no CPU figure: the parts run in a fork server's workers, which are not this process' children
    return {"file": f"{name}.py", "exit": proc.returncode, "wall_seconds": round(wall, 2), "claims": claims,
            "tail": proc.stdout.strip().splitlines()[-1:]}


def pytest_claims(text: str, seed: int, cwd: Path) -> dict:
    """`pytest --attnsvm-claims FILE` end to end."""
    (cwd / "ci_claims.py").write_text(text)
    proc, wall, cpu = timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--attnsvm-claims",
                             "ci_claims.py", "--attnsvm-seed", str(seed)], cwd)
    return {"file": "ci_claims.py (pytest)", "exit": proc.returncode, "wall_seconds": round(wall, 2),
            "cpu_seconds": round(cpu, 2), "tail": proc.stdout.strip().splitlines()[-1:]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--load", type=int, default=0, help="busy loops (yes >/dev/null) running beside the commands")
    ap.add_argument("--out", type=Path, help="keep the figures as JSON here")
    args = ap.parse_args()
    busy = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(args.load)]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cwd = Path(tmp)
            load_before = os.getloadavg()[0]
            runs = [check("lmm_claims", LMM_CLAIMS, args.seed, cwd),
                    pytest_claims(TRIVIAL_CLAIMS, args.seed, cwd),
                    check("dynamics_claims", DYNAMICS_CLAIMS, args.seed, cwd)]
    finally:
        for b in busy:
            b.kill()
            b.wait()
    report = {"busy_loops": args.load, "load_before": round(load_before, 2),
              "load_after": round(os.getloadavg()[0], 2), "runs": runs}
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
