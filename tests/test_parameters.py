"""Declared parameters (`attnsvm.claims.parameters`): the manifest states every result's instance
parameters, every instance its spaces draw and every shipped witness meets it, and a witness
breaking it is refused with the one message format before any value reaches claim code."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from attnsvm.claims import registry
from attnsvm.claims.claim import Instance
from attnsvm.claims.parameters import DECLARED, ListOf, Nullable, Number, Options, check, sizes_of, why_not
from attnsvm.claims.witnesses import replay_witness
from attnsvm.errors import UserError

WITNESSES = sorted((Path(__file__).parent.parent / "counterexamples" / "witnesses").glob("*.json"))
RESULTS = [e for e in registry.ENTRIES if registry.has("checks", e)]


def test_every_checked_result_declares_its_parameters():
    assert sorted(DECLARED) == sorted(e.id for e in RESULTS)


@pytest.mark.parametrize("witness", WITNESSES, ids=lambda p: p.stem)
def test_every_shipped_witness_meets_its_declaration(witness):
    w = json.loads(witness.read_text())
    inst = Instance.from_json(w["instance"])
    assert why_not(DECLARED[w["source"]], inst.params, sizes_of(inst.dataset)) is None


@pytest.mark.parametrize("entry", RESULTS, ids=lambda e: e.id)
def test_every_space_of_a_result_draws_declared_parameters(entry):
    """The declaration is checked against the code it describes: instances drawn from the claim's
    space and from each necessity search's space."""
    claim = registry.claim(entry)
    spaces = [claim.instances(frozenset())] + [(s.instances or claim.instances)(frozenset([h]))
                                               for h, s in registry.searches(entry).items()]
    for space in spaces:
        @settings(max_examples=20, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(space)
        def meets(inst):
            assert why_not(DECLARED[entry.id], inst.params, sizes_of(inst.dataset)) is None

        meets()


def test_constraints_say_what_they_want_in_one_format():
    sizes = {"n": 2, "T": 3, "d": 2}
    assert Number(0, 1, open_lo=True).ok(0.5, sizes) and not Number(0, 1, open_lo=True).ok(0, sizes)
    assert Number(0, 1, exact=True).ok("1/8", sizes) and not Number(0, 1).ok("1/8", sizes)
    assert not Number(0, 10, integer=True).ok(True, sizes) and not Number(0, 10).ok(float("nan"), sizes)
    assert ListOf(Options((1, -1)), length="T").ok([1, -1, 1], sizes)
    assert not ListOf(Options((1, -1)), length="T").ok([1], sizes)
    assert Nullable(Number(0, 1)).ok(None, sizes) and not Options(("gd",)).ok(None, sizes)
    with pytest.raises(UserError, match=r"^eta must be a number in \(0, 1\], got 'x'$"):
        check("eta", "x", Number(0, 1, open_lo=True))


def test_a_replayed_witness_is_checked_before_its_hypotheses_run():
    """A parameter of the wrong type is refused (UserError) before the claim's hypotheses see it."""
    witness = json.loads((Path(__file__).parent.parent / "counterexamples" / "witnesses" /
                          "theorem2--assumption_B.json").read_text())
    witness["instance"]["params"]["eta_factor"] = None
    entry = registry.entry("theorem2")
    claim = registry.claim(entry).drop("assumption_B")
    with pytest.raises(UserError, match=r"parameter 'eta_factor' must be .*, got None"):
        replay_witness(witness, claim, declared=DECLARED["theorem2"])
