"""The search behind a claim's verdict (README, "Verdicts").

`check(claim, budget, seed)` looks for an instance that meets the hypotheses and refutes the
conclusion, in three phases that share the budget:

1. exhaustive: when the claim's instances are a `Space`, every instance of each scope of its
   ladder, smallest first, while the next scope can be completed within the phase's share of
   the budget (the report names the scopes completed and whether the whole space was covered);
2. sampled: uniformly random instances of the scopes not enumerated and of the whole space, in
   turn (a failure is shrunk by lowering its choices one at a time);
3. targeted: local search from the best instances so far toward each target: a small
   `Outcome.margin` when the conclusion reports one (how far from failing), else each
   numeric measurement the outcome reports, pushed both ways (a count of LMMs up, a
   correlation down: failures sit at the extremes of what a claim measures);
4. Hypothesis generation on the same space (or the claim's own strategy), steering toward the
   same targets (`hypothesis.target`), then shrinking a failure to a small witness;
then the verdict:
   - REFUTED: a counterexample that re-verifies after a JSON round trip (the witness);
   - CERTIFIED: no counterexample, the space was covered exhaustively and every instance
     was decided exactly (a sample of cases is not every case);
   - SUPPORTED: no counterexample among at least `min_instances` conclusive instances, at
     most a quarter of the evaluated ones inconclusive (an inconclusive instance is first
     retried with a longer horizon);
   - INCONCLUSIVE: otherwise, with the reason: too few instances met the hypotheses, too many
     were undecided, or claim code raised (`Report.error`: the exception and the instance as
     replayable JSON).

A conclusion wrapped in `claims.batched` is evaluated over batches: the exhaustive and sampled
phases feed it FIRST_BATCH instances, then twice as many each time up to BATCH; the targeted
phase whole generations of mutants. Undecided instances are re-evaluated at longer horizons
(`Claim.extend`) and failures confirmed at longer horizons (`Claim.confirm`) as batches.
Batches are cut where the one-at-a-time search would stop, so up to the targeted phase both
evaluate the same instances in the same order.

The wall clock never decides a verdict of a named budget: the evaluation count does. It only
guards against runaway code: a part that runs past the larger of the budget's `limit` and
RUNAWAY times its projected cost is an error row (`Runaway`), never a verdict. A budget built
by hand with `seconds` is time-bounded instead, and its report says so.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import sys
import time
from collections import Counter
from dataclasses import replace
from typing import Any

import hypothesis
import numpy as np
from hypothesis import HealthCheck, Phase, settings

from attnsvm.claims.budget import Budget, evaluations, get_budget
from attnsvm.claims.claim import Claim, Instance, Outcome, OutcomeError, validate_outcome
from attnsvm.claims.isolation import CodeError, Guard, OverTime, guard, guarded
from attnsvm.claims.spaces import NotEnumerable, Space, as_strategy
from attnsvm.claims.verdicts import Report, Verdict
from attnsvm.claims.witnesses import make_witness, replay_witness
from attnsvm.files import strict

EXHAUSTIVE_SHARE = 0.3          # of the budget's seconds and evaluations: the exhaustive phase
SAMPLED_SHARE = 0.5             # ... up to here: uniform sampling of the scopes not enumerated
TARGETED_SHARE = 0.85           # ... up to here: local search toward the targets (then Hypothesis)
INCONCLUSIVE_SHARE = 0.25       # SUPPORTED needs at most this share of evaluated instances undecided
PROBE_COUNT = 100               # instances of a scope after which its cost is projected (with 1.5x slack)
BATCH = 256                     # instances a batched conclusion evaluates together (at most)
FIRST_BATCH = 8                 # its first batch; each next one doubles up to BATCH (a claim that
                                # fails often is refuted before a whole batch is spent)
GENERATION = 64                 # mutants per generation of the targeted phase, for a batched conclusion
SEQUENTIAL_CAP = 16             # a batched claim's one-at-a-time Hypothesis phase evaluates at most this many
RUNAWAY = 10                    # runaway guard: past max(budget.limit, RUNAWAY x projected cost), an error row


class _Found(BaseException):
    """A counterexample (a BaseException so that it ends the search at once)."""

    def __init__(self, instance: Instance):
        self.instance = instance


class _Spent(BaseException):
    """The search's budget is spent."""


