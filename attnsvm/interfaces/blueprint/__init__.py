"""`attnsvm blueprint`: the dependency graph of every result with how each stands, as one
self-contained HTML page and in Markdown (leanblueprint's view, with attnsvm's statuses: a
proof's steps are symbolic, exact, numeric, cited or open; a check is PROVED ... REFUTED; each
hypothesis's necessity is a stored counterexample).

`reports` reads the reports of an earlier `attnsvm check --json`, `collect` turns reports into
the blueprint's data, `graph` lays out and draws the dependency graph, `render_html` and
`render_md` fill the templates in `templates/`; `build` writes them.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from attnsvm.claims.verdicts import Report
from attnsvm.errors import UserError
from attnsvm.files import write_json_atomic, write_text_atomic
from attnsvm.interfaces.blueprint.reports import load_reports

FORMATS = ("html", "md")
FILES = {"html": "index.html", "md": "blueprint.md"}

__all__ = ["FORMATS", "build", "draw_figures", "load_reports", "output_dir"]


def output_dir(out: Path) -> Path:
    """`out` as the blueprint's directory: an existing directory or a new one in an existing
    directory (one-line error otherwise, before any work is done)."""
    from attnsvm.interfaces.sweeps.shards import check_out_dir

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: exists and is not a directory")
    if not out.exists() and not out.resolve().parent.is_dir():
        raise UserError(f"{out}: directory {out.parent} does not exist")
    return check_out_dir(out, sub=("figures",))


def draw_figures(out: Path, seed: int, budget: str) -> tuple[dict[str, str], dict[str, str]]:
    """Every result's picture (`attnsvm plot`) as `<out>/figures/<id>.png`: (paths relative to
    `out`, reasons of the ones that could not be drawn)."""
    from attnsvm.interfaces import plotting

    (out / "figures").mkdir(parents=True, exist_ok=True)
    paths, errors = {}, {}
    for id in plotting.available():
        try:
            plotting.plot_result(id, out / "figures" / f"{id}.png", seed=seed, budget=budget)
            paths[id] = f"figures/{id}.png"
        except Exception as e:  # a picture that fails is said on the page, never a lost report
            errors[id] = f"{e.__class__.__name__}: {e}"
    return paths, errors


def build(reports: Iterable[Report], out: Path, formats: Iterable[str] = ("html",),
          figures: dict[str, str] | None = None, run: dict | None = None,
          figure_errors: dict[str, str] | None = None) -> tuple[dict, dict[str, Path]]:
    """Write the blueprint of `reports` into `out` (index.html, blueprint.md, blueprint.json):
    (its summary, the files written by format)."""
    from attnsvm.interfaces.blueprint import collect, render_html, render_md

    out = output_dir(out)
    out.mkdir(exist_ok=True)
    bp = collect.collect(reports, figures, run, figure_errors)
    written = {}
    for fmt in formats:
        text = render_html.render(bp, out) if fmt == "html" else render_md.render(bp)
        write_text_atomic(out / FILES[fmt], text)
        written[fmt] = out / FILES[fmt]
    write_json_atomic(out / "blueprint.json", bp)
    written["json"] = out / "blueprint.json"
    return bp["summary"], written
