"""How many threads the numeric libraries of this process use: torch's intra-op pool, and BLAS
and OpenMP, both those loaded now (threadpoolctl) and those loaded later (their environment
variables: scipy loads its own OpenBLAS on first use, with a thread per core otherwise). A worker
that shares the cores with others runs on the threads it is given."""

from __future__ import annotations

import os
import sys

ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def limit(threads: int) -> None:
    """Run this process's numeric libraries on `threads` threads, without importing torch for
    work that does not use it (the fused kernel)."""
    from threadpoolctl import threadpool_limits

    for name in ENV:
        os.environ[name] = str(threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
    threadpool_limits(threads)
