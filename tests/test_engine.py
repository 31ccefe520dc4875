"""The search engine's promises: a named budget's verdict is a function of (claim, budget, seed)
alone (a slow clock changes nothing), a batched conclusion gives the same verdicts, counts and
witnesses as the same conclusion one instance at a time, undecided instances are extended and
failures confirmed at longer horizons, and a runaway is an error row."""

import time

import pytest

import attnsvm.claims as C
from attnsvm.claims import search
from attnsvm.claims.strategies import instances, integer_datasets, integers


def _space(dropped=()):
    return instances(integer_datasets(n=(1, 2), T=(2, 3), d=(1, 2), lo=-2, hi=2), k=integers(0, 9))


def _rule(rare: int, undecided: int, slow: int):
    """A deterministic conclusion on one instance: fails when a hash of the data hits `rare`,
    is undecided below horizon 2 for another residue, and fails below horizon 4 (holds after)
    for a third: what extension and confirmation must sort out."""
    def one(inst, budget):
        h = (int(abs(inst.dataset.X.astype(float)).sum()) * 7 + inst.params["k"] * 3 + inst.dataset.T) % 97
        if h == rare:
            return C.Outcome(False, detail={"h": h})
        if h == undecided and budget.horizon < 2:
            return C.Outcome(None, reason="still moving", detail={"h": h})
        if h == slow and budget.horizon < 4:
            return C.Outcome(False, detail={"h": h})
        return C.Outcome(True, detail={"h": h}, margin=float(abs(h - rare)))
    return one


def _claim(conclusion, **kw):
    return C.Claim("engine", "a hash never hits", (), conclusion, _space, measures=("h",), **kw)


def _summary(rep):
    e = rep.evidence
    return (str(rep.verdict), e["evaluated"], e["instances"], e["inconclusive"], e.get("least_margin"),
            rep.witness and rep.witness["instance"], rep.witness and rep.witness["budget"])


CASES = [tuple(int(x) for x in row) for row in __import__("numpy").random.default_rng(7).integers(0, 97, (8, 3))]


@pytest.mark.parametrize("rare,undecided,slow", CASES)
def test_a_batched_conclusion_reaches_what_one_at_a_time_reaches(rare, undecided, slow):
    """Up to the targeted phase (whose batched form mutates whole generations, so the two differ
    from there on), the same instances in the same order: a failure found before it by either
    is found by both, with the same counts and witness."""
    one = _rule(rare, undecided, slow)
    budget = C.Budget("t", evaluations=600, seconds=None, min_instances=3, horizon=1.0, limit=600.0)
    plain = C.check(_claim(one, confirm=(4.0,)), budget, rare)
    together = C.check(_claim(C.batched(lambda insts, b: [one(i, b) for i in insts]), confirm=(4.0,)), budget, rare)
    if "targeted" not in plain.evidence["search"] or "targeted" not in together.evidence["search"]:
        assert _summary(plain) == _summary(together)


def test_batched_and_sequential_are_identical_through_the_batched_phases():
    """With no Hypothesis phase in play (the space is exhausted or sampled to the end), every
    count and the witness are the same."""
    one = _rule(rare=50, undecided=11, slow=23)
    budget = C.Budget("t", evaluations=3000, seconds=None, min_instances=3, horizon=1.0, limit=600.0)
    plain = C.check(_claim(one, confirm=(4.0,)), budget, 1)
    together = C.check(_claim(C.batched(lambda insts, b: [one(i, b) for i in insts]), confirm=(4.0,)), budget, 1)
    assert plain.verdict is C.Verdict.REFUTED and _summary(plain) == _summary(together)
    assert plain.witness["outcome"]["h"] == 50          # the slow failure (h = 23) was confirmed away at 4x


