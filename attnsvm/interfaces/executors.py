"""Where work runs: in this process, in local worker processes, or on a Dask cluster.

`pool(spec, workers)` is the one entry point the commands use (`--executor`):

- `local` (default): `local(workers)`, a process pool whose workers ignore SIGINT (the parent
  handles an interrupt once and cancels what is pending; workers never print a traceback) and
  run torch on `threads` threads each. Given modules to `preload` (or once torch is loaded:
  forking a process with torch's threads running is unsafe), workers fork from a server that
  has imported them once; otherwise they fork from this process and start with what it
  loaded (the fused kernel, say) without importing torch. One worker: `Inline`, which runs
  each task in this process when its result is asked for.
- `dask`: a `distributed.LocalCluster` of `workers` processes (one thread each; Dask's nanny
  sets OMP_NUM_THREADS=1, so torch runs on one thread per worker).
- `tcp://HOST:PORT` (any `scheme://address` Dask accepts): an existing Dask scheduler, whose
  workers must have attnsvm installed; the cluster is left running afterwards.

Dask is an optional extra (`pip install "attnsvm[dask]"`), imported only when asked for. A
task is a picklable function of plain data (`runner.run(Task)`, a sweep's `run_shard`) whose
result does not depend on where it ran, so a Dask run's records equal a local run's for the
same seed. Results always come back to the calling process, which alone writes files.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import multiprocessing
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from attnsvm.claims.supervise import PRELOAD
from attnsvm.errors import UserError


class Inline:
    """Runs each task in the calling process when its result is asked for."""

    def submit(self, fn: Callable, *args) -> _Deferred:
        return _Deferred(fn, args)

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        pass


class _Deferred:
    def __init__(self, fn, args):
        self.fn, self.args, self.cancelled = fn, args, False

    def result(self):
        if self.cancelled:
            raise cf.CancelledError
        return self.fn(*self.args)

    def cancel(self):
        self.cancelled = True
        return True


def _init_worker(threads: int) -> None:
    from attnsvm import threads as numeric_threads
    from attnsvm.claims.supervise import die_with_parent

    die_with_parent()                   # no orphans when attnsvm is killed (its fork server, if any, exits with it)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)           # not the command's own handler, if forked from it
    numeric_threads.limit(threads)      # BLAS too: K workers x all cores of OpenBLAS threads made one QR 75x slower


def local(workers: int, threads: int = 1, preload: Iterable[str] = PRELOAD,
          isolated: bool = False) -> cf.Executor | Inline:
    """`workers` local processes of `threads` torch threads each (inline when workers <= 1,
    unless `isolated`: then always processes, so code that ends its process takes only a worker
    down); `preload`: modules a fork server imports once for all workers (none: fork from here)."""
    if workers <= 1 and not isolated:
        return Inline()
    preload = list(preload) + (["torch"] if "torch" in sys.modules else [])
    if preload:
        from attnsvm.claims.supervise import forkserver

        ctx = forkserver(preload)
    else:
        ctx = multiprocessing.get_context("fork")
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker, initargs=(threads,))


def abort(executor) -> None:
    """Stop an executor at once after an interrupt: pending tasks are cancelled and a local
    pool's workers, which ignore SIGINT and would finish their running task (a check part can
    take minutes), are terminated; what they were computing is lost, what finished the caller
    keeps. Without this the interpreter's exit waited on the pool's workers for good."""
    if isinstance(executor, cf.ProcessPoolExecutor):
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for proc in processes:
            proc.terminate()
        for proc in processes:
            proc.join(timeout=5)
    else:
        executor.shutdown(wait=False, cancel_futures=True)


def start_workers(executor) -> None:
    """Start a forking pool's workers now (it forks all of them at its first submit), before the
    caller starts threads of its own, e.g. a progress bar's: forking a process with running
    threads is unsafe. Other executors are left alone."""
    if isinstance(executor, cf.ProcessPoolExecutor):
        executor.submit(int)


class Dask:
    """A `distributed.Client` with the executor interface the commands use (`submit`,
    `shutdown`); closes the cluster it started, never one it connected to."""

    def __init__(self, address: str | None, workers: int):
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise UserError('--executor dask needs Dask: pip install "attnsvm[dask]"') from None
        self.cluster = None
        try:
            if address is None:
                self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                            dashboard_address=":0", silence_logs=logging.ERROR)
                self.client = Client(self.cluster)
            else:
                self.client = Client(address, timeout="10s")
        except OSError as e:
            if self.cluster is not None:
                self.cluster.close()
            raise UserError(f"--executor {address or 'dask'}: cannot reach a Dask scheduler ({e})") from None
        self.futures: list = []

    def submit(self, fn: Callable, *args):
        fut = self.client.submit(fn, *args, pure=False)
        self.futures.append(fut)
        return fut

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        if cancel_futures:
            self.client.cancel([f for f in self.futures if not f.done()])
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def pool(spec: str, workers: int, threads: int = 1, preload: Iterable[str] = PRELOAD):
    """The executor `--executor spec` names: 'local', 'dask' or a scheduler address."""
    if spec == "local":
        return local(workers, threads, preload)
    if spec == "dask":
        return Dask(None, max(1, workers))
    if "://" in spec:
        return Dask(spec, workers)
    raise UserError(f"--executor: expected local, dask or a Dask scheduler address like tcp://HOST:8786, got {spec!r}")


def completed(futures: dict[Any, Any]) -> Iterator[tuple[Any, Any]]:
    """Yield (key, future) as futures finish (inline ones in submission order); the caller
    takes each `.result()`, which raises the task's exception."""
    pending = {f: k for k, f in futures.items()}
    if all(isinstance(f, _Deferred) for f in pending):
        yield from ((k, f) for f, k in pending.items())
    elif all(isinstance(f, cf.Future) for f in pending):
        yield from ((pending[f], f) for f in cf.as_completed(pending))
    else:
        from distributed import as_completed

        yield from ((pending[f], f) for f in as_completed(list(pending)))
