"""The blueprint's content: every node of the dependency graph (registry.all_nodes()) with its
reports, the steps of its proof outline, its stored witnesses and its figure, and a summary
that counts results by standing. Plain JSON-ready data, rendered by `html` and `markdown`.

Edges are what a proof uses: the registry's `uses` and the `by` of its outline's steps. A node's
*standing* says how it stands on this run (STANDINGS); a partial result says what its proof
rests on (the step kinds that are not machine-checked), and every result lists the results
it rests on, through `uses`, that are not proved.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterable

import networkx as nx

from attnsvm.claims import registry, runner
from attnsvm.claims.verdicts import Report
from attnsvm.errors import UserError
from attnsvm.files import read_json
from attnsvm.interfaces.report import summary as evidence_summary

STANDINGS = {
    "proved": "every proof step machine-checked (symbolic at general sizes or exact), every verdict as expected",
    "partial": "every verdict as expected; the proof rests on cited, numeric, fixed-size or open steps",
    "refuted": "a REFUTED verdict where none was expected: a counterexample that re-verifies",
    "unsettled": "a part is INCONCLUSIVE or raised an error (its reason is given)",
    "unexpected": "a verdict other than the expected one (e.g. a pass where a counterexample was expected)",
    "incomplete": "every verdict run is as expected, but some parts were not run",
    "not run": "no part of the result was run",
    "stated": "a definition or assumption: stated, not proved",
}
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


def load_reports(path: str | Path) -> tuple[list[Report], dict]:
    """The reports of an `attnsvm check --json` file, and its run (budget, seed)."""
    obj = read_json(path)
    if not isinstance(obj, dict) or not isinstance(obj.get("reports"), list):
        raise UserError(f"{path}: not the JSON of `attnsvm check --json` (no 'reports' list)")
    for k, r in enumerate(obj["reports"]):
        _check_report(path, k, r)
    try:
        reports = [Report.from_json(r) for r in obj["reports"]]
    except (KeyError, TypeError, ValueError) as e:
        raise UserError(f"{path}: a report is malformed ({e.__class__.__name__}: {e})") from None
    budget = obj.get("budget")
    return reports, {"budget": budget.get("name") if isinstance(budget, dict) else budget, "seed": obj.get("seed")}


def _check_report(path, k: int, r) -> None:
    """One report's structure, as the page reads it: a one-line UserError naming the file and field."""
    import math

    where = f"{path}: malformed reports[{k}]"
    if not isinstance(r, dict):
        raise UserError(f"{where}: expected an object, got {type(r).__name__}")
    for key in ("id", "part", "verdict"):
        if not isinstance(r.get(key), str):
            raise UserError(f"{where}.{key}: expected a string, got {r.get(key)!r:.60}")
    exp = r.get("expected", [])
    if not isinstance(exp, list) or not all(isinstance(x, str) for x in exp):
        raise UserError(f"{where}.expected: expected a list of strings, got {exp!r:.60}")
    if r.get("error") is not None and not isinstance(r["error"], str):
        raise UserError(f"{where}.error: expected a string or null, got {r['error']!r:.60}")
    sec = r.get("seconds", 0.0)
    if isinstance(sec, bool) or not isinstance(sec, (int, float)) or not math.isfinite(sec):
        raise UserError(f"{where}.seconds: expected a finite number, got {sec!r:.60}")
    ev = r.get("evidence", {})
    if not isinstance(ev, dict):
        raise UserError(f"{where}.evidence: expected an object, got {type(ev).__name__}")
    steps = ev.get("steps", [])
    if not isinstance(steps, list):
        raise UserError(f"{where}.evidence.steps: expected a list, got {type(steps).__name__}")
    for j, st in enumerate(steps):
        at = f"{where}.evidence.steps[{j}]"
        if not isinstance(st, dict):
            raise UserError(f"{at}: expected an object, got {type(st).__name__}")
        if not isinstance(st.get("status"), str):
            raise UserError(f"{at}.status: expected a string, got {st.get('status')!r:.60}")
        if not isinstance(st.get("sizes", "general"), str):
            raise UserError(f"{at}.sizes: expected a string, got {st.get('sizes')!r:.60}")
        by = st.get("by", [])
        if not isinstance(by, list) or not all(isinstance(b, str) for b in by):
            raise UserError(f"{at}.by: expected a list of result ids, got {by!r:.60}")


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
    out = [_node(e, parts[e.id], steps[e.id], g, layer[e.id], (figures or {}).get(e.id), (figure_errors or {}).get(e.id))
           for e in nodes]
    standing = {n["id"]: n["standing"] for n in out}
    for n in out:
        n["unsettled_ancestors"] = [a for a in _in_order(nx.ancestors(g, n["id"]), nodes)
                                    if standing[a] not in ("proved", "stated")]
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
    present = [parts[p] for p in expected_parts if p in parts] + [r for p, r in parts.items() if p not in expected_parts]
    return {
        "id": e.id, "title": e.title, "paper": e.paper, "kind": e.kind, "statement": e.statement,
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
    """The stored witnesses of a result: what each refutes, how to replay it, this run's replay."""
    if not e.has_parts:
        return []
    out = []
    for path in sorted(registry.WITNESS_DIR.glob(f"{e.id}--*.json")):
        name = path.stem.split("--", 1)[1]
        part = f"drop:{name}" if name in e.necessity else f"witness:{name}"
        rel = f"counterexamples/witnesses/{path.name}"
        try:
            w = read_json(path)
        except UserError as err:
            w = {"error": str(err)}
        replay = parts.get(part)
        out.append({"name": name, "file": rel, "part": part,
                    "refutes": (f"the claim without {name}" if name in e.necessity else "the claim as stated"
                                + (f" (with {', '.join(w['dropped'])} dropped)" if w.get("dropped") else "")),
                    "replay_command": f"attnsvm replay {_from_here(path)}",
                    "verdict": str(replay.verdict) if replay else None,
                    "instance": w.get("instance"), "outcome": w.get("outcome"), "budget": w.get("budget"),
                    "seed": w.get("seed")})
    return out


def _from_here(path: Path) -> str:
    """The path as a user types it here: relative to the current directory when under it."""
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


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
