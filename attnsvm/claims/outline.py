"""Proof outlines (leanblueprint style): a result's proof as steps, each with a status that
says how it is known.

- `symbolic`: sympy verifies the step; `sizes` says for which sizes ("general", or e.g.
  "T = 2..5": verified only there);
- `exact`: rational arithmetic or an exact algebraic argument that the code carries out;
- `numeric`: supported by a numeric check, which `reference` names;
- `cited`: taken from the literature or the paper's own text, which `reference` names;
- `open`: not established.

The derivation's verdict (`Outline.verdict`): REFUTED when a machine-checked step fails;
PROVED only when every step is `symbolic` at general sizes or `exact` and verified; otherwise
PARTIAL, whose summary says how many steps are machine-checked and which are not.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from attnsvm.claims.isolation import CodeError, guarded
from attnsvm.claims.verdicts import Report, Verdict

STATUSES = ("symbolic", "exact", "numeric", "cited", "open")
GENERAL = "general"


@dataclass(frozen=True)
class Step:
    """One step of a proof. `verify` (symbolic and exact steps) returns a JSON-ready dict whose
    "ok" says whether the step checked; `by` names results the step uses (registry ids)."""

    statement: str
    status: str
    verify: Callable[[], dict] | None = None
    sizes: str = GENERAL
    reference: str = ""
    by: tuple[str, ...] = ()

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"step status {self.status!r} is not one of {STATUSES}")
        if self.status in ("symbolic", "exact") and self.verify is None:
            raise ValueError(f"a {self.status} step needs a verify function: {self.statement}")
        if self.status in ("numeric", "cited") and not self.reference:
            raise ValueError(f"a {self.status} step must name its "
                             f"{'check' if self.status == 'numeric' else 'reference'}")

    @property
    def machine_checked(self) -> bool:
        """Counts toward PROVED: symbolic at general sizes, or exact."""
        return self.status == "exact" or (self.status == "symbolic" and self.sizes == GENERAL)


@dataclass(frozen=True)
class Outline:
    """The proof of `statement` as `steps`; `reconstruction` says which formulas are our
    reconstruction rather than the paper's text."""

    statement: str
    steps: tuple[Step, ...]
    reconstruction: str = ""

    def check(self, name: str = "", expected: tuple[str, ...] = ()) -> Report:
        start = time.perf_counter()
        rows, failed, error = [], [], None
        for k, step in enumerate(self.steps, 1):
            row = {"step": k, "statement": step.statement, "status": step.status}
            if step.status == "symbolic":
                row["sizes"] = step.sizes
            if step.reference:
                row["reference"] = step.reference
            if step.by:
                row["by"] = list(step.by)
            if step.verify is not None:
                try:
                    detail = guarded(f"step {k}", step.verify)
                except CodeError as e:
                    detail, error = {"ok": False, "error": e.line()}, error or e
                row["verified"] = bool(detail.get("ok"))
                row["detail"] = {k2: v for k2, v in detail.items() if k2 != "ok"}
                if not row["verified"]:
                    failed.append(k)
            rows.append(row)
        verdict, summary = self.verdict(failed)
        evidence = {"statement": self.statement, "steps": rows, "summary": summary}
        if self.reconstruction:
            evidence["reconstruction"] = self.reconstruction
        return Report(name, "derivation", verdict, expected, evidence, None, time.perf_counter() - start,
                      error.to_json() if error else None)

    def verdict(self, failed: list[int]) -> tuple[Verdict, str]:
        n = len(self.steps)
        checked = sum(s.machine_checked for s in self.steps)
        if failed:
            return Verdict.REFUTED, f"step(s) {failed} failed their machine check"
        if checked == n:
            return Verdict.PROVED, f"all {n} steps machine-checked (symbolic at general sizes or exact)"
        parts = [f"{checked} of {n} steps machine-checked"]
        for label, pick in (("fixed sizes", lambda s: s.status == "symbolic" and s.sizes != GENERAL),
                            ("numeric", lambda s: s.status == "numeric"), ("cited", lambda s: s.status == "cited"),
                            ("open", lambda s: s.status == "open")):
            ks = [str(k) for k, s in enumerate(self.steps, 1) if pick(s)]
            if ks:
                detail = "; ".join(f"{k}: {s.sizes if label == 'fixed sizes' else s.reference or 'open'}"
                                   for k, s in ((k, self.steps[int(k) - 1]) for k in ks))
                parts.append(f"{label}: step {', '.join(ks)} ({detail})")
        return Verdict.PARTIAL, "; ".join(parts)
