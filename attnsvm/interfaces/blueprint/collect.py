"""The blueprint's content: every node of the dependency graph (registry.all_nodes()) with its
reports, the steps of its proof outline, its stored witnesses and its figure, and a summary
that counts results by standing. Plain JSON-ready data, rendered by `html` and `markdown`.

Edges are what a proof uses: the registry's `uses` and the `by` of its outline's steps. A node's
*standing* says how it stands on this run (STANDINGS), including what it rests on: a result is
"proved" only when its own outline is machine-checked, its verdicts are as expected and so is
every result it rests on through the edges; otherwise its `modulo` names the results it rests on
that are not proved on their own (a result proved on its own is then "proved modulo" them). A
partial result also says what its own proof rests on (the step kinds not machine-checked).
Shipped witnesses are named `ID--NAME` with the command that replays them on any install, never
by a path of the machine that built the page.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import networkx as nx

from attnsvm.claims import registry, runner
from attnsvm.claims.verdicts import Report
from attnsvm.errors import UserError
from attnsvm.files import read_json
from attnsvm.interfaces.report import shipped_witnesses
from attnsvm.interfaces.report import summary as evidence_summary

STANDINGS = {
    "proved": "every proof step machine-checked (symbolic at general sizes or exact), every verdict as expected, "
              "and so for every result it rests on",
    "proved modulo": "its own proof machine-checked and its verdicts as expected, resting on results that are not "
                     "proved on this run (named)",
    "partial": "every verdict as expected; the proof rests on cited, numeric, fixed-size or open steps",
    "refuted": "a REFUTED verdict where none was expected: a counterexample that re-verifies",
    "unsettled": "a part is INCONCLUSIVE or raised an error (its reason is given)",
    "unexpected": "a verdict other than the expected one (e.g. a pass where a counterexample was expected)",
    "incomplete": "every verdict run is as expected, but some parts were not run",
    "not run": "no part of the result was run",
    "stated": "a definition or assumption: stated, not proved",
}
STATEMENTS_DOC = "docs/statements.md"     # every statement with the paper's numbering, one anchor per id
STEP_KINDS = ("symbolic", "fixed sizes", "exact", "numeric", "cited", "open")
NOT_MACHINE_CHECKED = ("fixed sizes", "numeric", "cited", "open")


def step_kind(step: dict) -> str:
    """A step's kind: its status, with symbolic steps verified at fixed sizes only set apart."""
    if step["status"] == "symbolic" and step.get("sizes", "general") != "general":
        return "fixed sizes"
    return step["status"]


def graph(nodes: list[registry.Entry], steps: dict[str, list[dict]] | None = None) -> nx.DiGraph:
    """The dependency graph: an edge u -> v when v's proof uses u (registry `uses`, step `by`;
    a `by` naming no node is shown with its step, not drawn)."""
    g = nx.DiGraph()
    known = {e.id: e.id for e in nodes} | {a: e.id for e in nodes for a in e.aliases}
    for e in nodes:
        g.add_node(e.id)
    for e in nodes:
        used = list(e.uses) + [b for s in (steps or {}).get(e.id, []) for b in s.get("by", [])]
        for u in used:
            if u in known:
                g.add_edge(known[u], e.id)
    return g


def collect(reports: Iterable[Report], figures: dict[str, str] | None = None, run: dict | None = None,
            figure_errors: dict[str, str] | None = None) -> dict:
    """The blueprint of these reports (rows of ids outside the registry, e.g. a user's claims,
    are left out); `figures` maps ids to image paths, `figure_errors` to why a picture could not
    be drawn; `run` says how the reports were made."""
    nodes = registry.all_nodes()
    parts: dict[str, dict[str, Report]] = {e.id: {} for e in nodes}
    for r in reports:
        try:
            key = registry.entry(r.claim).id
        except UserError:
            continue
        parts[key][r.part] = r
    steps = {e.id: _steps(parts[e.id].get("derivation")) for e in nodes}
    g = graph(nodes, steps)
    layer = {n: k for k, gen in enumerate(nx.topological_generations(g)) for n in gen}
    out = [_node(e, parts[e.id], steps[e.id], g, layer[e.id], (figures or {}).get(e.id),
                 (figure_errors or {}).get(e.id))
           for e in nodes]
    own = {n["id"]: n["standing"] for n in out}
    for n in out:
        n["modulo"] = [a for a in _in_order(nx.ancestors(g, n["id"]), nodes) if own[a] not in ("proved", "stated")]
        if n["standing"] == "proved" and n["modulo"]:
            n["standing"] = "proved modulo"
    return {"run": run or {}, "nodes": out, "edges": [list(e) for e in g.edges], "summary": _summary(out),
            "standings": STANDINGS, "step_kinds": list(STEP_KINDS)}