class Search:
    """State of one check: counts, reasons, measures, what each phase covered."""

    def __init__(self, claim: Claim, budget: Budget, seed: int, guard: Guard | None = None):
        self.claim, self.budget, self.seed = claim, budget, seed
        self.evaluations = evaluations(budget, claim.evaluations)     # the search's size
        self.batch = FIRST_BATCH if claim.is_batched else 1     # the next batch's size (doubles up to BATCH)
        self.guard = guard or Guard(None)
        self.start = time.monotonic()
        self.projected: float | None = None     # seconds the whole search is projected to take (runaway guard)
        self.stats: Counter = Counter()
        self.reasons: Counter = Counter()
        self.outside: Counter = Counter()       # reasons of instances whose outcome did not apply
        self.deciding: dict[int, tuple] = {}    # id(instance) -> (instance, budget) of each failure seen
        self.measured: dict[str, list[float]] = {k: [] for k in claim.measures}
        self.best_margin: float | None = None
        self.seen: set[str] = set()
        self.tried: set[tuple] = set()          # records of the exhaustive, sampled and targeted phases
        self.bests: dict[str, tuple[float, tuple]] = {}     # target label -> (value, record)
        self.coverage: dict[str, Any] = {}
        self.current: list[Instance] = []       # the instances under evaluation (named by a runaway row)

    # -- clock and budget ------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def spent(self, share: float = 1.0, pending: int = 0) -> bool:
        """The phase must stop: its share of the evaluations is used (counting `pending`
        instances queued for a batch), or, for a budget built with `seconds` only, its share of
        the time (the last phase only once `min_instances` held). A named budget splits by
        evaluations only: the search is the same on every machine for the same seed."""
        b = self.budget
        if self.stats["evaluated"] + pending >= self.evaluations * share:
            return True
        return b.seconds is not None and self.elapsed() >= b.seconds * share and \
            (share < 1 or self.stats["held"] >= b.min_instances)

    def _project(self) -> None:
        """After the first PROBE_COUNT evaluations (or the first batch), move the runaway guard
        out to RUNAWAY times the projected cost of the whole search, if that is later."""
        done = self.stats["evaluated"]
        if self.projected is None and done >= min(PROBE_COUNT, self.evaluations):
            self.projected = self.elapsed() / done * self.evaluations
            self.guard.extend(RUNAWAY * self.projected)

    # -- evaluating ------------------------------------------------------------------------
    def _conclude(self, insts: list[Instance], budget: Budget) -> list[Outcome]:
        """The conclusion on `insts` at `budget`: one batch for a batched conclusion, else one at a
        time. Claim code that raises in a batch is traced to the instance that raises alone."""
        self.current = insts
        self.guard.check()
        if not self.claim.is_batched:
            return [self._conclude_one(inst, budget) for inst in insts]
        try:
            return guarded("conclusion", self.claim.conclusion.over, insts, budget,
                           instance=insts[0] if len(insts) == 1 else None)
        except CodeError as e:
            if len(insts) == 1:
                raise
            for inst in insts:                  # the instance whose outcome raises, for a replayable row
                self._conclude([inst], budget)
            raise CodeError(e.where, e.type, e.message + " (only in a batch: no instance raises alone)", e.frame,
                            insts[0].to_json()) from None
        except OutcomeError as e:
            raise CodeError("conclusion", "OutcomeError", str(e), "", insts[0].to_json()) from None

    def _conclude_one(self, inst: Instance, budget: Budget) -> Outcome:
        out = guarded("conclusion", self.claim.conclusion, inst, budget, instance=inst)
        try:
            return validate_outcome(out)
        except OutcomeError as e:
            raise CodeError("conclusion", "OutcomeError", str(e), "", inst.to_json()) from None

    def outcomes(self, insts: list[Instance]) -> list[Outcome]:
        """The outcomes of `insts`: undecided ones re-evaluated at the claim's extended horizons,
        failures confirmed at its confirmation horizons, each step as one batch. A failure
        records the budget that decided it (its witness replays at that horizon)."""
        base = self.budget
        outs = self._conclude(insts, base)
        used = [base] * len(insts)
        for factor in self.claim.extensions(base):
            redo = [k for k, o in enumerate(outs) if o.holds is None and o.applies]
            if not redo:
                break
            longer = base.extended(factor)
            for k, o in zip(redo, self._conclude([insts[k] for k in redo], longer)):
                outs[k], used[k] = o, longer
        failed_at = list(used)                  # confirmation horizons are factors of the one that failed
        for factor in self.claim.confirm:
            redo = [k for k, o in enumerate(outs) if o.holds is False]
            if not redo:
                break
            longer = {k: failed_at[k].extended(factor) for k in redo}
            groups: dict[float, list[int]] = {}
            for k in redo:
                groups.setdefault(longer[k].horizon, []).append(k)
            for ks in groups.values():
                for k, o in zip(ks, self._conclude([insts[k] for k in ks], longer[ks[0]])):
                    outs[k] = replace(o, detail={**o.detail, "confirmed_at_horizon": longer[k].horizon,
                                                 "first_failure": {"horizon": used[k].horizon, **outs[k].detail}})
                    used[k] = longer[k]
        for inst, o, b in zip(insts, outs, used):
            if o.holds is False:
                self.deciding[id(inst)] = (inst, b)
        self.current = []
        return outs

    def outcome(self, inst: Instance) -> Outcome:
        return self.outcomes([inst])[0]

    def meets(self, inst: Instance) -> bool:
        return guarded("hypotheses", self.claim.meets, inst, instance=inst)

    def count(self, out: Outcome, record: tuple | None = None) -> None:
        """Count one evaluated instance: what it shows, and the best record for each target."""
        self.stats["evaluated"] += 1
        if not out.applies:
            self.stats["not_applicable"] += 1
            self.outside[out.reason or "outside the claim (no reason given)"] += 1
            return
        if record is not None and out.holds is not None:    # undecided outcomes do not steer (toward more of them)
            for label, value in targets(out, self.claim.measures).items():
                if label not in self.bests or value >= self.bests[label][0]:
                    self.bests[label] = (value, record)
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

    def evaluate(self, inst: Instance, record: tuple | None = None) -> Outcome:
        """Evaluate and count one instance that meets the hypotheses."""
        out = self.outcome(inst)
        self.count(out, record)
        self._project()
        return out

    def evaluate_batch(self, batch: list[tuple[Instance, tuple]]) -> tuple[Instance, tuple] | None:
        """Evaluate instances that meet the hypotheses together and count them in order, up to
        the first failure (returned with its record; the rest of the batch is not counted, as a
        one-at-a-time search would not have reached it)."""
        if not batch:
            return None
        if self.claim.is_batched:
            self.batch = min(BATCH, 2 * self.batch)
        outs = self.outcomes([inst for inst, _ in batch])
        for (inst, record), out in zip(batch, outs):
            self.count(out, record)
            if out.holds is False:
                return inst, record
        self._project()
        return None

    def new(self, inst: Instance) -> bool:
        key = json.dumps(inst.to_json(), sort_keys=True, default=str)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    # -- phases ------------------------------------------------------------------------------
    def exhaustive(self, space: Space) -> None:
        """Each scope of the ladder in turn, only while the next one can be completed within the
        phase's share of the budget (its size estimated by probes; for a budget with `seconds`,
        its cost per instance measured too): a partly enumerated scope would cover a corner, not
        a scope. Instances meeting the hypotheses are evaluated in batches."""
        done: list[str] = []
        cover = self.coverage["exhaustive"] = {"scopes": done, "instances": 0, "met_hypotheses": 0,
                                               "complete": False, "exhausted": False}
        seen, batch = self.tried, []

        def flush():
            found = self.evaluate_batch(batch)
            batch.clear()
            if found:
                raise _Found(found[0])

        try:
            for scope in space.scopes():
                estimate = _generating(space.size, scope)
                too_large = f"next scope too large for the budget (~{estimate:.3g} instances): {scope.describe()}"
                if estimate > max(0.0, self.evaluations * EXHAUSTIVE_SHARE - self.stats["evaluated"]) * 4:
                    cover["stopped"] = too_large
                    return
                cut_any, count, began = False, 0, time.monotonic()
                share_seconds = EXHAUSTIVE_SHARE * (self.budget.seconds or math.inf)
                values = space.enumerate(scope)
                while True:
                    try:
                        value, key, cut = _generating(next, values)
                    except StopIteration:
                        break
                    cut_any |= cut
                    count += 1
                    if count == PROBE_COUNT and estimate * (time.monotonic() - began) / count > \
                            1.5 * (share_seconds - self.elapsed() + (time.monotonic() - began)):
                        flush()
                        cover["stopped"] = too_large
                        return
                    if key in seen:
                        continue
                    seen.add(key)
                    if self.spent(EXHAUSTIVE_SHARE, len(batch)):
                        flush()
                        cover["stopped"] = f"budget share spent in scope: {scope.describe()}"
                        return
                    if not isinstance(value, Instance):
                        raise CodeError("instances", "TypeError",
                                        f"the space gave {type(value).__name__}, not an Instance")
                    cover["instances"] += 1
                    if not self.meets(value):
                        continue
                    cover["met_hypotheses"] += 1
                    batch.append((value, key))
                    if len(batch) >= self.batch:
                        flush()
                flush()
                done.append(scope.describe())
                if not cut_any:
                    cover["complete"] = cover["exhausted"] = True
                    return
            cover["complete"] = True
        except NotEnumerable as e:
            cover["note"] = f"not enumerable: {e}"

    def sampled(self, space: Space, until: float = SAMPLED_SHARE, label: str = "sampled") -> None:
        """Uniform samples from each scope the exhaustive phase did not finish, and from the
        whole space, in turn, evaluated in batches, until the `until` share of the evaluations
        is spent; a counterexample is shrunk before it is reported. Later calls continue the
        same seeded sequence (the targeted phase hands its rest back here when its
        neighbourhoods are used up)."""
        import numpy as np

        cover = self.coverage.setdefault(label, {"instances": 0})
        if not hasattr(self, "_draws"):
            done = len(self.coverage.get("exhaustive", {}).get("scopes", []))
            self._draws = (np.random.default_rng([self.seed, 0x5EED]), list(space.scopes())[done:] + [None], [0])
        rng, scopes, counter = self._draws
        start, batch = counter[0], []
        while not self.spent(until, len(batch)):
            drawn = _generating(space.sample, rng, scopes[counter[0] % len(scopes)])
            counter[0] += 1
            if drawn is None:
                continue
            value, record = drawn
            if record in self.tried:
                if counter[0] - start > 50 * (cover["instances"] + 1):
                    break                       # the space is (nearly) used up
                continue
            self.tried.add(record)
            if not isinstance(value, Instance):
                raise CodeError("instances", "TypeError", f"the space gave {type(value).__name__}, not an Instance")
            if not self.meets(value):
                continue
            cover["instances"] += 1
            batch.append((value, record))
            if len(batch) >= self.batch:
                self._settle(space, batch)
        self._settle(space, batch)

    def _settle(self, space: Space, batch: list) -> None:
        """Evaluate a sampled or targeted batch; shrink and report its first counterexample."""
        found = self.evaluate_batch(batch)
        batch.clear()
        if found:
            raise _Found(self.shrink(space, *found))

    def targeted(self, space: Space, end: float) -> None:
        """Local search: mutate the best record of each target in turn (one choice by +-1, a pick
        to another option, or a fresh random choice), keep a child that is at least as good. A
        batched conclusion evaluates a generation of GENERATION mutants at a time."""
        import numpy as np

        cover = self.coverage["targeted"] = {"instances": 0, "targets": sorted(self.bests)}
        rng = np.random.default_rng([self.seed, 0x7A6])
        size = GENERATION if self.claim.is_batched else 1
        k, batch = 0, []
        while self.bests and not self.spent(end, len(batch)):
            labels = sorted(self.bests)
            label = labels[k % len(labels)]
            k += 1
            child = _mutate(list(self.bests[label][1]), rng)
            got = _generating(space.replay, child)
            if got is None or got[1] in self.tried:
                if k > 50 * (cover["instances"] + 1):
                    break
                continue
            value, record = got
            self.tried.add(record)
            if not self.meets(value):
                continue
            cover["instances"] += 1
            batch.append((value, record))
            if len(batch) >= size:
                self._settle(space, batch)
        self._settle(space, batch)
        if not self.spent(end):                 # neighbourhoods used up: the rest of the share is sampled
            self.sampled(space, end, "sampled_after_targeted")

    def shrink(self, space: Space, value: Instance, record: tuple) -> Instance:
        """Lower the choices of a counterexample's record one at a time (toward 0, halving, by one;
        a pick toward the first option) while it stays a counterexample: at most as many
        evaluations as the search has left (a time-bounded budget: its seconds)."""
        stop_at = self.stats["evaluated"] + max(PROBE_COUNT, self.evaluations - self.stats["evaluated"])
        stop = self.elapsed() + self.budget.seconds if self.budget.seconds is not None else math.inf
        best, best_record, improved, tries = value, list(record), True, self.stats["evaluated"]

        def more() -> bool:
            return tries < stop_at and self.elapsed() < stop

        while improved and more():
            improved = False
            for k, r in enumerate(best_record):
                for c in _simpler(r):
                    trial = best_record[:k] + [c] + best_record[k + 1:]
                    got = _generating(space.replay, trial)
                    if got is None or _weight(got[1]) >= _weight(best_record) or got[1] in self.tried:
                        continue
                    self.tried.add(got[1])
                    if self.meets(got[0]):
                        tries += 1
                        if self.outcome(got[0]).holds is False:
                            best, best_record, improved = got[0], list(got[1]), True
                            break
                    if not more():
                        break
                if improved or not more():
                    break
        self.coverage["shrunk"] = best_record != list(record)
        return best

    def random_and_targeted(self, strategy) -> None:
        """Hypothesis generation with `target()`, then shrinking a failure, one instance at a time
        (for a batched conclusion at most SEQUENTIAL_CAP evaluations: the batched phases did the
        bulk of the search)."""
        cover = self.coverage["random_targeted"] = {"instances": 0, "targeted": False}
        failures: list[Instance] = []       # the latest failure: kept if the budget ends mid-shrink
        remaining = max(1, self.evaluations - self.stats["evaluated"])
        if self.claim.is_batched:
            remaining = min(remaining, SEQUENTIAL_CAP)
        stop_at = self.stats["evaluated"] + remaining

        def condition(inst: Instance) -> bool:
            if self.stats["evaluated"] >= stop_at or self.spent():
                raise _Spent()
            if not isinstance(inst, Instance):
                raise CodeError("instances", "TypeError",
                                f"the instance strategy gave {type(inst).__name__}, not an Instance")
            fresh = self.new(inst)
            if not self.meets(inst):
                hypothesis.reject()
            cover["instances"] += fresh
            out = self.evaluate(inst)
            for label, value in targets(out, self.claim.measures).items():
                cover["targeted"] = True
                hypothesis.target(value, label=label)
            if out.holds is False:
                failures[:] = [inst]
            return out.holds is False

        conf = settings(max_examples=remaining, database=None, deadline=None, derandomize=False,
                        suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                        phases=[Phase.generate, Phase.target, Phase.shrink])
        try:
            with _no_local_constants():
                found = hypothesis.find(strategy, condition, settings=conf, random=random.Random(self.seed))
        except _Spent:
            if failures:                    # found, then the budget ran out while shrinking it
                cover["shrink_cut_short"] = True
                raise _Found(failures[0]) from None
            return
        except (hypothesis.errors.NoSuchExample, hypothesis.errors.Unsatisfiable):
            return
        except (Exception, SystemExit) as e:  # raised while generating: the claim's strategy
            raise _generator_error(e) from None
        raise _Found(found)


