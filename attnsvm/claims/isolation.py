"""Running claim code (hypotheses, conclusions, instance generators) so that it cannot take the
run down: an exception or `sys.exit` becomes a `CodeError` naming where it happened, and a
part that runs past its runaway guard is stopped (`OverTime`, reported as an error row).

The guard is a real-time timer (SIGALRM) when running in the main thread, which interrupts
Python code such as `time.sleep`; elsewhere (threads of a Dask worker) the search checks the
clock between evaluations only.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
import traceback
from dataclasses import dataclass


class OverTime(BaseException):
    """The part ran past its wall-clock limit (a BaseException: Hypothesis must not catch it)."""


@dataclass
class CodeError(BaseException):
    """Claim code raised (or called sys.exit): where ('conclusion', 'hypothesis H', 'instances'),
    the exception's type and message, the innermost frame, and the instance as JSON."""

    where: str
    type: str
    message: str
    frame: str = ""
    instance: dict | None = None

    def to_json(self) -> dict:
        return {"where": self.where, "type": self.type, "message": self.message, "frame": self.frame,
                "instance": self.instance}

    def line(self) -> str:
        if self.where == "clock":
            return f"runaway: {self.message}"
        return f"{self.where} raised {self.type}: {self.message}" + (f" ({self.frame})" if self.frame else "")


def describe(e: BaseException) -> tuple[str, str, str]:
    """(type, message, innermost frame 'file:line') of an exception."""
    if isinstance(e, SystemExit):
        return "SystemExit", f"sys.exit({e.code!r}) called", _frame(e)
    return type(e).__name__, str(e)[:500], _frame(e)


def _frame(e: BaseException) -> str:
    """The innermost frame outside attnsvm's claims engine (the user's line), as 'file:line'."""
    tb = [f for f in traceback.extract_tb(e.__traceback__)
          if "/attnsvm/claims/" not in f.filename and not f.filename.startswith("<")] or \
        traceback.extract_tb(e.__traceback__)
    return f"{tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else ""


def guarded(where: str, fn, *args, instance=None):
    """fn(*args); an Exception or SystemExit becomes a CodeError (KeyboardInterrupt and OverTime pass)."""
    try:
        return fn(*args)
    except (OverTime, KeyboardInterrupt, CodeError):
        raise
    except (Exception, SystemExit) as e:  # user code: reported as a row, never a traceback
        kind, msg, frame = describe(e)
        raise CodeError(where, kind, msg, frame, instance.to_json() if instance is not None else None) from None


class Guard:
    """A part's wall-clock guard against runaway code: past `seconds` from its start it raises
    `OverTime` (SIGALRM in the main thread, which also interrupts `time.sleep`; elsewhere, e.g. a
    Dask worker's thread, `check()` between evaluations raises it). `extend(total)` moves the
    limit out to `total` seconds from the start (never in)."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.start = time.monotonic()
        self.armed = False

    def passed(self) -> bool:
        return bool(self.seconds) and time.monotonic() - self.start >= self.seconds

    def check(self) -> None:
        if self.passed():
            raise OverTime()

    def extend(self, total: float) -> None:
        if not self.seconds or total <= self.seconds:
            return
        self.seconds = total
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, max(1e-3, total - (time.monotonic() - self.start)))


@contextlib.contextmanager
def guard(seconds: float | None):
    """A `Guard` armed for the block (main thread: SIGALRM; restores any previous timer)."""
    g = Guard(seconds)
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield g
        return

    def fire(signum, frame):
        raise OverTime()

    previous = signal.signal(signal.SIGALRM, fire)
    old_delay, _ = signal.getitimer(signal.ITIMER_REAL)
    signal.setitimer(signal.ITIMER_REAL, seconds if not old_delay else min(seconds, old_delay))
    g.armed = not old_delay         # an outer timer that fires first keeps its own meaning: this guard is not moved
    try:
        yield g
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_delay:
            signal.setitimer(signal.ITIMER_REAL, max(1e-3, old_delay - (time.monotonic() - g.start)))
