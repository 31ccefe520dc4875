"""The blueprint as one self-contained HTML page (templates/page.html.j2, Jinja2): the summary,
the dependency graph as inline SVG (`graph.svg`), one section per node; figures are embedded
as data URIs and no script or style is fetched, so the file works offline and can be mailed."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from jinja2 import Environment, PackageLoader

from attnsvm.interfaces.blueprint import graph

VERDICTS = ("PROVED", "PARTIAL", "CERTIFIED", "SUPPORTED", "REFUTED", "INCONCLUSIVE", "not run")


def environment(autoescape: bool) -> Environment:
    """The Jinja2 environment of the blueprint's templates (HTML escapes every value)."""
    env = Environment(loader=PackageLoader("attnsvm.interfaces.blueprint", "templates"), autoescape=autoescape,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["pretty"] = lambda obj: json.dumps(obj, indent=1, allow_nan=False)
    env.filters["cell"] = lambda text: str(text).replace("|", "\\|").replace("\n", " ")
    env.globals.update(verdicts=VERDICTS, colors=graph.STANDING_COLORS, step_colors=graph.STEP_COLORS)
    return env


def data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


def render(bp: dict, root: Path) -> str:
    """The page; `root` is the directory the blueprint's figure paths are relative to."""
    images = {n["id"]: data_uri(root / n["figure"]) for n in bp["nodes"] if n["figure"]}
    env = environment(autoescape=True)
    return env.get_template("page.html.j2").render(bp=bp, graph=graph.svg(bp), images=images)
