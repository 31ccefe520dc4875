"""Rendering Reports: a rich verdict table whose evidence column says what each verdict rests on.
A shipped witness (one of the result folders' stored counterexamples) is named `ID--NAME` and
replayed with `replay_shipped(NAME)`, on any install; never by a path of this machine."""

from __future__ import annotations

from attnsvm.claims.verdicts import Report

COLORS = {"PROVED": "green", "PARTIAL": "blue", "CERTIFIED": "green", "SUPPORTED": "cyan", "REFUTED": "magenta",
          "INCONCLUSIVE": "yellow"}


def replay_shipped(name: str) -> str:
    """The command that replays the shipped witness `ID--NAME` wherever attnsvm is installed."""
    return f"attnsvm replay --shipped {name}"


def shipped_witnesses(e) -> list[dict]:
    """The witnesses shipped with registry result `e` (`registry.WITNESS_DIR/ID--NAME.json`): each
    one's name `ID--NAME`, the part of `check` that replays it, what it refutes, the command that
    replays it anywhere, and its file here."""
    from attnsvm.claims import registry
    from attnsvm.errors import UserError
    from attnsvm.files import read_json

    out = []
    for path in sorted(registry.WITNESS_DIR.glob(f"{e.id}--*.json")):
        name = path.stem.split("--", 1)[1]
        try:
            dropped = read_json(path).get("dropped") or []
        except (UserError, AttributeError):
            dropped = []
        refutes = f"the claim without {name}" if name in e.necessity else \
            "the claim as stated" + (f" (with {', '.join(dropped)} dropped)" if dropped else "")
        out.append({"name": path.stem, "id": e.id, "part": f"drop:{name}" if name in e.necessity else f"witness:{name}",
                    "refutes": refutes, "replay": replay_shipped(path.stem), "path": path})
    return out


def searched(ev: dict) -> str:
    """What a search covered: the exhaustive scopes, random and targeted instances."""
    cover = ev.get("search", {})
    bits = []
    ex = cover.get("exhaustive")
    if ex:
        if ex.get("exhausted"):
            bits.append(f"exhaustive over the whole space ({ex['instances']} instances)")
        elif ex.get("scopes"):
            bits.append(f"exhaustive over {len(ex['scopes'])} scope(s) up to {ex['scopes'][-1]} "
                        f"({ex['instances']} instances)")
        elif "note" in ex:
            bits.append(ex["note"])
    rt = cover.get("random_targeted")
    if rt:
        bits.append(f"{rt['instances']} {'random and targeted' if rt.get('targeted') else 'random'}")
    return "; ".join(bits)


def summary(r: Report) -> str:
    """One line of evidence: what the verdict rests on."""
    ev = r.evidence
    if r.part == "derivation":
        return ev.get("note") or ev.get("summary", "")
    if ev.get("replayed"):
        stored = f"shipped witness {ev['shipped_witness']}" if ev.get("shipped_witness") else \
            f"stored witness {ev.get('witness_file', '')}"
        return ev.get("note") or f"{stored} re-verified"
    if r.witness is not None and r.verdict.value == "REFUTED":
        covered = "; ".join(filter(None, [f"{ev.get('evaluated', 0)} evaluations", searched(ev)]))
        head = f"counterexample found and minimized ({covered})"
    else:
        head = (f"{ev.get('instances', 0)} instances held"
                + (f" ({ev['certified']} exactly)" if ev.get("certified") else ""))
        if ev.get("inconclusive"):
            head += f", {ev['inconclusive']} undecided"
        if searched(ev):
            head += f"; {searched(ev)}"
        if r.error is None:              # code that raised: the exception is the evidence
            head += "".join(f"; {b}" for b in settings(ev) if b)
    bits = [ev["note"]] if "note" in ev else []
    bits += [head, f"seed {ev.get('seed')}, {ev.get('budget', '')}"]
    return "; ".join(str(b) for b in bits if b)


def settings(ev: dict) -> list[str]:
    """What numeric evidence was measured against, briefly: the finite-horizon proxy, the horizon,
    the tolerance and (SUPPORTED) the failure rate the search could have missed (rule of three)."""
    bits = [f"proxy: {ev['proxy']}" if ev.get("proxy") else "",
            f"horizon {ev['horizon']}" if ev.get("horizon") else "",
            f"tolerance {ev['tolerance']}" if ev.get("tolerance") else ""]
    held = ev.get("instances")
    if ev.get("power") and isinstance(held, int) and held > 0:
        bits.append(f"power: a failure rate above {3 / held:.2g} would have shown (95%)")
    return bits


def table(reports: list[Report]):
    from rich.markup import escape
    from rich.table import Table

    from attnsvm.errors import printable

    shown = lambda text: escape(printable(text))      # names and messages of user code, as text
    t = Table(title="attnsvm verdicts", show_lines=False)
    for col in ("id", "part", "verdict", "expected", "ok", "evidence", "s"):
        t.add_column(col, overflow="fold", no_wrap=col == "id")     # ids whole: they are typed back
    for r in reports:
        v = str(r.verdict)
        t.add_row(shown(r.claim), shown(r.part), f"[{COLORS.get(v, 'white')}]{v}[/]", "|".join(r.expected) or "-",
                  "[green]yes[/]" if r.as_expected else "[red]NO[/]", shown(summary(r)), f"{r.seconds:.1f}")
    return t


def print_table(reports: list[Report], console=None) -> None:
    from rich.console import Console

    (console or Console()).print(table(reports))
