"""A sweep's verdicts as the claims' `Report`s (`attnsvm.claims.verdicts`): one per qualitative
claim of the paper, part 'reproduce', in the claims' verdict vocabulary (SUPPORTED, REFUTED or
INCONCLUSIVE here), with the numbers behind it in `evidence`: `summary` (the line a reader sees),
`conditions` (the run's proxy, horizon, tolerance and seed, shared by a sweep's reports) and the
measured values. Summaries hold Reports; `json_ready` turns them into strict-JSON objects."""

from __future__ import annotations

from collections.abc import Iterable

from attnsvm.claims.verdicts import Report, Verdict

PART = "reproduce"


def check(claim: str, verdict: str | Verdict, summary: str, **numbers) -> Report:
    """One claim's verdict; `numbers` (JSON-ready) are kept beside the summary."""
    return Report(claim, PART, Verdict(verdict), evidence={"summary": summary, **numbers})


def every(verdicts: Iterable[str | Verdict | None]) -> Verdict:
    """A claim over several parts (every d, start, picture): REFUTED if one part refutes it,
    SUPPORTED if every part supports it, else INCONCLUSIVE (a missing part, None, included)."""
    vs = list(verdicts)
    if Verdict.REFUTED in vs:
        return Verdict.REFUTED
    return Verdict.SUPPORTED if vs and all(v == Verdict.SUPPORTED for v in vs) else Verdict.INCONCLUSIVE


def with_conditions(checks: list[Report], conditions: str) -> list[Report]:
    """Record the run's conditions in every report (`cli.print_checks` prints them once)."""
    for c in checks:
        c.evidence["conditions"] = conditions
    return checks


def line(report: Report) -> str:
    """The evidence as one line: summary; conditions."""
    e = report.evidence
    return "; ".join(x for x in (e.get("summary"), e.get("conditions")) if x)


def json_ready(summary: dict) -> dict:
    """`summary` with its reports (`checks`) as JSON objects."""
    return {**summary, "checks": [c.to_json() for c in summary["checks"]]}
