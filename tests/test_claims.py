"""The claims engine: verdicts on known true and known false statements, the three search
phases (exhaustive scopes, targeted, random), fail-closed semantics (CERTIFIED only over every
case, SUPPORTED with at most a quarter undecided, errors in claim code as rows), witness
replay from JSON, user claim files."""

import json
import time

import pytest
from hypothesis import strategies as st

from attnsvm import claims as C
from attnsvm.claims.spaces import space
from attnsvm.claims.strategies import instances, integer_datasets, seeds
from attnsvm.claims.testing import assert_verdict
from attnsvm.claims.userfiles import load_claims_file

ints = lambda: instances(integer_datasets(n=(1, 2), T=(2, 3), d=(1, 2)))
always = C.Hypothesis("always", "no restriction", lambda inst: True)
SHORT = C.Budget("short", evaluations=400, seconds=None, min_instances=12, horizon=1.0, limit=60.0)   # reproducible


def claim(conclusion, hyps=(always,), inst=ints):
    return C.Claim("t", "test", tuple(hyps), conclusion, lambda dropped: inst())


def test_true_claim_is_supported_not_certified_over_an_infinite_space():
    rep = C.check(claim(lambda i, b: C.Outcome(True, certified=True)), SHORT, 3)
    assert rep.verdict is C.Verdict.SUPPORTED          # every instance exact, but a sample is not every case
    assert rep.evidence["certified"] == rep.evidence["instances"] >= 12 and rep.evidence["seed"] == 3
    assert rep.evidence["search"]["exhaustive"]["scopes"] and not rep.evidence["search"]["exhaustive"]["exhausted"]


def test_a_finite_space_decided_exactly_everywhere_is_certified():
    finite = lambda: instances(integer_datasets(n=1, T=2, d=1, lo=-1, hi=1))
    rep = C.check(claim(lambda i, b: C.Outcome(True, certified=True), inst=finite), SHORT)
    assert rep.verdict is C.Verdict.CERTIFIED
    assert rep.evidence["search"]["exhaustive"]["exhausted"] and rep.evidence["instances"] == 3 ** 3 * 2
    numeric = C.check(claim(lambda i, b: C.Outcome(True), inst=finite), SHORT)
    assert numeric.verdict is C.Verdict.SUPPORTED       # covered everything, but not exactly


def test_false_claim_is_refuted_with_a_small_witness_that_replays():
    c = claim(lambda i, b: C.Outcome(i.dataset.d < 2, detail={"d": i.dataset.d}))
    rep = C.check(c, SHORT)
    assert rep.verdict is C.Verdict.REFUTED
    ds = rep.witness["instance"]["dataset"]
    assert len(ds["X"]) == 1 and len(ds["X"][0]) == 2 and ds["X"][0][0] == [0, 0]     # the smallest scope first
    stored = json.loads(json.dumps(rep.witness))
    assert C.replay_witness(stored, c).verdict is C.Verdict.REFUTED
    assert C.replay_witness(stored, claim(lambda i, b: C.Outcome(True))).verdict is C.Verdict.SUPPORTED


def test_a_counterexample_only_the_exhaustive_scope_finds():
    """One pattern among 2001^6 random draws: random search misses it, the scope of radius 1 has it."""
    wide = lambda: instances(integer_datasets(n=1, T=2, d=2, lo=-1000, hi=1000, labels="positive"))
    rare = lambda i, b: C.Outcome(not (i.dataset.X.tolist() == [[[1, -1], [-1, 1]]] and i.dataset.v.tolist() == [1, 1]))
    budget = C.Budget("t", evaluations=4000, seconds=2.0, min_instances=12, horizon=1.0, limit=60.0)
    rep = C.check(claim(rare, inst=wide), budget)
    assert rep.verdict is C.Verdict.REFUTED and rep.evidence["search"]["exhaustive"]["met_hypotheses"] > 0
    opaque = lambda: st.builds(lambda x: x, wide())          # the same space as a plain strategy: random only
    assert C.check(claim(rare, inst=opaque), budget).verdict is C.Verdict.SUPPORTED