@contextlib.contextmanager
def _no_local_constants():
    """Hypothesis biases generation toward constants it collects from the "local" modules already
    imported (its provider's constant pool), so what the Hypothesis phase draws depended on what
    else the process had imported (tfsvm-mlp drew other instances after tfsvm-landscape ran in the
    same process). The pool is empty during the search, and the cache built from it cleared on
    both sides, so the phase depends on (claim, budget, seed) alone. Private API of Hypothesis,
    pinned by tests/test_engine.py."""
    from hypothesis.internal.conjecture import providers

    saved = providers._get_local_constants
    providers._get_local_constants = providers.Constants
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = saved
        providers.CONSTANTS_CACHE.cache.clear()


def targets(out: Outcome, measures: tuple[str, ...] = ()) -> dict[str, float]:
    """What the search pushes up: -margin when the conclusion reports a margin, else each finite
    numeric measurement of `Outcome.detail` (only the claim's `measures` when it names them),
    both ways."""
    if out.margin is not None:
        return {"-margin": -out.margin} if math.isfinite(out.margin) else {}
    found = {}
    for key, v in out.detail.items():
        if measures and key not in measures:
            continue
        if (isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
                and math.isfinite(v)):
            found[f"+{key}"], found[f"-{key}"] = float(v), -float(v)
    return found


