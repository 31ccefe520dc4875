"""The console script's entry point: an interrupt while the command line is still importing
(typer, numpy, ...) exits 130 with one line instead of a KeyboardInterrupt traceback; `main`
takes interrupts over once it runs. Nothing but the standard library is imported here."""

import os
import signal
import sys


def _interrupted_while_starting(signum, frame):
    print("interrupted", file=sys.stderr)
    os._exit(130)


def main() -> None:
    signal.signal(signal.SIGINT, _interrupted_while_starting)
    from attnsvm.interfaces.cli.app import main as run

    signal.signal(signal.SIGINT, signal.default_int_handler)
    run()
