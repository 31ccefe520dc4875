"""Run a result's parts (derivation, check, one necessity per hypothesis) into Reports."""

from __future__ import annotations

import time
import traceback
from typing import Callable, Iterator

from attnsvm.claims import registry
from attnsvm.claims.engine import (
    Budget,
    Report,
    Verdict,
    check,
    get_budget,
    replay_witness,
)
from attnsvm.errors import UserError
from attnsvm.files import read_json


def _guard(id: str, part: str, expected, fn: Callable[[], Report]) -> Report:
    """An unexpected exception in a part is INCONCLUSIVE with its reason, never a pass."""
    start = time.perf_counter()
    try:
        return fn()
    except UserError:
        raise
    except Exception as e:  # noqa: BLE001 - reported, not swallowed
        frame = traceback.extract_tb(e.__traceback__)[-1]
        reason = f"internal error {e.__class__.__name__}: {e} ({frame.filename.split('/')[-1]}:{frame.lineno})"
        return Report(id, part, Verdict.INCONCLUSIVE, tuple(expected), {"note": reason}, None, time.perf_counter() - start)


def derivation_report(e: registry.Entry) -> Report:
    def go():
        start = time.perf_counter()
        d = registry.derivation(e)()
        return Report(e.id, "derivation", d.verdict, e.derivation, {"statement": d.statement, **d.detail}, None,
                      time.perf_counter() - start)
    return _guard(e.id, "derivation", e.derivation, go)


def check_report(e: registry.Entry, budget: Budget, seed: int) -> Report:
    def go():
        from dataclasses import replace
        return check(replace(registry.claim(e), name=e.id, expected=e.check), budget, seed)
    return _guard(e.id, "check", e.check, go)


def necessity_report(e: registry.Entry, hyp: str, budget: Budget, seed: int, search: bool = False) -> Report:
    """Replay the stored witness for dropping `hyp`; search afresh when asked or when none is stored."""
    s = registry.searches(e)[hyp]

    def go():
        from dataclasses import replace
        claim = replace(registry.claim(e), name=e.id).drop(hyp, instances=s.instances)
        claim = replace(claim, expected=s.expected)
        path = registry.witness_path(e, hyp)
        if path.exists() and not search:
            rep = replay_witness(read_json(path), claim)
            rep.evidence["witness_file"] = str(path.relative_to(registry.ROOT))
            return rep
        return check(claim, budget, seed)
    return _guard(e.id, f"drop:{hyp}", s.expected, go)


def witness_report(e: registry.Entry, path) -> Report:
    """Replay a stored counterexample to the claim itself (expected REFUTED)."""
    def go():
        from dataclasses import replace
        w = read_json(path)
        claim = replace(registry.claim(e), name=e.id)
        if w.get("dropped"):
            claim = claim.drop(*w["dropped"])
        rep = replay_witness(w, replace(claim, expected=("REFUTED",)))
        rep.part = f"witness:{path.stem.split('--', 1)[1]}"
        rep.evidence["witness_file"] = str(path.relative_to(registry.ROOT))
        return rep
    return _guard(e.id, f"witness:{path.stem.split('--', 1)[1]}", ("REFUTED",), go)


def reports(e: registry.Entry, budget: str | Budget = "quick", seed: int = 0, search: bool = False) -> Iterator[Report]:
    budget = get_budget(budget)
    yield derivation_report(e)
    yield check_report(e, budget, seed)
    for hyp in registry.searches(e):
        yield necessity_report(e, hyp, budget, seed, search or budget.name == "thorough")
    for path in registry.claim_witnesses(e):
        yield witness_report(e, path)


def parts(e: registry.Entry) -> int:
    return 2 + len(registry.searches(e)) + len(registry.claim_witnesses(e))
