"""The claims engine: verdicts on known true and known false statements, shrinking,
witness replay from JSON, INCONCLUSIVE never turned into a pass, user claim files."""

import json

import pytest
from hypothesis import strategies as st

from attnsvm import claims as C
from attnsvm.claims.strategies import instances, integer_datasets
from attnsvm.claims.testing import assert_verdict
from attnsvm.interfaces.cli import load_claims_file

ints = lambda: instances(integer_datasets(n=st.integers(1, 2), T=st.integers(2, 3), d=st.integers(1, 2)))
always = C.Hypothesis("always", "no restriction", lambda inst: True)


def claim(conclusion, hyps=(always,)):
    return C.Claim("t", "test", tuple(hyps), conclusion, lambda dropped: ints())


def test_true_claim_is_supported_and_exact_one_certified():
    assert C.check(claim(lambda i, b: C.Outcome(i.dataset.T >= 2))).verdict is C.Verdict.SUPPORTED
    rep = C.check(claim(lambda i, b: C.Outcome(True, certified=True)), "quick", 3)
    assert rep.verdict is C.Verdict.CERTIFIED and rep.evidence["instances"] >= 6 and rep.evidence["seed"] == 3


def test_false_claim_is_refuted_with_a_shrunk_witness_that_replays():
    c = claim(lambda i, b: C.Outcome(i.dataset.d < 2, detail={"d": i.dataset.d}))
    rep = C.check(c)
    assert rep.verdict is C.Verdict.REFUTED
    ds = rep.witness["instance"]["dataset"]
    assert len(ds["X"]) == 1 and len(ds["X"][0]) == 2 and ds["X"][0][0] == [0, 0]   # shrunk to the minimum
    stored = json.loads(json.dumps(rep.witness))
    assert C.replay_witness(stored, c).verdict is C.Verdict.REFUTED
    fixed = claim(lambda i, b: C.Outcome(True))
    assert C.replay_witness(stored, fixed).verdict is C.Verdict.SUPPORTED


def test_untrusted_numerics_are_inconclusive_not_a_pass():
    rep = C.check(claim(lambda i, b: C.Outcome(None, reason="underflow")))
    assert rep.verdict is C.Verdict.INCONCLUSIVE and rep.evidence["inconclusive_reasons"] == {"underflow": rep.evidence["inconclusive"]}


def test_unsatisfiable_hypotheses_are_inconclusive():
    never = C.Hypothesis("never", "impossible", lambda inst: False)
    assert C.check(claim(lambda i, b: C.Outcome(True), (never,))).verdict is C.Verdict.INCONCLUSIVE


def test_dropping_a_hypothesis_searches_instances_violating_it():
    small = C.Hypothesis("small_d", "d == 1", lambda inst: inst.dataset.d == 1)
    c = claim(lambda i, b: C.Outcome(i.dataset.d == 1), (small,))
    assert C.check(c).verdict is C.Verdict.SUPPORTED
    dropped = c.drop("small_d")
    rep = C.check(dropped)
    assert rep.verdict is C.Verdict.REFUTED and rep.witness["violates"] == ["small_d"] and rep.part == "drop:small_d"
    assert not dropped.meets(C.Instance.from_json({"dataset": {"X": [[[0], [0]]], "Y": [1], "v": [0]}}))


def test_check_is_reproducible_from_its_seed():
    c = claim(lambda i, b: C.Outcome(sum(map(abs, i.dataset.v)) < 3))
    a, b = C.check(c, "quick", 7), C.check(c, "quick", 7)
    assert a.verdict is b.verdict is C.Verdict.REFUTED and a.witness["instance"] == b.witness["instance"]


def test_assert_verdict_pins_and_fails_loudly():
    assert_verdict(claim(lambda i, b: C.Outcome(True)), "SUPPORTED")
    with pytest.raises(AssertionError, match="verdict REFUTED"):
        assert_verdict(claim(lambda i, b: C.Outcome(False)), "SUPPORTED")


def test_example_user_claims_get_their_expected_verdicts():
    found = load_claims_file("examples/my_claims.py")
    for c in found.values():
        assert_verdict(c, *c.expected)
