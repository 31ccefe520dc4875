"""Rendering Reports: a rich verdict table and stable JSON."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from attnsvm.claims import Report

COLORS = {"PROVED": "green", "CERTIFIED": "green", "SUPPORTED": "cyan", "REFUTED": "magenta", "INCONCLUSIVE": "yellow"}


def summary(r: Report) -> str:
    """One line of evidence: what the verdict rests on."""
    ev = r.evidence
    if r.part == "derivation":
        return ev.get("note") or ev.get("statement", "")
    if "note" in ev:
        return ev["note"]
    if ev.get("replayed"):
        return f"stored witness {ev.get('witness_file', '')} re-verified"
    if r.witness is not None:
        bits = [f"counterexample found and minimized ({ev.get('evaluated', 0)} evaluations)"]
    else:
        bits = [f"{ev.get('instances', 0)} instances held"]
        if ev.get("certified"):
            bits[0] += f" ({ev['certified']} exactly)"
    bits += [f"seed {ev.get('seed')}", ev.get("budget", "")]
    if ev.get("inconclusive"):
        bits.append(f"{ev['inconclusive']} inconclusive")
    return ", ".join(str(b) for b in bits if b != "")


def table(reports: list[Report]) -> Table:
    t = Table(title="attnsvm verdicts", show_lines=False)
    for col in ("id", "part", "verdict", "expected", "ok", "evidence", "s"):
        t.add_column(col, overflow="fold")
    for r in reports:
        v = str(r.verdict)
        t.add_row(r.claim, r.part, f"[{COLORS.get(v, 'white')}]{v}[/]", "|".join(r.expected) or "-",
                  "[green]yes[/]" if r.as_expected else "[red]NO[/]", summary(r), f"{r.seconds:.1f}")
    return t


def print_table(reports: list[Report], console: Console | None = None) -> None:
    (console or Console()).print(table(reports))
