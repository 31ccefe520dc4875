"""Running code we do not control (claims files, hypotheses, conclusions, strategies) in worker
processes that end when we say, whatever the code does.

Each call runs in a process of its own, forked from a fork server that has imported the heavy
modules once, in a process group of its own. Its limit is the part's wall-clock limit (the
budget's `limit`, moved out when the engine's own runaway guard moves: the worker reports its
armed real-time timer) plus `GRACE`; past it the whole group is killed with SIGKILL, which no
C loop, ignored signal, non-daemon thread or forked child survives. A worker that ends without
an answer (`os._exit`, a crash, a signal) is a `ProcessLost` row, one killed at its limit a
`Runaway` row (`runner.lost`), never a verdict. After every call the group is killed, so
threads and forks it left behind go with it.

Workers die with attnsvm (Linux): the fork server, started from attnsvm's calling thread (the
signal follows the thread that forked), gets SIGKILL when attnsvm exits, even by SIGKILL, and
each process it forks gets SIGKILL when the server exits, from its first instruction
(PR_SET_PDEATHSIG, `forkserver_preload`); so does every process they fork from Python
(`os.register_at_fork`). Ctrl-C and SIGTERM reach attnsvm alone
(workers are in their own groups) and kill every group before it exits. Left: a process that
claim code starts with `setsid` after clearing its parent-death signal, or through exec of a
set-user-ID program, outlives a SIGKILL of attnsvm itself. Elsewhere than Linux the groups are
still killed, on every exit but SIGKILL.

`Supervisor` is an executor (`submit` -> Future, `shutdown`) for `check`'s parts; `call` runs one
function and returns its value (a claims file's claim names, a user claim's search). The
library's `Claim.check` and the pytest plugin evaluate claim code in the calling process (the
user's own test runner), guarded by the engine's SIGALRM runaway guard only; so does
`--executor dask`, in Dask's workers.
"""

from __future__ import annotations

import concurrent.futures as cf
import ctypes
import multiprocessing
import multiprocessing.connection
import multiprocessing.forkserver
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from attnsvm import threads as numeric_threads
from attnsvm.claims.isolation import CodeError, describe
from attnsvm.errors import UserError

GRACE = 10.0               # seconds past the limit a worker has to answer (the engine's own guard fires first)
EXTEND_CAP = 10            # a worker's reported timer moves its limit out to at most this many times the budget's
PRELOAD = ("torch", "sympy", "hypothesis", "attnsvm.claims.search", "attnsvm.svm.geometry", "attnsvm.dynamics")
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """This process gets SIGKILL when its parent exits (Linux; a no-op elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:          # the parent died before the request took
        os._exit(1)


def _child(conn, fn: Callable, args: tuple) -> None:
    """The worker: its own process group, dying with its parent; reports its armed timer (the
    engine's runaway guard) while it runs, then the answer, then exits at once (`os._exit`:
    threads the code started are not waited for)."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    die_with_parent()
    numeric_threads.limit(1)                            # parts run side by side: one thread each, BLAS included
    os.register_at_fork(after_in_child=die_with_parent)     # what the code forks dies with this worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)        # the user's Ctrl-C is attnsvm's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    lock = threading.Lock()
    start = time.monotonic()

    def report_timer():
        last = 0.0
        while True:
            time.sleep(0.25)
            left, _ = signal.getitimer(signal.ITIMER_REAL)
            until = time.monotonic() - start + left if left else 0.0
            if until > last + 0.5:
                last = until
                with lock:
                    try:
                        conn.send(("limit", until))
                    except OSError:             # the supervisor is gone: so is this worker, shortly
                        os._exit(1)

    threading.Thread(target=report_timer, daemon=True).start()
    try:
        answer = ("ok", fn(*args))
    except UserError as e:
        answer = ("user", str(e))
    except CodeError as e:
        answer = ("code", e.to_json())
    except BaseException as e:  # any failure of the code comes back as data
        kind, msg, frame = describe(e)
        answer = ("code", CodeError("worker", kind, msg, frame).to_json())
    with lock:
        try:
            conn.send(answer)
        except OSError:                         # the supervisor is gone
            pass
        except Exception as e:  # an answer that does not pickle
            failed = CodeError("worker", type(e).__name__, f"the answer could not be sent back: {e}")
            try:
                conn.send(("code", failed.to_json()))
            except OSError:
                pass
    os._exit(0)


def forkserver(preload) -> multiprocessing.context.BaseContext:
    """The fork-server context, its server preloading `preload` after `forkserver_preload` (so the
    server and every worker it forks die with this process)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["attnsvm.claims.forkserver_preload", *preload])
    multiprocessing.forkserver.ensure_running()     # from this thread: a server dies with the thread that started it
    return ctx


class _Worker:
    def __init__(self, ctx, fn: Callable, args: tuple, limit: float):
        self.conn, child_conn = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_child, args=(child_conn, fn, args), daemon=False)
        self.proc.start()
        child_conn.close()
        self.start, self.limit, self.cap = time.monotonic(), limit, EXTEND_CAP * limit

    @property
    def deadline(self) -> float:
        return self.start + self.limit + GRACE

    def receive(self):
        """The answer if one has come (timer reports move the limit out), else None."""
        while self.conn.poll():
            try:
                kind, value = self.conn.recv()
            except (EOFError, OSError):
                return None
            if kind == "limit":
                self.limit = min(max(self.limit, float(value)), self.cap)
            else:
                return kind, value
        return None

    def kill(self) -> None:
        """SIGKILL to the worker's whole group (and the worker, if it had not made its group yet)."""
        pid = self.proc.pid
        if pid is None:
            return
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.proc.join(timeout=5)
        self.conn.close()