def test_undecided_instances_are_extended_and_failures_confirmed():
    seen = []

    def one(inst, budget):
        seen.append(budget.horizon)
        h = inst.params["k"]
        if h == 3:
            return C.Outcome(None, reason="moving") if budget.horizon < 2 else C.Outcome(True)
        if h == 5:
            return C.Outcome(False) if budget.horizon < 16 else C.Outcome(True)
        return C.Outcome(True)

    budget = C.Budget("t", evaluations=200, seconds=None, min_instances=3, horizon=1.0, limit=600.0)
    rep = C.check(_claim(C.batched(lambda insts, b: [one(i, b) for i in insts]), confirm=(4.0, 16.0)), budget)
    assert rep.verdict is C.Verdict.SUPPORTED and rep.evidence["inconclusive"] == 0
    assert {2.0, 4.0, 16.0} <= set(seen)
    strict = C.check(_claim(C.batched(lambda insts, b: [one(i, b) for i in insts]), confirm=(4.0,)), budget)
    assert strict.verdict is C.Verdict.REFUTED and strict.witness["budget"]["horizon"] == 4.0
    assert strict.witness["outcome"]["holds"] is False


def test_a_slow_clock_changes_no_verdict(monkeypatch):
    """The named budgets never read the clock to decide: a clock running 1000x fast (as on a
    loaded machine) gives the same verdict, counts and witness."""
    one = _rule(rare=61, undecided=7, slow=200)
    claim = _claim(C.batched(lambda insts, b: [one(i, b) for i in insts]), evaluations=900)
    idle = C.check(claim, "quick", 2)
    real = time.monotonic
    start = real()
    monkeypatch.setattr(search.time, "monotonic", lambda: start + (real() - start) * 1000)
    loaded = C.check(claim, "quick", 2)
    assert _summary(idle) == _summary(loaded) and loaded.error is None


def test_a_batched_conclusion_that_raises_names_the_instance_that_raises():
    def boom(insts, budget):
        if any(i.params["k"] == 7 for i in insts):
            raise ValueError("k is 7")
        return [C.Outcome(True) for _ in insts]

    rep = C.check(_claim(C.batched(boom)), C.Budget("t", evaluations=400, seconds=None, min_instances=3, horizon=1.0,
                                                     limit=600.0))
    assert rep.error["type"] == "ValueError" and rep.error["instance"]["params"]["k"] == 7 and not rep.as_expected


def test_a_batched_conclusion_must_return_one_outcome_per_instance():
    rep = C.check(_claim(C.batched(lambda insts, b: [C.Outcome(True)])), C.Budget(
        "t", evaluations=100, seconds=None, min_instances=3, horizon=1.0, limit=600.0))
    assert rep.error["type"] == "OutcomeError" and "one Outcome per instance" in rep.error["message"]


def test_the_hypothesis_phase_does_not_depend_on_what_the_process_imported(monkeypatch):
    """Hypothesis draws constants from the "local" modules a process has imported (its provider's
    constant pool): tfsvm-mlp drew other instances after tfsvm-landscape had run in the same
    process. A search must draw the same whatever that pool holds (here: 5000 in-range numbers
    standing for other imports)."""
    from hypothesis import strategies as st
    from hypothesis.internal.conjecture import providers

    drawn = []

    def note(inst, budget):
        drawn.append(inst.params["k"])
        return C.Outcome(True)

    claim = C.Claim("hyp-phase", "k is a number", (), note,
                    lambda dropped: instances(integer_datasets(n=1, T=2, d=1), k=st.floats(-1e9, 1e9)))
    budget = C.Budget("t", evaluations=200, seconds=None, min_instances=3, horizon=1.0, limit=600.0)
    C.check(claim, budget, 5)
    first, drawn[:] = list(drawn), []
    other_imports = providers.Constants(integers=set(range(10**6, 10**6 + 5000)),
                                        floats={k + 0.5 for k in range(5000)})
    monkeypatch.setattr(providers, "_get_local_constants", lambda: other_imports)
    providers.CONSTANTS_CACHE.cache.clear()
    C.check(claim, budget, 5)
    assert drawn == first and len(first) == 200
