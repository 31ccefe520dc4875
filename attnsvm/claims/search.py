"""The search behind a claim's verdict (README, "Verdicts").

`check(claim, budget, seed)` looks for an instance that meets the hypotheses and refutes the
conclusion, in three phases that share the budget:

1. exhaustive: when the claim's instances are a `Space`, every instance of each scope of its
   ladder, smallest first, until the phase's share of the budget is spent (the report names
   the scopes completed and whether the whole space was covered);
2. targeted and random: Hypothesis generation on the same space (or the claim's own
   strategy), steering toward small `Outcome.margin` (`hypothesis.target`); a failure is
   shrunk to a small witness;
3. the verdict:
   - REFUTED: a counterexample that re-verifies after a JSON round trip (the witness);
   - CERTIFIED: no counterexample, the space was covered exhaustively and every instance
     was decided exactly (a sample of cases is not every case);
   - SUPPORTED: no counterexample among at least `min_instances` conclusive instances, at
     most a quarter of the evaluated ones inconclusive (an inconclusive instance is first
     retried with a longer horizon);
   - INCONCLUSIVE: otherwise, with the reason: too few instances met the hypotheses, too many
     were undecided, the wall-clock limit passed, or claim code raised (`Report.error`: the
     exception and the instance as replayable JSON).
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, settings

from attnsvm.claims.budget import Budget, get_budget
from attnsvm.claims.claim import Claim, Instance, Outcome, OutcomeError, validate_outcome
from attnsvm.claims.isolation import CodeError, OverTime, guarded, time_limit
from attnsvm.claims.spaces import NotEnumerable, Space, as_strategy
from attnsvm.claims.verdicts import Report, Verdict
from attnsvm.claims.witnesses import make_witness, replay_witness

EXHAUSTIVE_SHARE = 0.5          # of the budget's seconds and evaluations
INCONCLUSIVE_SHARE = 0.25       # SUPPORTED needs at most this share of evaluated instances undecided


class _Found(BaseException):
    """A counterexample (a BaseException so that it ends the search at once)."""

    def __init__(self, instance: Instance):
        self.instance = instance


class _Spent(BaseException):
    """The search's budget is spent."""


