"""Running claim code (hypotheses, conclusions, instance generators) so that it cannot take the
run down: an exception or `sys.exit` becomes a `CodeError` naming where it happened, and a
part that runs past its wall-clock limit is stopped (`OverTime`).

The limit is enforced by a real-time timer (SIGALRM) when running in the main thread, which
interrupts Python code such as `time.sleep`; elsewhere (threads of a Dask worker) the search
checks the clock between evaluations only.
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
    except (Exception, SystemExit) as e:  # noqa: BLE001 - user code: reported as a row, never a traceback
        kind, msg, frame = describe(e)
        raise CodeError(where, kind, msg, frame, instance.to_json() if instance is not None else None) from None


@contextlib.contextmanager
def time_limit(seconds: float | None):
    """Raise OverTime inside the block once `seconds` have passed (main thread only; a no-op
    elsewhere, where the caller's own clock checks apply). Restores any previous timer."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def fire(signum, frame):
        raise OverTime()

    previous = signal.signal(signal.SIGALRM, fire)
    old_delay, _ = signal.getitimer(signal.ITIMER_REAL)
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds if not old_delay else min(seconds, old_delay))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_delay:
            signal.setitimer(signal.ITIMER_REAL, max(1e-3, old_delay - (time.monotonic() - start)))
