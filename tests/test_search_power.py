"""The search finds what is there: false claims of the kinds users write (tests/claims/
false_claims.py: variants of the papers' statements on small configurations, no margins) are
REFUTED at the quick budget and their witnesses replay; their true neighbours
(tests/claims/true_claims.py) are not refuted."""

import json

import pytest

from attnsvm import claims as C
from attnsvm.claims.userfiles import load_claims_file

FALSE = load_claims_file("tests/claims/false_claims.py")
TRUE = load_claims_file("tests/claims/true_claims.py")
RARE = {"few_lmms", "ngd_global"}       # about one instance in 10^2-10^3: see test_rare_counterexamples


@pytest.mark.parametrize("name", sorted(set(FALSE) - RARE))
def test_false_claims_are_refuted_at_quick(name):
    rep = C.check(FALSE[name], "quick", 0)
    assert rep.verdict is C.Verdict.REFUTED, rep.evidence
    assert C.replay_witness(json.loads(json.dumps(rep.witness)), FALSE[name]).verdict is C.Verdict.REFUTED


@pytest.mark.parametrize("name", sorted(TRUE))
def test_true_neighbours_are_not_refuted(name):
    rep = C.check(TRUE[name], "quick", 0)
    assert rep.verdict in (C.Verdict.SUPPORTED, C.Verdict.CERTIFIED), rep.evidence
