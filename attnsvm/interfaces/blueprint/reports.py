"""The reports a blueprint is built from, read from the JSON of `attnsvm check --json`: every
report's structure checked as the page reads it (a one-line error naming the file and the
field). Light: no engine or graph import, so a missing or malformed file fails fast."""

from __future__ import annotations

import math
from pathlib import Path

from attnsvm.claims.verdicts import Report
from attnsvm.errors import UserError
from attnsvm.files import read_json


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
