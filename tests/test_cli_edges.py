"""The command line as a new user meets it, each through the real command: help printed once; a
user claim addressed by its variable or its Claim name and shown everywhere as FILE.py:VARIABLE;
one default budget; Hypothesis' storage in attnsvm's cache directory, never the current one; a
missing input refused before any heavy import; one progress line per finished part and whole
tables when the output is not a terminal; an honest message for an interrupt before any part
finished; no warning under Dask that the local executor does not print; the shipped witnesses
listed, exported and replayed by name on any install."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from attnsvm.claims import registry
from attnsvm.interfaces import executors

from cli_run import run

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "sympy", "scipy", "cvxpy", "hypothesis", "attnsvm.interfaces.analysis", "attnsvm.claims.search")


def attnsvm(*args, cwd: Path, **env) -> subprocess.CompletedProcess:
    """The console command in a process of its own, stdout and stderr piped (not a terminal)."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    environ.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    return subprocess.run([sys.executable, "-m", "attnsvm", *map(str, args)], cwd=cwd, env=environ, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.parametrize("args", [[], ["reproduce"]], ids=["attnsvm", "reproduce"])
def test_help_is_printed_once(tmp_path, args):
    r = attnsvm(*args, cwd=tmp_path)
    shown = r.stdout + r.stderr
    assert r.returncode == 2 and shown.count("Usage:") == 1 and "Commands" in shown, shown


CLAIMS = '''
from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.claims.strategies import instances, integer_datasets
space = lambda dropped: instances(integer_datasets(n=1, T=2, d=(1, 2), lo=-1, hi=1))
wide = Hypothesis("wide", "d >= 2", lambda i: i.dataset.d >= 2)
needs_wide = Claim("needs-wide", "d >= 2 => d >= 2", (wide,), lambda i, b: Outcome(i.dataset.d >= 2), space)
tokens = Claim("two-tokens", "T = 2", (), lambda i, b: Outcome(i.dataset.T == 2), space)
'''


def test_a_user_claim_goes_by_its_variable_or_its_name_and_is_shown_as_file_variable(monkeypatch, capsys, tmp_path):
    (tmp_path / "mine.py").write_text(CLAIMS)
    monkeypatch.chdir(tmp_path)
    # its Claim name
    code, out, err = run(monkeypatch, capsys, "counterexample", "mine.py:needs-wide", "--drop", "wide")
    assert code == 0, out + err
    w = json.loads((tmp_path / "mine--needs_wide--wide.json").read_text())      # named as `check` names its witnesses
    assert w["source"] == "mine.py:needs_wide" and w["claim"] == "mine.py:needs_wide"
    assert w["budget"] == "quick"                                             # one default budget, as `check`'s
    assert "mine.py:needs_wide" in out and "needs-wide" not in out
    assert "attnsvm replay mine--needs_wide--wide.json --claims mine.py" in " ".join(out.split())
    code, out, err = run(monkeypatch, capsys, "replay", "mine--needs_wide--wide.json", "--claims", "mine.py")
    assert code == 0 and "mine.py:needs_wide" in out and "needs-wide" not in out, out + err
    for name in ("needs_wide", "needs-wide"):                                   # check one claim, by either name
        code, out, err = run(monkeypatch, capsys, "check", f"mine.py:{name}", "--json", "c.json")
        assert [r["id"] for r in json.loads((tmp_path / "c.json").read_text())["reports"]] == ["mine.py:needs_wide"]
    code, out, err = run(monkeypatch, capsys, "counterexample", "mine.py:nothing")
    assert code == 2 and err.count("\n") == 1 and "needs_wide (name 'needs-wide')" in err and "tokens" in err


def test_pytest_selects_a_claim_by_its_name_too(tmp_path):
    (tmp_path / "mine.py").write_text(CLAIMS)
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "--attnsvm-claims",
                        "mine.py", "-k", "two-tokens", "-v"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0 and "mine.py::tokens PASSED" in r.stdout and "needs_wide" not in r.stdout, \
        r.stdout + r.stderr


def test_hypothesis_stores_under_the_cache_directory_never_in_the_current_one(tmp_path):
    """Nothing lands in the current directory, and claim code (run in workers) sees Hypothesis'
    storage under attnsvm's cache directory (a refuted claim reports what it saw)."""
    (tmp_path / "c.py").write_text(
        "import os\nfrom attnsvm.claims import Claim, Outcome\n"
        "from attnsvm.claims.strategies import instances, integer_datasets\n"
        "where = Claim('where', 'x', (), lambda i, b: Outcome(False, detail={'store': "
        "os.environ.get('HYPOTHESIS_STORAGE_DIRECTORY', '')}), lambda d: instances(integer_datasets(n=1, T=2, d=1)))\n")
    r = attnsvm("check", "lemma1", cwd=tmp_path, ATTNSVM_CACHE_DIR=str(tmp_path / "cache"))
    assert r.returncode == 0, r.stdout + r.stderr
    r = attnsvm("check", "c.py", "--json", "o.json", cwd=tmp_path, ATTNSVM_CACHE_DIR=str(tmp_path / "cache"))
    seen = json.loads((tmp_path / "o.json").read_text())["reports"][0]["evidence"]["counterexample"]["store"]
    assert seen == str(tmp_path / "cache" / "hypothesis") and not (tmp_path / ".hypothesis").exists()


