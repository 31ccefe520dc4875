"""The console script's entry point (and `python -m attnsvm`): an interrupt while the command
line is still importing (typer, numpy, ...) exits 130 with one line instead of a
KeyboardInterrupt traceback; `main` takes interrupts over once it runs. When the command is
done, the process leaves as mypy's does: output flushed and the atexit handlers run, then
`os._exit`, skipping the interpreter's teardown of every module's objects (about 0.1 s once
numpy, rich and matplotlib are loaded; the memory goes back to the system either way). Only
here: `attnsvm.interfaces.cli.main`, which the tests call in-process, exits normally. Nothing
but the standard library is imported here."""

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
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):           # a closed pipe (`attnsvm ... | head`) or stream
            pass
    os._exit(code)


def main() -> None:
    signal.signal(signal.SIGINT, _interrupted_while_starting)
    from attnsvm.interfaces.cli.app import main as run

    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        run()
        code = 0
    except SystemExit as e:
        code = _exit_code(e.code)
    _leave(code)