class Search:
    """State of one check: counts, reasons, measures, what each phase covered."""

    def __init__(self, claim: Claim, budget: Budget, seed: int):
        self.claim, self.budget, self.seed = claim, budget, seed
        self.start = time.monotonic()
        self.stats: Counter = Counter()
        self.reasons: Counter = Counter()
        self.measured: dict[str, list[float]] = {k: [] for k in claim.measures}
        self.best_margin: float | None = None
        self.seen: set[str] = set()
        self.coverage: dict[str, Any] = {}

    # -- clock and budget ------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def spent(self, share: float = 1.0) -> bool:
        """The phase must stop: its share of the evaluations is used, or its share of the time
        is (the last phase only once `min_instances` held, then at most a quarter of the limit)."""
        b, t = self.budget, self.elapsed()
        if self.stats["evaluated"] >= b.evaluations * share:
            return True
        if t >= b.seconds * share and (share < 1 or self.stats["held"] >= b.min_instances):
            return True
        return t >= b.limit / 4

    # -- one instance ----------------------------------------------------------------------
    def outcome(self, inst: Instance) -> Outcome:
        budget = self.budget
        out = self._conclude(inst, budget)
        for _ in range(budget.retries):
            if out.holds is not None or self.elapsed() > budget.limit / 8:
                break
            budget = budget.extended()
            out = self._conclude(inst, budget)
        return out

    def _conclude(self, inst: Instance, budget: Budget) -> Outcome:
        out = guarded("conclusion", self.claim.conclusion, inst, budget, instance=inst)
        try:
            return validate_outcome(out)
        except OutcomeError as e:
            raise CodeError("conclusion", "OutcomeError", str(e), "", inst.to_json()) from None

    def meets(self, inst: Instance) -> bool:
        return guarded("hypotheses", self.claim.meets, inst, instance=inst)

    def evaluate(self, inst: Instance) -> Outcome:
        """Evaluate one instance that meets the hypotheses, counting what it shows."""
        out = self.outcome(inst)
        self.stats["evaluated"] += 1
        if out.margin is not None:
            self.best_margin = out.margin if self.best_margin is None else min(self.best_margin, out.margin)
        if out.holds is None:
            self.stats["inconclusive"] += 1
            self.reasons[out.reason or "undecided (no reason given)"] += 1
        elif out.holds:
            self.stats["held"] += 1
            self.stats["certified"] += out.certified
            for k in self.claim.measures:
                v = out.detail.get(k)
                if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v:
                    self.measured[k].append(float(v))
        return out

    def new(self, inst: Instance) -> bool:
        key = json.dumps(inst.to_json(), sort_keys=True, default=str)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    # -- phases ------------------------------------------------------------------------------
    def exhaustive(self, space: Space) -> None:
        done: list[str] = []
        cover = self.coverage["exhaustive"] = {"scopes": done, "instances": 0, "met_hypotheses": 0,
                                               "complete": False, "exhausted": False}
        try:
            for scope in space.scopes():
                narrowed_any = False
                values = space.enumerate(scope)
                while True:
                    try:
                        value, narrowed, seeded = next(values)
                    except StopIteration:
                        break
                    except (Exception, SystemExit) as e:  # noqa: BLE001 - the claim's own generator
                        raise _generator_error(e) from None
                    narrowed_any |= narrowed or seeded
                    if self.spent(EXHAUSTIVE_SHARE):
                        cover["stopped"] = f"budget share spent in scope: {scope.describe()}"
                        return
                    if not isinstance(value, Instance):
                        raise CodeError("instances", "TypeError", f"the space gave {type(value).__name__}, not an Instance")
                    if not self.new(value):
                        continue
                    cover["instances"] += 1
                    if not self.meets(value):
                        continue
                    cover["met_hypotheses"] += 1
                    if self.evaluate(value).holds is False:
                        raise _Found(value)
                done.append(scope.describe())
                if not narrowed_any:
                    cover["complete"] = cover["exhausted"] = True
                    return
            cover["complete"] = True
        except NotEnumerable as e:
            cover["note"] = f"not enumerable: {e}"

    def random_and_targeted(self, strategy) -> None:
        cover = self.coverage["random_targeted"] = {"instances": 0, "targeted": False}

        def condition(inst: Instance) -> bool:
            if self.spent():
                raise _Spent()
            if not isinstance(inst, Instance):
                raise CodeError("instances", "TypeError", f"the instance strategy gave {type(inst).__name__}, not an Instance")
            fresh = self.new(inst)
            if not self.meets(inst):
                hypothesis.reject()
            cover["instances"] += fresh
            out = self.evaluate(inst)
            if out.margin is not None:
                cover["targeted"] = True
                hypothesis.target(-out.margin, label="margin")
            return out.holds is False

        remaining = max(1, self.budget.evaluations - self.stats["evaluated"])
        conf = settings(max_examples=remaining, database=None, deadline=None, derandomize=False,
                        suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                        phases=[Phase.generate, Phase.target, Phase.shrink])
        try:
            found = hypothesis.find(strategy, condition, settings=conf, random=random.Random(self.seed))
        except _Spent:
            return
        except (hypothesis.errors.NoSuchExample, hypothesis.errors.Unsatisfiable):
            return
        except (Exception, SystemExit) as e:  # noqa: BLE001 - raised while generating: the claim's strategy
            raise _generator_error(e) from None
        raise _Found(found)


def _generator_error(e: BaseException) -> CodeError:
    from attnsvm.claims.isolation import describe

    kind, msg, frame = describe(e)
    return CodeError("instances", kind, msg, frame)


