"""`attnsvm blueprint`: every result, how it stands and what it uses, as a page (HTML, Markdown)."""

from __future__ import annotations

from pathlib import Path

import typer

from attnsvm.errors import UserError
from attnsvm.interfaces.cli.app import BudgetOpt, SeedOpt, app, consoles
from attnsvm.interfaces.cli.checking import ExecutorOpt, WorkersOpt


@app.command()
def blueprint(targets: list[str] | None = typer.Argument(None, help="result ids (default: all; the "
                                                                    "others show as not run)"),
              out_dir: Path = typer.Option(..., "--out", help="directory to write index.html / "
                                                              "blueprint.md / blueprint.json"),
              fmt: str = typer.Option("html", "--format", help="html | md | all"),
              reports_file: Path | None = typer.Option(None, "--reports",
                                                       help="build from the JSON of an earlier "
                                                            "`attnsvm check --json` instead of running"),
              figures: bool = typer.Option(True, "--figures/--no-figures",
                                           help="draw each result's picture (attnsvm plot)"),
              budget: str = BudgetOpt, seed: int = SeedOpt, workers: int = WorkersOpt, executor: str = ExecutorOpt):
    """The dependency graph of every result with its derivation status, check verdict and
    necessity rows; each node opens its proof steps, evidence, stored witnesses and figure.
    Exit 0 when every verdict shown is as expected, 1 otherwise (the page is written either way)."""
    from rich.table import Table

    from attnsvm.claims.budget import get_budget
    from attnsvm.interfaces import blueprint as bp

    out, err = consoles()
    formats = {"html": ("html",), "md": ("md",), "all": bp.FORMATS}.get(fmt)
    if formats is None:
        raise UserError(f"--format must be html, md or all, got {fmt!r}")
    bp.output_dir(out_dir)
    if reports_file is not None:
        if targets:
            raise UserError("give result ids or --reports, not both")
        reports, run = bp.load_reports(reports_file)
    else:
        from attnsvm.interfaces.cli.checking import run_tasks, tasks_of

        b = get_budget(budget)
        tasks, _ = tasks_of(targets or ["all"], b.name, seed, search=False)
        reports, interrupted = run_tasks(tasks, executor, workers, err)
        run = {"budget": b.name, "seed": seed, "interrupted": interrupted}
        if interrupted and not reports:
            err.print(f"interrupted before any of the {len(tasks)} parts finished: no blueprint written",
                      markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(130)
        if interrupted:                         # the parts that finished, the rest shown as not run
            bp.build(reports, out_dir, formats, run=run)
            err.print(f"interrupted after {len(reports)} of {len(tasks)} parts; the blueprint of those is in {out_dir}")
            raise typer.Exit(130)
    try:                                        # before any page or figure: a failure leaves nothing half-written
        out_dir.mkdir(exist_ok=True)
    except OSError as e:
        raise UserError(f"{out_dir}: cannot create the output directory "
                        f"({e.strerror or e.__class__.__name__})") from None
    paths, errors = bp.draw_figures(out_dir, seed, run.get("budget") or "quick") if figures else ({}, {})
    summary, written = bp.build(reports, out_dir, formats, paths, run, errors)
    t = Table(title="results by standing")
    t.add_column("standing")
    t.add_column("results", justify="right")
    for name, count in summary["by_standing"].items():
        t.add_row(name, str(count))
    out.print(t)
    out.print(f"{summary['parts_as_expected']} of {summary['parts_run']} parts as expected; wrote "
              + ", ".join(str(p) for p in written.values()))
    raise typer.Exit(0 if summary["parts_as_expected"] == summary["parts_run"] else 1)