def _mutate(record: list, rng) -> list:
    """One random change of a record: an integer by a step of 1, 2 or a random fraction
    10^-k of its magnitude (so large ranges are crossed), a pick to a neighbouring option."""
    if not record:
        return record
    k = int(rng.integers(len(record)))
    r = record[k]
    if isinstance(r, tuple):
        record[k] = (r[0], max(0, r[1] + int(rng.choice([-1, 1]))))
    else:
        scale = abs(r) * 10.0 ** -int(rng.integers(0, 10)) * rng.uniform(0.1, 1)
        record[k] = r + int(rng.choice([-1, 1])) * max(int(rng.integers(1, 3)), int(scale))
    return record


def _simpler(r) -> list:
    """Simpler replacements of one record entry: toward 0 for integers, earlier options for picks."""
    if isinstance(r, tuple):
        return [(r[0], i) for i in sorted({0, r[1] - 1}) if 0 <= i < r[1]]
    return [c for c in dict.fromkeys([0, int(r / 2), r - (r > 0) + (r < 0)]) if abs(c) < abs(r)]


def _weight(record) -> tuple:
    """Shrink order: fewer choices, then smaller magnitudes."""
    return (len(record), sum(abs(r[1]) if isinstance(r, tuple) else abs(r) for r in record))


