"""The pytest plugin (`pytest --attnsvm-claims FILE.py`): a true claim passes, a false one fails
with its verdict, evidence, witness file and a replay command that re-verifies it; a claim
expected to be refuted passes when it is; a broken file is a collection error; loading the
plugin imports nothing heavy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attnsvm.interfaces import cli

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = '''
from attnsvm.claims import Claim, Outcome
from attnsvm.claims.strategies import instances, integer_datasets

space = lambda dropped: instances(integer_datasets(n=1, T=2, d=(1, 2), lo=-1, hi=1))
tokens = Claim("tokens", "every dataset has T >= 2 tokens", (), lambda i, b: Outcome(i.dataset.T >= 2), space)
wide = Claim("wide", "every dataset has d >= 2", (), lambda i, b: Outcome(i.dataset.d >= 2), space)
narrow_exists = Claim("narrow-exists", "some dataset has d = 1", (), lambda i, b: Outcome(i.dataset.d >= 2), space,
                      expected=("REFUTED",))
'''


def pytest_run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "attnsvm.claims.pytest_plugin", "-p", "no:xdist",
                           *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_claims_become_items_and_a_false_one_fails_with_a_replayable_witness(tmp_path, monkeypatch, capsys):
    (tmp_path / "claims.py").write_text(CLAIMS)
    res = pytest_run(tmp_path, "--attnsvm-claims", "claims.py", "-rA", "--attnsvm-witness-dir", "w")
    out = res.stdout
    assert res.returncode == 1, out + res.stderr
    assert "2 passed" in out and "1 failed" in out
    assert "PASSED claims.py::tokens" in out and "PASSED claims.py::narrow_exists" in out
    assert "FAILED claims.py::wide" in out
    assert "wide: verdict REFUTED, expected PROVED, CERTIFIED or SUPPORTED (no expectation stated)" in out
    assert "evidence: counterexample found and minimized (1 evaluations); seed 0, quick" in out
    witness = tmp_path / "w" / "claims--wide.json"
    assert "counterexample: w/claims--wide.json" in out and witness.exists()
    assert "replay: attnsvm replay w/claims--wide.json --claims claims.py" in out
    monkeypatch.chdir(tmp_path)                          # the printed command, as a user runs it there
    monkeypatch.setattr(sys, "argv", ["attnsvm", "replay", "w/claims--wide.json", "--claims", "claims.py"])
    with pytest.raises(SystemExit) as e:
        cli.main()
    assert e.value.code == 0 and "REFUTED" in capsys.readouterr().out


def test_other_paths_still_run_and_a_broken_file_is_a_collection_error(tmp_path):
    # an ordinary test file with one true and one false property of the model: the plugin must
    # leave both to pytest (the false one fails, the true one passes)
    (tmp_path / "test_plain.py").write_text(
        "import torch\nfrom attnsvm.attention import model\n"
        "def test_softmax_rows_sum_to_one():\n"
        "    s = model.attention(torch.tensor([[[1.0, 0.0], [0.0, 2.0]]], dtype=torch.float64), "
        "torch.tensor([1.0, 1.0], dtype=torch.float64))\n"
        "    assert torch.allclose(s.sum(-1), torch.ones(1, dtype=torch.float64))\n"
        "def test_softmax_is_uniform():\n"
        "    s = model.attention(torch.tensor([[[1.0, 0.0], [0.0, 2.0]]], dtype=torch.float64), "
        "torch.tensor([1.0, 1.0], dtype=torch.float64))\n"
        "    assert torch.allclose(s, torch.full_like(s, 0.5))\n")
    (tmp_path / "broken.py").write_text("from attnsvm.claims import Claim\nraise RuntimeError('no claims today')\n")
    res = pytest_run(tmp_path, "test_plain.py", "--attnsvm-claims", "broken.py", "-q")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "ERROR collecting broken.py" in res.stdout and "RuntimeError: no claims today" in res.stdout
    res = pytest_run(tmp_path, "test_plain.py", "-q")                         # the plugin loaded, no claims asked for
    assert res.returncode == 1 and "1 failed, 1 passed" in res.stdout, res.stdout
    assert "test_softmax_is_uniform" in res.stdout


def test_loading_the_plugin_imports_nothing_heavy():
    code = ("import sys, pytest, attnsvm.claims.pytest_plugin\n"
            "print(sorted(m for m in ('numpy', 'torch', 'sympy', 'hypothesis', 'attnsvm.claims.search') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("option, value, message", [
    ("--attnsvm-budget", "bogus", "--attnsvm-budget: unknown budget 'bogus'"),
    ("--attnsvm-seed", "-1", "--attnsvm-seed: must be a non-negative integer, got -1"),
])
def test_a_bad_budget_or_seed_is_a_one_line_usage_error_at_startup(tmp_path, option, value, message):
    (tmp_path / "claims.py").write_text(CLAIMS)
    res = pytest_run(tmp_path, "--attnsvm-claims", "claims.py", option, value, "-q")
    assert res.returncode == 4, res.stdout + res.stderr                  # pytest's ExitCode.USAGE_ERROR
    assert res.stderr.strip().splitlines() == [f"ERROR: {message}" + ("; choose from quick, standard, thorough"
                                                                      if "budget" in option else "")]
    assert "Traceback" not in res.stdout + res.stderr and "passed" not in res.stdout and "failed" not in res.stdout


def test_a_raising_claims_failure_shows_the_offending_instance(tmp_path):
    (tmp_path / "claims.py").write_text(CLAIMS + 'raises = Claim("raises", "boom", (), lambda i, b: '
                                                 '{}["missing"], space)\n')
    res = pytest_run(tmp_path, "--attnsvm-claims", "claims.py", "-q", "-k", "raises")
    out = res.stdout
    assert res.returncode == 1 and "1 failed" in out, out + res.stderr
    assert "error in conclusion: KeyError: 'missing' at claims.py:" in out
    line = next(x for x in out.splitlines() if x.startswith("instance: "))
    inst = json.loads(line[len("instance: "):])
    assert inst["dataset"]["X"] and inst["dataset"]["Y"] == [1] and "params" in inst
