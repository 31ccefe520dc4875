"""QP hot path: per-solve time of (ATT-SVM) on quadprog (`svm.att_svm_keys`, the sweep's path)
at n=6, T=8, d=16, and agreement with cvxpy on the same problems.

    python benchmarks/bench_qp.py [--problems 300] [--seed 0]

Problems are Figure-9 data with alpha = the tokens selected by a random direction (always
feasible, like the saturated runs of the sweep). Target: <= 0.2 ms per solve, agreeing with
cvxpy to cvxpy's accuracy (its interior-point solution is good to ~1e-5 here), and every
quadprog solution certified exactly (`certificates.certify`: exact KKT point, exact active set).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from attnsvm import svm
from attnsvm.interfaces.sweeps import fig9
from attnsvm.svm.certificates import certify


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    n, T, d = 6, 8, 16
    rng = np.random.default_rng(args.seed)
    probs = []
    for t in range(args.problems):
        X, _, _, _ = fig9.instance(args.seed, d, t, n, T, 0.0)
        probs.append((X, (X @ rng.standard_normal(d)).argmax(-1)))
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        fast = [svm.att_svm_keys(X, a) for X, a in probs]
        best = min(best, (time.perf_counter() - t0) / len(probs))
    t0 = time.perf_counter()
    ref = [svm.att_svm_keys(X, a, solver="cvxpy") for X, a in probs]
    t_cvx = (time.perf_counter() - t0) / len(probs)
    ok = [f.ok and r.ok for f, r in zip(fast, ref)]
    err = max(np.linalg.norm(f.x - r.x) / np.linalg.norm(r.x) for f, r, o in zip(fast, ref, ok) if o)
    # cvxpy (interior point) is accurate to ~1e-8, so its active set is read at 1e-6
    same_active = sum(set(f.active) == set(np.flatnonzero(f.problem.A @ r.x - 1 <= 1e-6).tolist())
                      for f, r, o in zip(fast, ref, ok) if o)
    print(f"{len(probs)} problems n={n} T={T} d={d}: quadprog {best * 1e3:.3f} ms per solve (best of 5 passes), "
          f"cvxpy {t_cvx * 1e3:.1f} ms per solve ({t_cvx / best:.0f}x slower)")
    print(f"both optimal: {sum(ok)} of {len(probs)}; max relative difference of solutions {err:.1e}; "
          f"same active set: {same_active} of {sum(ok)}")
    print(f"[{'PASS' if best <= 2e-4 else 'FAIL'}] QP hot path <= 0.2 ms per solve: {best * 1e3:.3f} ms")
    cert = [certify(f) for f in fast[:100]]
    exact = sum(c.verified and tuple(c.active) == tuple(f.active) for c, f in zip(cert, fast))
    print(f"exact certificates of the first {len(cert)} quadprog solutions: {sum(c.verified for c in cert)} verified, "
          f"{exact} with numeric active set = exact active set")
    print(f"[{'PASS' if all(ok) and err < 1e-4 and exact == len(cert) else 'FAIL'}] agrees with cvxpy "
          f"(all optimal, relative difference {err:.1e} < 1e-4) and certified exactly ({exact}/{len(cert)})")


if __name__ == "__main__":
    main()