def _lost_reason(ended: bool, limit: float) -> tuple[str, str, str]:
    """(where, type, message) of a worker that gave no answer: it ended by itself, or was killed."""
    if ended:
        return "process", "ProcessLost", "the code ended its process (os._exit, a crash or a signal): no answer"
    return "clock", "Runaway", (f"ran past the part's limit of {limit:.0f} s (+{GRACE:g} s grace): its process group "
                                "was killed")


class Supervisor:
    """An executor running each submitted call in a supervised worker (module docstring), at most
    `workers` at once. `limit_of(*args)` gives a call's limit in seconds; `lost(*args, where,
    type, message)` the result of a call that gave no answer (its future never raises for that).
    A call whose code raised resolves to `raised(*args, CodeError)`, or raises that `CodeError`
    (a `UserError` raises as itself)."""

    def __init__(self, workers: int, limit_of: Callable[..., float], lost: Callable[..., Any],
                 raised: Callable[..., Any] | None = None):
        self.workers, self.limit_of, self.lost, self.raised = max(1, workers), limit_of, lost, raised
        self.ctx = forkserver(PRELOAD)
        self.pending: list[tuple[cf.Future, Callable, tuple]] = []
        self.running: dict[_Worker, tuple[cf.Future, tuple]] = {}
        self.lock = threading.Lock()
        self.stopping = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def submit(self, fn: Callable, *args) -> cf.Future:
        fut: cf.Future = cf.Future()
        with self.lock:
            self.pending.append((fut, fn, args))
        return fut

    def _loop(self) -> None:
        while True:
            with self.lock:
                if self.stopping:
                    return
                while self.pending and len(self.running) < self.workers:
                    fut, fn, args = self.pending.pop(0)
                    if fut.set_running_or_notify_cancel():
                        try:
                            self.running[_Worker(self.ctx, fn, args, float(self.limit_of(*args)))] = (fut, args)
                        except Exception as e:  # no process could be started
                            fut.set_exception(e)
                running = dict(self.running)
            if not running:
                time.sleep(0.02)
                continue
            now = time.monotonic()
            waits = [w.conn for w in running] + [w.proc.sentinel for w in running]
            multiprocessing.connection.wait(waits, timeout=max(0.0, min(min(w.deadline for w in running) - now, 0.5)))
            for w, (fut, args) in running.items():
                answer = w.receive()
                ended = not w.proc.is_alive()
                if answer is None and ended:
                    answer = w.receive()                    # the answer may have come with the exit
                if answer is None and not ended and time.monotonic() < w.deadline:
                    continue
                with self.lock:
                    if self.running.pop(w, None) is None:   # shutdown took it
                        continue
                w.kill()
                if answer is None:
                    fut.set_result(self.lost(*args, *_lost_reason(ended, w.limit)))
                elif answer[0] == "ok":
                    fut.set_result(answer[1])
                elif answer[0] == "code" and self.raised is not None:
                    fut.set_result(self.raised(*args, CodeError(**answer[1])))
                else:
                    fut.set_exception(UserError(answer[1]) if answer[0] == "user" else CodeError(**answer[1]))

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """Wait for the calls (wait), or cancel the pending ones and kill the running ones
        (cancel_futures: an interrupt)."""
        if cancel_futures:
            with self.lock:
                for fut, _, _ in self.pending:
                    fut.cancel()
                self.pending.clear()
        if wait and not cancel_futures:
            while True:
                with self.lock:
                    if not self.pending and not self.running:
                        break
                time.sleep(0.05)
        with self.lock:
            self.stopping = True
            running = dict(self.running)
            self.running.clear()
        for w, (fut, _) in running.items():
            w.kill()
            fut.cancel() or fut.done() or fut.set_exception(cf.CancelledError())
        self.thread.join(timeout=10)


def call(fn: Callable, *args, limit: float) -> Any:
    """fn(*args) in one supervised worker: its value; a `CodeError` when the code raised, ended its
    process or ran past `limit` seconds (where 'process' or 'clock')."""
    def lost(*a):
        where, kind, message = a[-3:]
        return CodeError(where, kind, message)

    pool = Supervisor(1, lambda *_: limit, lost)
    try:
        value = pool.submit(fn, *args).result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    if isinstance(value, CodeError):
        raise value
    return value


def _part_limit(task) -> float:
    from attnsvm.claims.budget import get_budget

    return get_budget(task.budget).limit


def _part_lost(task, where: str, kind: str, message: str):
    from attnsvm.claims import runner

    return runner.lost(task, message, where, kind)


def _part_raised(task, error: CodeError):
    return _part_lost(task, error.where, error.type, error.line())


def parts(workers: int) -> Supervisor:
    """A `Supervisor` for `runner.run` on check parts (`runner.Task`): each at its budget's limit;
    a part that gives no answer, or whose code raised past the runner (a KeyboardInterrupt of
    its own), is an error row (`runner.lost`)."""
    return Supervisor(workers, _part_limit, _part_lost, _part_raised)