def _generating(fn, *args):
    """fn(*args) for the claim's own generator: its exceptions are the claim's ('instances')."""
    try:
        return fn(*args)
    except (NotEnumerable, StopIteration, CodeError, OverTime, KeyboardInterrupt):
        raise
    except (Exception, SystemExit) as e:  # the claim's own generator
        raise _generator_error(e) from None


def _generator_error(e: BaseException) -> CodeError:
    from attnsvm.claims.isolation import describe

    kind, msg, frame = describe(e)
    return CodeError("instances", kind, msg, frame)


@contextlib.contextmanager
def single_threaded():
    """Claims evaluate small problems: torch runs them on one intra-op thread, restored after
    (threads only add overhead there, and on loaded cores OpenMP's spinning threads made lemma1's
    quick search 9x slower: 21 s with 2 threads, 2.4 s with 1, at load 3). Before torch is
    imported this sets OMP_NUM_THREADS=1 for its first import instead."""
    torch = sys.modules.get("torch")
    if torch is None:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def check(claim: Claim, budget: str | Budget = "quick", seed: int = 0) -> Report:
    """Search `claim` within `budget` (phases above) and return its report."""
    with single_threaded():
        return _check(claim, budget, seed)


def _check(claim: Claim, budget: str | Budget, seed: int) -> Report:
    budget = get_budget(budget)
    evidence: dict[str, Any] = {"budget": budget.name, "seed": seed, "statement": claim.statement,
                                "proxy": claim.proxy, "horizon": claim.horizon or f"x{budget.horizon:g}",
                                "tolerance": claim.tolerance}
    if claim.tolerances:
        evidence["tolerances"] = dict(claim.tolerances)
    if claim.dropped:
        evidence["dropped"] = sorted(claim.dropped)
    if claim.confirm:
        evidence["confirm"] = f"a failure must persist at {', '.join(f'{f:g}' for f in claim.confirm)} x its horizon"
    if budget.seconds is not None:
        evidence["time_bounded"] = (f"a budget built with seconds={budget.seconds:g}: the search stops when they are "
                                    "spent, so how far it got depends on the machine")
    found: Instance | None = None
    error: CodeError | None = None
    with guard(budget.limit) as g:
        s = Search(claim, budget, seed, g)
        try:
            try:
                space = guarded("instances", claim.instances, claim.dropped)
                if isinstance(space, Space):
                    s.exhaustive(space)
                    if not s.coverage["exhaustive"]["exhausted"] and "note" not in s.coverage["exhaustive"]:
                        s.sampled(space)
                        s.targeted(space, _targeted_end(s))
                if not s.coverage.get("exhaustive", {}).get("exhausted"):
                    s.random_and_targeted(guarded("instances", as_strategy, space))
            except _Found as f:
                found = f.instance
        except OverTime:
            error = _runaway(s)
        except CodeError as e:
            error = e
    evidence.update(search=s.coverage, evaluations=s.evaluations, evaluated=s.stats["evaluated"],
                    instances=s.stats["held"],
                    inconclusive=s.stats["inconclusive"], certified=s.stats["certified"],
                    search_seconds=round(s.elapsed(), 3))
    if claim.is_batched:
        evidence["batched"] = BATCH
    if s.best_margin is not None:
        evidence["least_margin"] = s.best_margin
    if s.reasons:
        evidence["inconclusive_reasons"] = dict(s.reasons.most_common(3))
    if s.outside:
        evidence["not_applicable"] = s.stats["not_applicable"]
        evidence["not_applicable_reasons"] = dict(s.outside.most_common(3))
    if any(s.measured.values()):
        evidence["measures"] = {k: {"min": min(v), "median": float(np.median(v)), "max": max(v), "instances": len(v)}
                                for k, v in s.measured.items() if v}
    seconds = s.elapsed()
    if error is not None:
        evidence["note"] = error.line()
        return Report(claim.name, claim.part, Verdict.INCONCLUSIVE, claim.expected, evidence, None, seconds,
                      error.to_json())
    if found is not None:
        held = s.deciding.get(id(found))
        return _refuted(claim, found, held[1] if held and held[0] is found else budget, seed, evidence, seconds)
    verdict, note = _verdict(s)
    if note:
        evidence["note"] = note
    if verdict is Verdict.SUPPORTED:
        evidence["power"] = (f"no counterexample in {s.stats['held']} conclusive instances: a failure rate above "
                             f"{3 / s.stats['held']:.2g} among instances drawn as this search draws them would have "
                             f"shown with 95% probability (rule of three); rarer failures need a larger budget")
    return Report(claim.name, claim.part, verdict, claim.expected, evidence, None, seconds)


