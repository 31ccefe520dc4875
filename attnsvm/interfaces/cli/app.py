"""The `attnsvm` application: the typer app, the options commands share, and `main`, the one
place user errors become `error: ...` on one line with exit 2 and interrupts exit 130.

Exit codes: 0 every verdict as expected; 1 not (or an error row); 2 usage or input error;
130 interrupted. Commands import the layers they need inside their bodies, so `attnsvm
--help` and `attnsvm list` start fast.
"""

from __future__ import annotations

import os
import sys

import typer

from attnsvm.errors import UserError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Check results on attention as max-margin token selection.")

BudgetOpt = typer.Option("quick", "--budget", help="quick | standard | thorough")
SeedOpt = typer.Option(0, "--seed", min=0, help="random seed (every run is reproducible from it)")
JsonOpt = typer.Option(None, "--json", help="also write machine-readable results to this file")


PIPED_WIDTH = 1000      # columns of output that is not a terminal: tables as wide as their content, never cut


def consoles():
    """(stdout, stderr) rich consoles; one that is not a terminal is never cut at 80 columns."""
    from rich.console import Console

    wide = lambda stream: None if stream.isatty() else PIPED_WIDTH
    return Console(width=wide(sys.stdout)), Console(stderr=True, width=wide(sys.stderr))


def main() -> None:
    from attnsvm.cache import hypothesis_dir

    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(hypothesis_dir()))    # never .hypothesis/ in the cwd
    usage_error = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")   # click's, or typer's copy
    try:
        from attnsvm.interfaces.cli import checking, datasets, reporting, reproducing  # noqa: F401 - registers the commands

        code = app(standalone_mode=False)
    except (UserError, usage_error) as e:
        # bare `attnsvm` (or a group without a command): its help,
        # which typer's rich formatter printed while raising
        if type(e).__name__ == "NoArgsIsHelpError":
            if not getattr(e.ctx.command, "rich_markup_mode", None):
                print(e.format_message())
            sys.exit(2)
        message = e.format_message() if isinstance(e, usage_error) else str(e)
        print(f"error: {' '.join(message.split())}", file=sys.stderr)      # one line, never wrapped
        sys.exit(2)
    except (KeyboardInterrupt, typer.Abort):
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except typer.Exit as e:
        code = e.exit_code
    if code == 130:      # typer turns KeyboardInterrupt into Exit(130), which click returns as a code
        print("interrupted", file=sys.stderr)
    sys.exit(code if isinstance(code, int) else 0)
