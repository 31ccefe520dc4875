"""The layout issue 20 asks for: results depend on the library, never on each other's modules
(a module of one result's parts imports no module of another result), every result a proof
outline step relies on is in its `uses`, and every hypothesis a claim states is the one
registered under its qualified name."""

import ast
from pathlib import Path

import pytest

from attnsvm.claims import hypotheses as hyp
from attnsvm.claims import registry, runner

ROOT = Path(__file__).resolve().parents[1]
PARTS = [p for part in registry.PARTS for p in sorted((ROOT / part).glob("*.py")) if p.stem != "__init__"]


def _imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


@pytest.mark.parametrize("path", PARTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_results_module_imports_no_other_results_module(path):
    others = {name for name in _imported(path) if name.startswith(registry.RESULTS_PACKAGE + ".")
              and name.split(".")[3:4] != [path.stem]}
    others |= {name for name in _imported(path) if name.split(".")[0] in registry.PARTS}
    assert not others, f"{path.parent.name}/{path.name} imports {sorted(others)}: shared code belongs in the library"


@pytest.mark.parametrize("e", registry.ENTRIES, ids=lambda e: e.id)
def test_what_an_outline_cites_is_in_its_uses(e, outline_report):
    rep = outline_report(e.id)
    ids = {n.id for n in registry.all_nodes()}
    cited = {b for step in rep.evidence.get("steps", []) for b in step.get("by", []) if b in ids and b != e.id}
    assert cited <= set(e.uses), f"{e.id}: its outline uses {sorted(cited - set(e.uses))} not in registry uses"


@pytest.mark.parametrize("e", registry.ENTRIES, ids=lambda e: e.id)
def test_a_claims_hypotheses_are_the_registered_ones(e):
    claim = runner.registered_claim(e)
    assert all("." in q for q in e.hypotheses), f"{e.id}: hypotheses by qualified name (<family>.<name>)"
    assert [h for h in claim.hypotheses] == [hyp.get(q) for q in e.hypotheses]