@pytest.mark.parametrize("args", [["analyze", "missing.json"], ["run", "missing.json"],
                                  ["plot", "missing.json", "--out", "x.png"], ["replay", "missing.json"],
                                  ["blueprint", "--reports", "missing.json", "--out", "site"]],
                         ids=lambda a: a[0])
def test_a_missing_input_is_refused_before_any_heavy_import(tmp_path, args):
    probe = ("import sys\nfrom attnsvm.interfaces import cli\nsys.argv = ['attnsvm', *sys.argv[1:]]\n"
             "try:\n    cli.main()\nexcept SystemExit as e:\n    code = e.code\n"
             f"print(code, sorted(m for m in {HEAVY!r} if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", probe, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.stdout.split("\n")[-2] == "2 []", r.stdout + r.stderr
    assert r.stderr.startswith("error: missing.json") and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "site").exists() and not (tmp_path / "x.png").exists()


def test_piped_output_has_a_line_per_finished_part_and_whole_tables(tmp_path):
    r = attnsvm("check", "lemma2", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [x for x in r.stderr.splitlines() if x]
    assert len(lines) == 5 and all(re.match(r"\[\d/5\] lemma2 (derivation|check|drop:\w+): [A-Z]+ \(\d+\.\d s\)$", x)
                                   for x in lines), r.stderr
    assert "…" not in r.stdout and "shipped witness lemma2--common_label re-verified" in r.stdout
    r = attnsvm("reproduce", "fig9", "--n", "2", "--T", "3", "--d", "2,3", "--trials", "6", "--steps", "200",
                "--workers", "1", "--out", "o", cwd=tmp_path)
    assert r.returncode in (0, 1) and "…" not in r.stdout and "Traceback" not in r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("command, said", [(["check", "lemma2", "--json", "c.json"], "no verdict ("),
                                           (["blueprint", "lemma2", "--out", "site", "--no-figures"],
                                            "no blueprint written")],
                         ids=["check", "blueprint"])
def test_an_interrupt_before_any_part_finished_says_so(monkeypatch, capsys, tmp_path, command, said):
    def interrupted(futures):
        raise KeyboardInterrupt
        yield

    monkeypatch.setattr(executors, "completed", interrupted)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(monkeypatch, capsys, *command)
    assert code == 130 and f"interrupted before any of the 5 parts finished: {said}" in err
    assert "saved" not in err and "verdicts" not in out
    if "--json" in command:                           # the record of a run cut short, with no reports
        assert json.loads((tmp_path / "c.json").read_text())["interrupted"] is True
        assert [p.name for p in tmp_path.iterdir()] == ["c.json"]
        assert json.loads((tmp_path / "c.json").read_text())["reports"] == []
    else:
        assert not list(tmp_path.iterdir())


def test_dask_prints_no_warning_the_local_executor_does_not(tmp_path):
    pytest.importorskip("distributed")
    outputs = {ex: attnsvm("check", "lemma2", "--executor", ex, cwd=tmp_path) for ex in ("local", "dask")}
    for ex, r in outputs.items():
        assert r.returncode == 0, (ex, r.stdout + r.stderr)
        assert "Warning" not in r.stderr, (ex, r.stderr)


def test_shipped_witnesses_are_listed_exported_and_replayed_by_name(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(monkeypatch, capsys, "witnesses", "lemma2", "--export", "out", "--json", "w.json")
    listed = json.loads((tmp_path / "w.json").read_text())
    shipped = sorted(registry.WITNESS_DIR.glob("lemma2--*.json"))
    assert code == 0 and [w["name"] for w in listed] == [p.stem for p in shipped]
    assert all(w["replay"] == f"attnsvm replay --shipped {w['name']}" for w in listed)
    assert all((tmp_path / "out" / p.name).read_bytes() == p.read_bytes() for p in shipped)
    for w in listed:
        for how in (["--shipped", w["name"]], [f"out/{w['name']}.json"]):
            code, out, err = run(monkeypatch, capsys, "replay", *how)
            assert code == 0 and "REFUTED" in out and not err, (how, out + err)
    code, out, err = run(monkeypatch, capsys, "check", "lemma2")
    assert code == 0 and "shipped witness lemma2--common_label re-verified" in out
    assert "attnsvm replay --shipped ID--NAME" in out
    assert str(registry.WITNESS_DIR) not in out and "witnesses/" not in out
    for args, message in ((["--shipped", "lemma2--nothing"], "no shipped witness"), ([], "give a witness file"),
                          (["x.json", "--shipped", "lemma2--common_label"], "give a witness file")):
        code, out, err = run(monkeypatch, capsys, "replay", *args)
        assert code == 2 and message in err and err.count("\n") == 1, err
