"""The statements in the repository: every registry node is stated (registry `statement` and
`source`), docs/statements.md has one section per node id and no other, its sections agree with
the registry (paper numbering, hypotheses, necessity), and the code points there (no `.py` file
cites the restored-formula file that never was in the repository)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from attnsvm.claims import hypotheses as hyp
from attnsvm.claims import registry

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "statements.md"
ANCHOR = re.compile(r'^<a id="([^"]+)"></a>$', re.M)
SKIP = {".git", ".hypothesis", "build", "dist", "node_modules", "__pycache__"}


def sections() -> dict[str, str]:
    """Each anchored section of docs/statements.md, by anchor id, in document order."""
    text = DOC.read_text(encoding="utf-8")
    parts = ANCHOR.split(text)
    return {parts[k]: re.split(r"^## ", parts[k + 1], flags=re.M)[0] for k in range(1, len(parts), 2)}


def item(section: str, label: str) -> str:
    """The text of the `- **label:**` list item of a section (its wrapped lines joined)."""
    m = re.search(rf"^- \*\*{label}:\*\* (.*(?:\n  .*)*)", section, re.M)
    assert m, f"no {label} item"
    return " ".join(line.strip() for line in m.group(1).split("\n"))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def python_files() -> list[Path]:
    return [p for p in ROOT.rglob("*.py")
            if not any(part in SKIP or part.endswith(".egg-info") or part.startswith(".venv")
                       for part in p.relative_to(ROOT).parts)]


@pytest.mark.parametrize("e", registry.all_nodes(), ids=lambda e: e.id)
def test_every_node_is_stated(e):
    assert e.statement.strip() and "\n" not in e.statement
    assert re.match(r"[ABC], ", e.source), "the source starts with its paper (A, B or C)"
    assert e.paper == {"A": registry.A, "B": registry.B, "C": registry.C}[e.source[0]]


def test_one_section_per_node_in_registry_order_grouped_by_paper():
    ids = list(sections())
    assert len(ids) == len(set(ids)), "an id has two sections"
    nodes = registry.all_nodes()
    by_paper = [e.id for paper in (registry.A, registry.B, registry.C) for e in nodes if e.paper == paper]
    assert ids == by_paper          # every node, no orphan anchor, registry order within each paper
    text = DOC.read_text(encoding="utf-8")
    headings = re.findall(r"^### .*$", text, re.M)
    anchored = re.findall(r'^<a id="[^"]+"></a>\n### .*$', text, re.M)
    assert len(headings) == len(anchored) == len(nodes), "every ### section sits under its node's anchor"


@pytest.mark.parametrize("e", registry.all_nodes(), ids=lambda e: e.id)
def test_section_agrees_with_the_registry(e):
    sec = sections()[e.id]
    assert item(sec, "Source").startswith(e.source + "."), "the section's source is the registry's"
    assert "**Statement" in sec
    if not e.has_parts:
        return
    listed = item(sec, "Hypotheses")
    names = re.findall(r"(\*\*)?`(\w+)`", listed)
    assert [n for _, n in names] == [hyp.short(q) for q in e.hypotheses], "the claim's hypotheses, by short name"
    assert {n for bold, n in names if bold} == set(e.necessity), "bold marks exactly the necessity rows"
    if e.check != ("SUPPORTED",):
        assert f"Expected verdict of the check: {' or '.join(e.check)}." in listed


def test_code_points_to_existing_sections():
    text = DOC.read_text(encoding="utf-8")
    targets = set(sections()) | {slug(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}
    missing = {}
    for path in python_files():
        for ref in re.findall(r"docs/statements\.md#([\w\-]+)", path.read_text(encoding="utf-8")):
            if ref not in targets:
                missing[str(path.relative_to(ROOT))] = ref
    assert not missing


def test_no_python_file_cites_the_missing_spec():
    name = "SPEC" + ".md"                 # spelled apart so this file does not cite it either
    citing = [str(p.relative_to(ROOT)) for p in python_files() if name in p.read_text(encoding="utf-8")]
    assert not citing