def _in_order(ids, nodes) -> list[str]:
    return [e.id for e in nodes if e.id in ids]


def _steps(derivation: Report | None) -> list[dict]:
    rows = derivation.evidence.get("steps", []) if derivation is not None else []
    return [dict(s, kind=step_kind(s)) for s in rows]


def _report(r: Report | None) -> dict | None:
    if r is None:
        return None
    return dict(r.to_json(), summary=evidence_summary(r))


def _node(e: registry.Entry, parts: dict[str, Report], steps: list[dict], g: nx.DiGraph, layer: int,
          figure: str | None, figure_error: str | None) -> dict:
    counts = Counter(s["kind"] for s in steps)
    rests_on = [k for k in NOT_MACHINE_CHECKED if counts[k]]
    expected_parts = [t.part for t in runner.result_tasks(e, "quick", 0)] if e.has_parts else []
    present = ([parts[p] for p in expected_parts if p in parts]
               + [r for p, r in parts.items() if p not in expected_parts])
    return {
        "id": e.id, "title": e.title, "paper": e.paper, "kind": e.kind, "statement": e.statement,
        "source": getattr(e, "source", ""), "statement_link": f"{STATEMENTS_DOC}#{e.id}",
        "aliases": list(e.aliases), "hypotheses": list(e.hypotheses), "necessity": list(e.necessity),
        "uses": list(g.predecessors(e.id)), "used_by": list(g.successors(e.id)), "layer": layer,
        "standing": _standing(e, present, any(p not in parts for p in expected_parts), rests_on),
        "rests_on": rests_on,
        "derivation": _report(parts.get("derivation")),
        "steps": steps, "step_counts": {k: counts[k] for k in STEP_KINDS if counts[k]},
        "check": _report(parts.get("check")),
        "necessity_rows": [{"hypothesis": h, "report": _report(parts.get(f"drop:{h}"))} for h in e.necessity],
        "witnesses": _witnesses(e, parts),
        "figure": figure, "figure_error": figure_error,
        "parts_run": len(present), "parts_as_expected": sum(r.as_expected for r in present),
    }


def _standing(e: registry.Entry, present: list[Report], missing: bool, rests_on: list[str]) -> str:
    """How the result stands on its own (`collect` then weighs what it rests on)."""
    if not e.has_parts:
        return "stated"
    if not present:
        return "not run"
    off = [r for r in present if not r.as_expected]
    if any(str(r.verdict) == "REFUTED" for r in off):
        return "refuted"
    if any(str(r.verdict) == "INCONCLUSIVE" or r.error is not None for r in off):
        return "unsettled"
    if off:
        return "unexpected"
    if missing:
        return "incomplete"
    return "partial" if rests_on else "proved"


def _witnesses(e: registry.Entry, parts: dict[str, Report]) -> list[dict]:
    """The shipped witnesses of a result: what each refutes, how to replay it, this run's replay."""
    if not e.has_parts:
        return []
    out = []
    for s in shipped_witnesses(e):
        try:
            w = read_json(s["path"])
        except UserError as err:
            w = {"error": str(err)}
        replay = parts.get(s["part"])
        out.append({"name": s["name"], "part": s["part"], "refutes": s["refutes"], "replay_command": s["replay"],
                    "verdict": str(replay.verdict) if replay else None,
                    "instance": w.get("instance"), "outcome": w.get("outcome"), "budget": w.get("budget"),
                    "seed": w.get("seed")})
    return out


def _summary(nodes: list[dict]) -> dict:
    results = [n for n in nodes if n["standing"] != "stated"]
    verdict = lambda n, part: n[part]["verdict"] if n[part] else "not run"
    return {
        "results": len(results), "definitions_and_assumptions": len(nodes) - len(results),
        "by_standing": dict(Counter(n["standing"] for n in results)),
        "by_derivation": dict(Counter(verdict(n, "derivation") for n in results)),
        "by_check": dict(Counter(verdict(n, "check") for n in results)),
        "rests_on": {k: sum(k in n["rests_on"] for n in results) for k in NOT_MACHINE_CHECKED},
        "steps": {k: sum(n["step_counts"].get(k, 0) for n in results) for k in STEP_KINDS},
        "parts_run": sum(n["parts_run"] for n in results),
        "parts_as_expected": sum(n["parts_as_expected"] for n in results),
        "witnesses": sum(len(n["witnesses"]) for n in results),
    }