def _targeted_end(s: Search) -> float:
    """Where the targeted phase ends, as a share of the evaluations: TARGETED_SHARE, or for a
    batched conclusion all but the one-at-a-time Hypothesis phase's SEQUENTIAL_CAP."""
    if not s.claim.is_batched:
        return TARGETED_SHARE
    return max(SAMPLED_SHARE, 1 - min(1 - TARGETED_SHARE, SEQUENTIAL_CAP / s.evaluations))


def _runaway(s: Search) -> CodeError:
    """The error row of a part stopped by its runaway guard (never a verdict: on a faster or
    quieter machine the same search would have finished with the same evaluations)."""
    projected = f", {RUNAWAY}x its projected {s.projected:.3g} s" if s.projected else ""
    inst = s.current[0].to_json() if len(s.current) == 1 else None
    return CodeError("clock", "Runaway", f"ran past its runaway guard ({s.guard.seconds:.3g} s: the budget's limit "
                     f"{s.budget.limit:g} s{projected}) after {s.stats['evaluated']} of {s.evaluations} evaluations"
                     + (" while evaluating the instance shown" if inst else ""), "", inst)


def _refuted(claim: Claim, inst: Instance, budget: Budget, seed: int, evidence: dict, seconds: float) -> Report:
    try:
        witness = strict(make_witness(claim, inst, budget, seed))      # a claim's detail may hold numpy values
        replay = replay_witness(json.loads(json.dumps(witness)), claim)
    except CodeError as e:
        evidence["note"] = "counterexample found; " + e.line()
        return Report(claim.name, claim.part, Verdict.INCONCLUSIVE, claim.expected, evidence, None, seconds,
                      e.to_json())
    if replay.verdict is not Verdict.REFUTED:
        evidence["note"] = f"counterexample found but it did not re-verify from its JSON form ({replay.verdict})"
        return Report(claim.name, claim.part, Verdict.INCONCLUSIVE, claim.expected, evidence, witness, seconds)
    evidence["counterexample"] = witness["outcome"]
    return Report(claim.name, claim.part, Verdict.REFUTED, claim.expected, evidence, witness, seconds)


def _verdict(s: Search) -> tuple[Verdict, str]:
    held, undecided = s.stats["held"], s.stats["inconclusive"]
    evaluated = s.stats["evaluated"] - s.stats["not_applicable"]
    b = s.budget
    if held < b.min_instances and not s.coverage.get("exhaustive", {}).get("exhausted"):
        return Verdict.INCONCLUSIVE, (f"only {held} conclusive instances met the hypotheses (need {b.min_instances})"
                                      + (f"; {undecided} undecided" if undecided else ""))
    if held == 0:
        return Verdict.INCONCLUSIVE, "no instance met the hypotheses"
    if undecided > INCONCLUSIVE_SHARE * evaluated:
        return Verdict.INCONCLUSIVE, (f"{undecided} of {evaluated} evaluated instances undecided "
                                      "(more than a quarter): "
                                      + "; ".join(f"{r} ({k})" for r, k in s.reasons.most_common(2)))
    if s.coverage.get("exhaustive", {}).get("exhausted") and s.stats["certified"] == held and undecided == 0:
        return Verdict.CERTIFIED, ""
    return Verdict.SUPPORTED, ""
