"""The blueprint in Markdown (templates/blueprint.md.j2) for terminals and READMEs: the summary
tables, the graph as a Mermaid flowchart (rendered by GitHub and most Markdown viewers; the
`uses` column carries the same edges for a terminal), a table of results and one section per
node with its steps, verdicts, witnesses and their replay commands, and its figure."""

from __future__ import annotations

from attnsvm.interfaces.blueprint.render_html import environment


def render(bp: dict) -> str:
    index = {n["id"]: k for k, n in enumerate(bp["nodes"])}
    return environment(autoescape=False).get_template("blueprint.md.j2").render(bp=bp, index=index)
