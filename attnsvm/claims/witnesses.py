"""Witnesses: counterexamples stored as JSON data, re-verified from their files.

A witness names the claim it refutes (`claim`, `source`), the hypotheses dropped and those the
instance violates, the budget and seed of the search, the instance and the outcome. It is data:
replaying it never runs code the witness names (the caller resolves `source` against the
registry or a file the user named); its fields are checked against `SCHEMA` and its instance
parameters against the claim's instance space.
"""

from __future__ import annotations

import time
from typing import Any

from attnsvm.claims import parameters
from attnsvm.claims.budget import BUDGETS, Budget
from attnsvm.claims.claim import Claim, Instance, OutcomeError, validate_outcome
from attnsvm.claims.isolation import CodeError, guarded
from attnsvm.claims.spaces import check_params
from attnsvm.claims.verdicts import Report, Verdict
from attnsvm.errors import UserError

FORMAT = "attnsvm-witness/1"
# field -> (types, required)
SCHEMA: dict[str, tuple[tuple[type, ...], bool]] = {
    "format": ((str,), True), "claim": ((str,), True), "source": ((str,), True), "statement": ((str,), False),
    "dropped": ((list,), True), "violates": ((list,), False), "budget": ((str, dict), True), "seed": ((int,), False),
    "instance": ((dict,), True), "verdict": ((str,), False), "outcome": ((dict,), False), "provenance": ((str,), False),
    "note": ((str,), False),
}


def validate(witness: Any, where: str = "witness") -> dict:
    """The witness if its fields match `SCHEMA`, else a one-line UserError naming the field."""
    if not isinstance(witness, dict):
        raise UserError(f"{where}: not an attnsvm witness (expected a JSON object)")
    if witness.get("format") != FORMAT:
        raise UserError(f"{where}: not an attnsvm witness (expected format {FORMAT!r}, got {witness.get('format')!r})")
    unknown = sorted(set(witness) - set(SCHEMA))
    if unknown:
        raise UserError(f"{where}: unknown field(s) {unknown}")
    for key, (types, required) in SCHEMA.items():
        if key not in witness:
            if required:
                raise UserError(f"{where}: missing field {key!r}")
            continue
        value = witness[key]
        if not isinstance(value, types) or (types == (int,) and isinstance(value, bool)):
            raise UserError(f"{where}: field {key!r} must be {' or '.join(t.__name__ for t in types)}, "
                            f"got {type(value).__name__}")
    for key in ("dropped", "violates"):
        if not all(isinstance(x, str) for x in witness.get(key, [])):
            raise UserError(f"{where}: field {key!r} must be a list of hypothesis names")
    Budget.from_json(witness["budget"], f"{where}: budget")
    if witness.get("verdict", "REFUTED") != "REFUTED":
        raise UserError(f"{where}: verdict must be 'REFUTED'")
    if witness["claim"] != witness["source"]:
        raise UserError(f"{where}: claim {witness['claim']!r} disagrees with source {witness['source']!r} "
                        "(a witness names the claim it refutes in both)")
    if "seed" in witness:
        _bounded(where, "seed", witness["seed"], parameters.SEED)
    return witness


def _bounded(where: str, name: str, value, constraint) -> None:
    try:
        parameters.check(name, value, constraint)
    except UserError as e:
        raise UserError(f"{where}: {e}") from None


def make_witness(claim: Claim, inst: Instance, budget: Budget, seed: int, source: str | None = None) -> dict:
    out = validate_outcome(guarded("conclusion", claim.conclusion, inst, budget, instance=inst))
    return {"format": FORMAT, "claim": claim.name, "source": source or claim.name,
            "statement": claim.statement, "dropped": sorted(claim.dropped), "violates": claim.violated(inst),
            "budget": budget.name if BUDGETS.get(budget.name) == budget else budget.to_json(), "seed": seed,
            "instance": inst.to_json(),
            "verdict": "REFUTED", "outcome": {"holds": out.holds, "reason": out.reason, **out.detail}}


def replay_witness(witness: dict, claim: Claim, space=None, declared: dict | None = None) -> Report:
    """Re-verify a stored witness against `claim` (already with its hypotheses dropped): the
    instance must lie in the claim's instance space (`space`, default the claim's own) and meet
    its result's `declared` parameters (`parameters.DECLARED`), meet the kept hypotheses,
    violate a dropped one, and refute."""
    start = time.perf_counter()
    validate(witness)
    inst = Instance.from_json(witness["instance"], "witness.instance")
    budget = Budget.from_json(witness["budget"])
    evidence: dict[str, Any] = {"budget": budget.name, "dropped": witness.get("dropped", []), "replayed": True}

    def report(verdict, note="", error=None):
        if note:
            evidence["note"] = note
        return Report(claim.name, claim.part, verdict, claim.expected, evidence, witness, time.perf_counter() - start,
                      error)

    why = check_params(space if space is not None else _space_of(claim), inst.params) or \
        (parameters.why_not(declared, inst.params, parameters.sizes_of(inst.dataset)) if declared is not None else None)
    if why:
        raise UserError(f"witness: {why}")
    try:
        if not guarded("hypotheses", claim.meets, inst, instance=inst):
            return report(Verdict.INCONCLUSIVE, "the witness does not meet the claim's hypotheses "
                                                "(or violates none of the dropped ones)")
        out = validate_outcome(guarded("conclusion", claim.conclusion, inst, budget, instance=inst))
    except CodeError as e:
        return report(Verdict.INCONCLUSIVE, e.line(), e.to_json())
    except OutcomeError as e:
        return report(Verdict.INCONCLUSIVE, str(e), {"where": "conclusion", "type": "OutcomeError", "message": str(e),
                                                     "instance": inst.to_json()})
    evidence.update(outcome={"holds": out.holds, "reason": out.reason, **out.detail})
    if out.holds is False:
        return report(Verdict.REFUTED)
    if out.holds is None:
        return report(Verdict.INCONCLUSIVE, out.reason)
    return report(Verdict.CERTIFIED if out.certified else Verdict.SUPPORTED,
                  "the stored counterexample no longer refutes the claim")


def _space_of(claim: Claim):
    try:
        return claim.instances(claim.dropped)
    except Exception:  # the instance space is only consulted to validate parameters
        return None