def test_a_counterexample_only_targeting_finds():
    """A needle in [0, 10^9] (a seed: exhaustive scopes fix it) that the margin leads to."""
    target = 987_654_321
    needle = lambda: instances(integer_datasets(n=1, T=2, d=1, lo=0, hi=0), x=seeds(0, 10**9))

    def close(i, b, margin=True):
        gap = abs(i.params["x"] - target) / 10**9
        return C.Outcome(gap > 1e-6, margin=gap if margin else None)

    rep = C.check(claim(close, inst=needle), C.Budget("t", 3000, 6.0, 12, 1.0, 60.0), 0)
    assert rep.verdict is C.Verdict.REFUTED and rep.evidence["search"]["targeted"]["targets"] == ["-margin"]
    blind = C.check(claim(lambda i, b: close(i, b, margin=False), inst=needle),
                    C.Budget("t", 3000, 6.0, 12, 1.0, 60.0), 0)
    assert blind.verdict is C.Verdict.SUPPORTED


def test_untrusted_numerics_are_inconclusive_not_a_pass():
    rep = C.check(claim(lambda i, b: C.Outcome(None, reason="underflow")), SHORT)
    assert rep.verdict is C.Verdict.INCONCLUSIVE
    assert rep.evidence["inconclusive_reasons"] == {"underflow": rep.evidence["inconclusive"]}


def test_more_than_a_quarter_undecided_is_inconclusive_however_many_held():
    half = lambda i, b: C.Outcome(None if i.dataset.Y[0] == 1 else True, reason="undecided limit")
    rep = C.check(claim(half), SHORT)
    assert rep.verdict is C.Verdict.INCONCLUSIVE and rep.evidence["instances"] >= 12
    assert "more than a quarter" in rep.evidence["note"]


def test_an_undecided_instance_is_retried_with_a_longer_horizon():
    rep = C.check(claim(lambda i, b: C.Outcome(True if b.horizon >= 2 else None, reason="short")), SHORT)
    assert rep.verdict is C.Verdict.SUPPORTED and rep.evidence["inconclusive"] == 0


def test_outcomes_that_do_not_apply_are_counted_apart():
    """`Outcome(None, applies=False)` (Hypothesis' assume, seen only by the conclusion): counted
    apart, never as holding nor as undecided; a claim none of whose instances apply is
    INCONCLUSIVE; an outcome cannot both not apply and hold."""
    half = lambda i, b: C.Outcome(None, applies=False, reason="singleton") if i.dataset.Y[0] == 1 else C.Outcome(True)
    rep = C.check(claim(half), SHORT)
    assert rep.verdict is C.Verdict.SUPPORTED and rep.evidence["not_applicable"] > 0
    assert rep.evidence["inconclusive"] == 0
    assert rep.evidence["not_applicable_reasons"] == {"singleton": rep.evidence["not_applicable"]}
    none = C.check(claim(lambda i, b: C.Outcome(None, applies=False, reason="x")), SHORT)
    assert none.verdict is C.Verdict.INCONCLUSIVE and none.evidence["instances"] == 0
    with pytest.raises(TypeError):               # OutcomeError is a TypeError
        C.Outcome(True, applies=False)


def test_a_failure_seen_only_at_the_longer_horizon_is_stored_with_that_horizon():
    """A counterexample decided on the retry at twice the horizon records that budget, so its
    witness replays REFUTED (with the base budget it would be undecided)."""
    c = claim(lambda i, b: C.Outcome(None if b.horizon < 2 else i.dataset.d < 2, reason="short"))
    rep = C.check(c, SHORT)
    assert rep.verdict is C.Verdict.REFUTED and rep.witness["budget"]["horizon"] == 2.0
    assert C.replay_witness(json.loads(json.dumps(rep.witness)), c).verdict is C.Verdict.REFUTED


def test_unsatisfiable_hypotheses_are_inconclusive():
    never = C.Hypothesis("never", "impossible", lambda inst: False)
    assert C.check(claim(lambda i, b: C.Outcome(True), (never,)), SHORT).verdict is C.Verdict.INCONCLUSIVE


