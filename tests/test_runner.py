"""The runner: every registered result has its three parts; stored counterexamples to a claim
as stated are replayed as `witness:` parts; internal errors are INCONCLUSIVE, never a pass."""


from attnsvm.claims import Verdict, registry, runner


def test_every_registered_result_is_encoded():
    assert [e.id for e in registry.available()] == [e.id for e in registry.ENTRIES]


def test_every_stored_witness_belongs_to_a_registered_result():
    ids = {e.id for e in registry.ENTRIES}
    for path in registry.WITNESS_DIR.glob("*.json"):
        assert path.stem.split("--")[0] in ids, path.name


def test_claim_witnesses_of_the_tightness_result_replay():
    e = registry.entry("theorem2-tightness")
    names = [p.stem for p in registry.claim_witnesses(e)]
    assert "theorem2-tightness--hand" in names
    for p in registry.claim_witnesses(e):
        rep = runner.witness_report(e, p)
        assert rep.verdict is Verdict.REFUTED and rep.part.startswith("witness:") and rep.as_expected


def test_an_internal_error_is_inconclusive_with_its_reason():
    def boom():
        raise ZeroDivisionError("x")

    rep = runner._guard("lemma1", "check", ("SUPPORTED",), boom)
    assert rep.verdict is Verdict.INCONCLUSIVE and not rep.as_expected and "ZeroDivisionError" in rep.evidence["note"]
