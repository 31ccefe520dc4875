"""The runner and the registry's manifest: every result has its parts and the manifest says
what the modules do (same hypotheses, same necessity searches); stored counterexamples to a
claim as stated replay as `witness:` parts; an internal error is an INCONCLUSIVE row with its
reason, never a pass and never a lost run."""

import pytest

from attnsvm.claims import Verdict, registry, runner
from attnsvm.claims import hypotheses as hyp


@pytest.mark.parametrize("e", registry.ENTRIES, ids=lambda e: e.id)
def test_every_registered_result_is_encoded_as_its_manifest_says(e):
    assert all(registry.has(pkg, e) for pkg in registry.PARTS), e.id
    assert tuple(registry.claim(e).hypothesis_names()) == tuple(hyp.short(q) for q in e.hypotheses)
    assert tuple(registry.searches(e)) == e.necessity
    assert set(e.uses) <= {n.id for n in registry.all_nodes()}, e.uses


def test_aliases_resolve_to_their_results():
    assert registry.entry("lemma11").id == "lemma2" and registry.entry("theorem7").id == "theorem4"


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


def test_an_internal_error_is_inconclusive_with_its_reason(monkeypatch):
    def boom(e, budget, seed):
        raise ZeroDivisionError("x")

    monkeypatch.setattr(runner, "check_report", boom)
    rep = runner.run(runner.Task("lemma1", "check", "quick", 0))
    assert rep.verdict is Verdict.INCONCLUSIVE and not rep.as_expected and "ZeroDivisionError" in rep.evidence["note"]
    assert rep.error["type"] == "ZeroDivisionError"


def test_an_interrupt_stops_check_with_workers_at_once(tmp_path):
    """Ctrl-C during `check --workers 2`: the workers (which ignore SIGINT and would finish parts
    that take minutes) are terminated, the finished parts are saved, and the command exits 130
    within seconds (it used to wait on the pool for good)."""
    import json
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "int.json"
    proc = subprocess.Popen([sys.executable, "-m", "attnsvm", "check", "theorem3", "theorem4", "lemma7",
                             "--workers", "2", "--budget", "thorough", "--json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(8)
    proc.send_signal(signal.SIGINT)
    began = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and time.monotonic() - began < 20
    assert err.strip().endswith("interrupted")
    saved = json.loads(out.read_text())
    assert saved["interrupted"] is True and all(r["verdict"] for r in saved["reports"])


def test_a_claim_that_ends_its_process_gets_a_row_and_the_others_are_judged(tmp_path):
    """Claims from a file run in worker processes: one whose code calls os._exit(0) gets an
    INCONCLUSIVE row saying its process ended, the others keep their verdicts, exit 1."""
    import json
    import subprocess
    import sys

    (tmp_path / "c.py").write_text(
        "import os\nfrom attnsvm.claims import Claim, Outcome\n"
        "from attnsvm.claims.strategies import instances, integer_datasets\n"
        "sp = lambda d: instances(integer_datasets(n=(1, 2), T=(2, 3), d=(1, 2)))\n"
        "good = Claim('good', 'T >= 2', (), lambda i, b: Outcome(i.dataset.T >= 2), sp)\n"
        "killer = Claim('killer', 'exits', (), lambda i, b: os._exit(0), sp)\n")
    r = subprocess.run([sys.executable, "-m", "attnsvm", "check", "c.py", "--json", "o.json"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    rows = {x["id"]: x for x in json.loads((tmp_path / "o.json").read_text())["reports"]}
    assert rows["c.py:good"]["verdict"] == "SUPPORTED"
    assert rows["c.py:killer"]["verdict"] == "INCONCLUSIVE" and rows["c.py:killer"]["error"]["type"] == "ProcessLost"