def check(claim: Claim, budget: str | Budget = "quick", seed: int = 0) -> Report:
    """Search `claim` within `budget` (phases above) and return its report."""
    budget = get_budget(budget)
    s = Search(claim, budget, seed)
    evidence: dict[str, Any] = {"budget": budget.name, "seed": seed, "statement": claim.statement,
                                "proxy": claim.proxy, "horizon": claim.horizon or f"x{budget.horizon:g}",
                                "tolerance": claim.tolerance}
    if claim.dropped:
        evidence["dropped"] = sorted(claim.dropped)
    found: Instance | None = None
    error: CodeError | None = None
    overtime = False
    try:
        with time_limit(budget.limit):
            try:
                space = guarded("instances", claim.instances, claim.dropped)
                if isinstance(space, Space):
                    s.exhaustive(space)
                if not s.coverage.get("exhaustive", {}).get("exhausted"):
                    s.random_and_targeted(guarded("instances", as_strategy, space))
            except _Found as f:
                found = f.instance
    except OverTime:
        overtime = True
    except CodeError as e:
        error = e
    evidence.update(search=s.coverage, evaluated=s.stats["evaluated"], instances=s.stats["held"],
                    inconclusive=s.stats["inconclusive"], certified=s.stats["certified"],
                    search_seconds=round(s.elapsed(), 3))
    if s.best_margin is not None:
        evidence["least_margin"] = s.best_margin
    if s.reasons:
        evidence["inconclusive_reasons"] = dict(s.reasons.most_common(3))
    if any(s.measured.values()):
        evidence["measures"] = {k: {"min": min(v), "max": max(v), "instances": len(v)} for k, v in s.measured.items() if v}
    seconds = s.elapsed()
    if error is not None:
        evidence["note"] = error.line()
        return Report(claim.name, claim.part, Verdict.INCONCLUSIVE, claim.expected, evidence, None, seconds, error.to_json())
    if found is not None:
        return _refuted(claim, found, budget, seed, evidence, seconds)
    verdict, note = _verdict(s, overtime)
    if note:
        evidence["note"] = note
    return Report(claim.name, claim.part, verdict, claim.expected, evidence, None, seconds)


def _refuted(claim: Claim, inst: Instance, budget: Budget, seed: int, evidence: dict, seconds: float) -> Report:
    try:
        witness = make_witness(claim, inst, budget, seed)
        replay = replay_witness(json.loads(json.dumps(witness)), claim)
    except CodeError as e:
        evidence["note"] = "counterexample found; " + e.line()
        return Report(claim.name, claim.part, Verdict.INCONCLUSIVE, claim.expected, evidence, None, seconds, e.to_json())
    if replay.verdict is not Verdict.REFUTED:
        evidence["note"] = f"counterexample found but it did not re-verify from its JSON form ({replay.verdict})"
        return Report(claim.name, claim.part, Verdict.INCONCLUSIVE, claim.expected, evidence, witness, seconds)
    evidence["counterexample"] = witness["outcome"]
    return Report(claim.name, claim.part, Verdict.REFUTED, claim.expected, evidence, witness, seconds)


def _verdict(s: Search, overtime: bool) -> tuple[Verdict, str]:
    held, undecided, evaluated = s.stats["held"], s.stats["inconclusive"], s.stats["evaluated"]
    b = s.budget
    if overtime:
        return Verdict.INCONCLUSIVE, (f"over the wall-clock limit of {b.limit:g} s ({evaluated} instances evaluated, "
                                      f"{held} held)")
    if held < b.min_instances and not s.coverage.get("exhaustive", {}).get("exhausted"):
        return Verdict.INCONCLUSIVE, (f"only {held} conclusive instances met the hypotheses (need {b.min_instances})"
                                      + (f"; {undecided} undecided" if undecided else ""))
    if held == 0:
        return Verdict.INCONCLUSIVE, "no instance met the hypotheses"
    if undecided > INCONCLUSIVE_SHARE * evaluated:
        return Verdict.INCONCLUSIVE, (f"{undecided} of {evaluated} evaluated instances undecided (more than a quarter): "
                                      + "; ".join(f"{r} ({k})" for r, k in s.reasons.most_common(2)))
    if s.coverage.get("exhaustive", {}).get("exhausted") and s.stats["certified"] == held and undecided == 0:
        return Verdict.CERTIFIED, ""
    return Verdict.SUPPORTED, ""
