"""Run results' parts as independent tasks: a registry result's derivation (its outline), its
check, one necessity row per hypothesis and one row per stored counterexample; a user file's
claims one by one. A task is plain data (it can go to another process or a Dask worker) and
always comes back as a Report: an internal error is an INCONCLUSIVE row with its reason, never
a lost run."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from attnsvm.claims import registry
from attnsvm.claims.budget import get_budget
from attnsvm.claims.isolation import CodeError, describe
from attnsvm.claims.parameters import DECLARED
from attnsvm.claims.search import check
from attnsvm.claims.verdicts import Report, Verdict
from attnsvm.claims.witnesses import replay_witness
from attnsvm.errors import UserError
from attnsvm.files import read_json


@dataclass(frozen=True)
class Task:
    """One part: `id` a registry id (part 'derivation', 'check', 'drop:<H>', 'witness:<name>') or
    a user's claim ('<file>:<name>', part 'check', with `file` its path)."""

    id: str
    part: str
    budget: str
    seed: int
    search: bool = False
    file: str | None = None
    name: str | None = None

    @property
    def label(self) -> str:
        return f"{self.id} {self.part}"


def result_tasks(e: registry.Entry, budget: str, seed: int, search: bool = False) -> list[Task]:
    parts = []
    if registry.has("lemmas", e):
        parts.append("derivation")
    if registry.has("checks", e):
        parts.append("check")
        parts += [f"drop:{h}" for h in e.necessity]
        parts += [f"witness:{p.stem.split('--', 1)[1]}" for p in registry.claim_witnesses(e)]
    return [Task(e.id, part, budget, seed, search or budget == "thorough") for part in parts]


def file_tasks(path: str, names, budget: str, seed: int) -> list[Task]:
    from pathlib import Path

    return [Task(f"{Path(path).name}:{n}", "check", budget, seed, file=str(Path(path).resolve()), name=n)
            for n in names]


def run(task: Task) -> Report:
    """The task's report; nothing it runs can escape as an exception."""
    start = time.perf_counter()
    try:
        return _run(task)
    except (UserError, CodeError, Exception) as e:  # becomes the task's row
        if isinstance(e, CodeError):
            err = e.to_json()
            note = e.line()
        else:
            kind, msg, frame = describe(e)
            err = {"where": "attnsvm", "type": kind, "message": msg, "frame": frame, "instance": None}
            note = f"internal error {kind}: {msg} ({frame})" if not isinstance(e, UserError) else str(e)
        return Report(task.id, task.part, Verdict.INCONCLUSIVE, _expected(task), {"note": note},
                      None, time.perf_counter() - start, err)


def lost(task: Task, why: str, where: str = "process", kind: str = "ProcessLost") -> Report:
    """The row of a task whose process gave no report: the claim's code ended it (os._exit, a
    crash: 'process', ProcessLost) or ran past the part's limit in code no signal reaches and
    was killed ('clock', Runaway)."""
    return Report(task.id, task.part, Verdict.INCONCLUSIVE, _expected(task),
                  {"note": why, "budget": task.budget, "seed": task.seed}, None, 0.0,
                  {"where": where, "type": kind, "message": why, "frame": "", "instance": None})


def _expected(task: Task) -> tuple[str, ...]:
    if task.file is not None:
        return ()
    try:
        e = registry.entry(task.id)
    except UserError:
        return ()
    if task.part == "derivation":
        return e.derivation
    if task.part == "check":
        return e.check
    return ("REFUTED",)


def _run(task: Task) -> Report:
    budget = get_budget(task.budget)
    if task.file is not None:
        from attnsvm.claims.userfiles import load_claims_file

        claim = load_claims_file(task.file)[task.name]
        return check(replace(claim, name=task.id), budget, task.seed)
    e = registry.entry(task.id)
    kind, _, name = task.part.partition(":")
    if kind == "derivation":
        return derivation_report(e)
    if kind == "check":
        return check_report(e, budget, task.seed)
    if kind == "drop":
        return necessity_report(e, name, budget, task.seed, task.search)
    if kind == "witness":
        return witness_report(e, registry.witness_path(e, name))
    raise UserError(f"unknown part {task.part!r}")


def derivation_report(e: registry.Entry) -> Report:
    """The result's proof outline, checked step by step."""
    return registry.outline(e)().check(e.id, e.derivation)


def registered_claim(e: registry.Entry):
    return replace(registry.claim(e), name=e.id, expected=e.check)


def check_report(e: registry.Entry, budget, seed: int) -> Report:
    """The search of the result's claim as stated."""
    return check(registered_claim(e), budget, seed)


def necessity_report(e: registry.Entry, hyp: str, budget, seed: int, search: bool = False) -> Report:
    """Replay the stored witness for dropping `hyp`; search afresh when asked or when none is stored."""
    s = registry.searches(e)[hyp]
    claim = registered_claim(e).drop(hyp, instances=s.instances)
    path = registry.witness_path(e, hyp)
    if path.exists() and not search:
        return _replay(path, claim, f"drop:{hyp}")
    return check(claim, budget, seed)


def witness_report(e: registry.Entry, path) -> Report:
    """Replay a stored counterexample to the claim as stated (or with the hypotheses it drops)."""
    claim = registered_claim(e)
    dropped = read_json(path).get("dropped") or []
    return _replay(path, claim.drop(*dropped) if dropped else claim, f"witness:{path.stem.split('--', 1)[1]}")


def _replay(path, claim, part: str) -> Report:
    w = read_json(path)
    rep = replay_witness(w, replace(claim, expected=("REFUTED",)), claim.instances(claim.dropped),
                         declared=DECLARED.get(claim.name))
    rep.part = part
    rep.evidence["shipped_witness"] = path.stem          # ID--NAME: `attnsvm replay --shipped ID--NAME` anywhere
    return rep


def reports(e: registry.Entry, budget="quick", seed: int = 0, search: bool = False):
    """Every part of one result, in order (inline)."""
    name = get_budget(budget).name
    for t in result_tasks(e, name, seed, search):
        yield run(t)
