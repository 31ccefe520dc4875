"""The console script's entry point (and `python -m attnsvm`): an interrupt while the command
line is still importing (typer, numpy, ...) exits 130 with one line instead of a
KeyboardInterrupt traceback; `main` takes interrupts over once it runs. When the command is
done, the process leaves as mypy's does: output flushed and the atexit handlers run, then
`os._exit`, skipping the interpreter's teardown of every module's objects (about 0.1 s once
numpy, rich and matplotlib are loaded; the memory goes back to the system either way). Only
here: `attnsvm.interfaces.cli.main`, which the tests call in-process, exits normally. SIGTERM
unwinds as an interrupt does (worker processes killed, nothing half-written) and exits 143; a
standard output that is closed, or fails (a full device), is one `error:` line and exit 2.
Nothing but the standard library is imported here."""

import atexit
import os
import signal
import sys


def _interrupted_while_starting(signum, frame):
    print("interrupted", file=sys.stderr)
    os._exit(130)


def _exit_code(code) -> int:
    """The status `sys.exit(code)` gives: None 0, an int itself, anything else printed and 1."""
    if code is None or isinstance(code, int):
        return code or 0
    print(code, file=sys.stderr)
    return 1


def _leave(code: int) -> None:
    atexit._run_exitfuncs()
    for stream in (s for s in (sys.stdout, sys.stderr) if s is not None):
        try:
            stream.flush()
        except BrokenPipeError:                 # a closed pipe (`attnsvm ... | head`): quiet
            pass
        except (OSError, ValueError) as e:      # a full device: the output is incomplete
            code = _unwritable(e) if stream is sys.stdout else code
    os._exit(code)


def _unwritable(e: BaseException) -> int:
    """One line for output that could not be written (a closed or full standard output): 2."""
    try:
        print(f"error: cannot write the output ({getattr(e, 'strerror', None) or e.__class__.__name__})",
              file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass
    return 2


_terminated: list[int] = []


def _terminate(signum, frame):
    """SIGTERM: unwound as an interrupt is (workers killed, nothing half-written), exit 143."""
    _terminated.append(signum)
    raise KeyboardInterrupt


def main() -> None:
    signal.signal(signal.SIGINT, _interrupted_while_starting)
    if sys.stdout is None:                      # `attnsvm ... >&-`: a file opened later would take descriptor 1
        _leave(_unwritable(OSError(9, "standard output is closed")))
    from attnsvm.interfaces.cli.app import main as run

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        run()
        code = 0
    except SystemExit as e:
        code = _exit_code(e.code)
    except BrokenPipeError:
        code = 0
    except OSError as e:                        # writing the output failed (ENOSPC, EIO): other files are UserErrors
        code = _unwritable(e)
    _leave(128 + signal.SIGTERM if _terminated else code)