def test_dropping_a_hypothesis_searches_instances_violating_it():
    small = C.Hypothesis("small_d", "d == 1", lambda inst: inst.dataset.d == 1)
    c = claim(lambda i, b: C.Outcome(i.dataset.d == 1), (small,))
    assert C.check(c, SHORT).verdict is C.Verdict.SUPPORTED
    dropped = c.drop("small_d")
    rep = C.check(dropped, SHORT)
    assert rep.verdict is C.Verdict.REFUTED and rep.witness["violates"] == ["small_d"] and rep.part == "drop:small_d"
    assert not dropped.meets(C.Instance.from_json({"dataset": {"X": [[[0], [0]]], "Y": [1], "v": [0]}}))


def test_an_evaluation_bounded_check_is_reproducible_from_its_seed():
    c = claim(lambda i, b: C.Outcome(sum(map(abs, i.dataset.v)) < 3))
    budget = C.Budget("counted", evaluations=300, seconds=None, min_instances=12, horizon=1.0, limit=60.0)
    a, b = C.check(c, budget, 7), C.check(c, budget, 7)
    assert a.verdict is b.verdict is C.Verdict.REFUTED and a.witness["instance"] == b.witness["instance"]
    assert a.evidence["evaluated"] == b.evidence["evaluated"]


@pytest.mark.parametrize("conclusion, kind", [
    (lambda i, b: 1 / 0, "ZeroDivisionError"),
    (lambda i, b: __import__("sys").exit(0), "SystemExit"),
    (lambda i, b: True, "OutcomeError"),                         # a bare bool is not an Outcome
    (lambda i, b: None, "OutcomeError"),
    (lambda i, b: C.Outcome(float("nan")), "OutcomeError"),       # NaN never counts as holding
    (lambda i, b: C.Outcome("yes"), "OutcomeError"),
])
def test_claim_code_that_raises_or_returns_garbage_is_an_error_row(conclusion, kind):
    rep = C.check(claim(conclusion), SHORT)
    assert rep.verdict is C.Verdict.INCONCLUSIVE and not rep.as_expected
    assert rep.error["type"] == kind and rep.error["where"] == "conclusion"
    assert C.Instance.from_json(rep.error["instance"]).dataset.n >= 1        # replayable


def test_a_raising_hypothesis_or_generator_is_an_error_row():
    bad = C.Hypothesis("bad", "raises", lambda inst: [][1])
    assert C.check(claim(lambda i, b: C.Outcome(True), (bad,)), SHORT).error["type"] == "IndexError"
    broken = space(lambda c: 1 / c.integer(0, 0))
    rep = C.check(claim(lambda i, b: C.Outcome(True), inst=lambda: broken), SHORT)
    assert rep.error["where"] == "instances" and rep.error["type"] == "ZeroDivisionError"


def test_a_conclusion_past_the_runaway_guard_is_an_error_row_not_a_verdict():
    budget = C.Budget("t", evaluations=100, seconds=0.2, min_instances=1, horizon=1.0, limit=1.0)
    t0 = time.monotonic()
    rep = C.check(claim(lambda i, b: time.sleep(60)), budget)
    assert rep.verdict is C.Verdict.INCONCLUSIVE and rep.error["type"] == "Runaway" and not rep.as_expected
    assert rep.evidence["note"].startswith("runaway:") and rep.error["instance"] is not None
    assert time.monotonic() - t0 < 10


def test_no_expectation_passes_only_proved_certified_or_supported():
    for v, ok in [("SUPPORTED", True), ("CERTIFIED", True), ("PROVED", True), ("PARTIAL", False), ("REFUTED", False),
                  ("INCONCLUSIVE", False)]:
        assert C.Report("x", "check", C.Verdict(v)).as_expected is ok
    assert not C.Report("x", "check", C.Verdict.REFUTED, ("REFUTED",), error={"type": "E"}).as_expected


def test_assert_verdict_pins_and_fails_loudly():
    assert_verdict(claim(lambda i, b: C.Outcome(True)), "SUPPORTED", budget=SHORT)
    with pytest.raises(AssertionError, match="verdict REFUTED"):
        assert_verdict(claim(lambda i, b: C.Outcome(False)), "SUPPORTED", budget=SHORT)


def test_example_user_claims_get_their_expected_verdicts():
    found = load_claims_file("examples/my_claims.py")
    for c in found.values():
        assert_verdict(c, *c.expected)
