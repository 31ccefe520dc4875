"""The CLI as a user runs it: exit codes, one-line errors, JSON outputs, witnesses."""

import json
from pathlib import Path

import pytest

from cli_run import run

TIGHT = {"name": "tightness", "X": [[[1, 0], [0, 0]], [[0, 0], [2, 1]]], "Y": [1, 1], "v": [1, -3]}


@pytest.fixture
def data(tmp_path):
    p = tmp_path / "tight.json"
    p.write_text(json.dumps(TIGHT))
    return p


def test_analyze_reports_every_lmm(monkeypatch, capsys, data, tmp_path):
    code, out, _ = run(monkeypatch, capsys, "analyze", data, "--json", tmp_path / "a.json")
    assert code == 0 and "GMM: feasible" in out
    res = json.loads((tmp_path / "a.json").read_text())
    lmms = {tuple(s["alpha"]): s for s in res["lmms"]}
    assert set(lmms) == {(0, 0), (0, 1)} and lmms[(0, 0)]["is_gmm"] and not lmms[(0, 1)]["is_gmm"]
    assert lmms[(0, 1)]["neighbors"] == [[1], []] and all(s["certified"] for s in res["lmms"])
    assert lmms[(0, 0)]["p_mm_exact"] == ["1", "-3"]


@pytest.mark.parametrize("init, limit", [("0,0", [0, 0]), ("6,6", [0, 1])])
def test_run_reaches_the_lmm_of_its_basin(monkeypatch, capsys, data, tmp_path, init, limit):
    """Appendix E: NGD from the origin finds the GMM, from (6, 6) the other LMM."""
    code, _, _ = run(monkeypatch, capsys, "run", data, "--rule", "ngd", "--steps", 3000, "--init", init,
                     "--json", tmp_path / "r.json")
    res = json.loads((tmp_path / "r.json").read_text())
    assert code == 0 and res["aligned_with"] == limit and res["best_corr"] > 0.999 and res["status"] == "ok"
    assert res["trace"]["norm"][-1] > 100


@pytest.mark.parametrize("content, message", [
    ('{"X": [[[1, 0], [0, 0]]], "Y": [0], "v": [1, 0]}', "labels must be -1 or +1"),
    ('{"X": [[[1, 0]]], "Y": [1], "v": [1, 0]}', "T >= 2"),
    ('{"X": [[[1, "nan"], [0, 0]]], "Y": [1], "v": [1, 0]}', "non-finite"),
    ('{"X": [[[1, 0], [0, 0]]], "Y": [1], "v": [1, 0, 2]}', "length d = 2"),
    ('{"X": [[[1, 0], [0, 0]]', "malformed JSON"),
])
def test_bad_dataset_is_one_line_exit_2(monkeypatch, capsys, tmp_path, content, message):
    p = tmp_path / "bad.json"
    p.write_text(content)
    for cmd in (["analyze", p], ["run", p]):
        code, out, err = run(monkeypatch, capsys, *cmd)
        assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err + out


@pytest.mark.parametrize("args, message", [
    (["check", "no-such-result"], "unknown result id"),
    (["check", "lemma2", "--budget", "huge"], "unknown budget"),
    (["replay", "/no/such/witness.json"], "no such file"),
    (["counterexample", "lemma2", "--drop", "nonsense"], "has no hypothesis"),
    (["check", "missing_claims.py"], "no such file"),
])
def test_usage_errors_exit_2(monkeypatch, capsys, args, message):
    code, _, err = run(monkeypatch, capsys, *args)
    assert code == 2 and message in err and "Traceback" not in err


@pytest.mark.parametrize("args, message", [
    (["check", "lemma2", "--seed", "-1"], "--seed"),                           # typer's own validation
    (["no-such-command"], "No such command"),
    (["reproduce", "fig9", "--d", "99999999999999999999"], "sizes above"),
    (["reproduce", "fig9", "--sat-tol", "nan"], "finite positive"),
    (["reproduce", "fig9", "--lr", "inf"], "finite positive"),
    (["reproduce", "tfsvm-rank", "--rank-tol", "nan"], "finite positive"),
    (["reproduce", "tfsvm-local", "--T", "1"], "at least 2"),
    (["reproduce", "tfsvm-local", "--init-scale", "inf"], "finite non-negative"),
])
def test_bad_cli_values_are_one_line_exit_2_and_write_nothing(monkeypatch, capsys, tmp_path, args, message):
    out = tmp_path / "out"
    extra = ["--out", out] if args[0] == "reproduce" else []
    code, stdout, err = run(monkeypatch, capsys, *args, *extra)
    assert code == 2 and message in err and err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err + stdout and not out.exists()


def test_json_nested_too_deeply_is_one_line(monkeypatch, capsys, tmp_path):
    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = run(monkeypatch, capsys, "analyze", p)
    assert code == 2 and "nested too deeply" in err and "Traceback" not in err


def test_run_rejects_bad_init(monkeypatch, capsys, data):
    code, _, err = run(monkeypatch, capsys, "run", data, "--init", "1,x")
    assert code == 2 and "--init" in err


def test_unreadable_witness_exit_2(monkeypatch, capsys, tmp_path):
    w = tmp_path / "w.json"
    w.write_text('{"format": "something else"}')
    code, _, err = run(monkeypatch, capsys, "replay", w)
    assert code == 2 and "not an attnsvm witness" in err


def test_check_json_and_exit_code(monkeypatch, capsys, tmp_path):
    code, out, _ = run(monkeypatch, capsys, "check", "lemma2", "--json", tmp_path / "c.json")
    res = json.loads((tmp_path / "c.json").read_text())
    assert code == 0 and "5 of 5 verdicts as expected" in out
    assert [r["part"] for r in res["reports"]] == ["derivation", "check", "drop:common_label",
                                                    "drop:strict_optimality", "drop:v_in_range_W"]
    assert all(r["as_expected"] for r in res["reports"])


def test_user_claim_file_counterexample_and_replay(monkeypatch, capsys, tmp_path):
    w = tmp_path / "w.json"
    code, out, _ = run(monkeypatch, capsys, "counterexample", "examples/my_claims.py:unique_lmm", "--budget", "quick",
                       "--out", w)
    assert code == 0 and w.exists()
    code, _, err = run(monkeypatch, capsys, "replay", w)
    assert code == 2 and "--claims" in err and err.count("\n") == 1      # a witness never names code that runs
    code, out, _ = run(monkeypatch, capsys, "replay", w, "--claims", "examples/my_claims.py",
                       "--json", tmp_path / "r.json")
    assert code == 0 and "REFUTED" in out
    assert json.loads((tmp_path / "r.json").read_text())["verdict"] == "REFUTED"


def test_user_claim_file_with_wrong_expectation_exits_1(monkeypatch, capsys, tmp_path):
    f = tmp_path / "claims.py"
    f.write_text("from examples.my_claims import two_token_separable\n"
                 "import dataclasses\nwrong = dataclasses.replace(two_token_separable, expected=('REFUTED',))\n")
    monkeypatch.syspath_prepend(".")
    code, out, _ = run(monkeypatch, capsys, "check", f)
    assert code == 1 and "NO" in out


def test_broken_claim_file_is_a_row_and_the_others_are_still_judged(monkeypatch, capsys, tmp_path):
    f = tmp_path / "claims.py"
    f.write_text("def broken(:\n")
    code, out, err = run(monkeypatch, capsys, "check", f, "lemma2", "--json", tmp_path / "c.json")
    res = json.loads((tmp_path / "c.json").read_text())
    load = [r for r in res["reports"] if r["part"] == "load"]
    assert code == 1 and "Traceback" not in out + err
    assert load[0]["error"]["type"] == "SyntaxError" and not load[0]["as_expected"]
    assert sum(r["id"] == "lemma2" for r in res["reports"]) == 5


def test_interrupted_check_keeps_finished_parts(monkeypatch, capsys, tmp_path):
    """An interrupt while parts run (here: once the first part's report is in; the parts run in
    supervised workers, which the test cannot reach) keeps the finished part and kills the rest."""
    from attnsvm.interfaces import executors

    real = executors.completed

    def interrupted(futures):
        for pair in real(futures):
            yield pair
            raise KeyboardInterrupt

    monkeypatch.setattr(executors, "completed", interrupted)
    code, _, err = run(monkeypatch, capsys, "check", "lemma2", "--json", tmp_path / "c.json")
    res = json.loads((tmp_path / "c.json").read_text())
    assert code == 130 and res["interrupted"] and len(res["reports"]) == 1
    assert res["reports"][0]["verdict"] != "INCONCLUSIVE"
    assert "interrupted after 1 of 5 parts" in err


WITNESSES = sorted((Path(__file__).parent.parent / "counterexamples" / "witnesses").glob("*.json"))


@pytest.mark.parametrize("witness", WITNESSES, ids=lambda p: p.stem)
def test_every_stored_witness_replays_from_its_file_on_the_torch_path(monkeypatch, capsys, tmp_path, witness):
    """`attnsvm replay FILE` re-verifies each stored witness (its `source` resolves to its
    claim), here with the fused kernel off: a refutation that held only under one gradient
    path's rounding would be fragile (the runner's tests replay them on the kernel)."""
    from attnsvm.attention import fused
    monkeypatch.setenv("ATTNSVM_FUSED", "0")
    fused.reset()
    try:
        code, out, err = run(monkeypatch, capsys, "replay", witness, "--json", tmp_path / "r.json")
    finally:
        fused.reset()
    assert code == 0 and not err, (out, err)
    assert json.loads((tmp_path / "r.json").read_text())["verdict"] == "REFUTED"


USER_CLAIMS = '''
import time
from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.claims.strategies import instances, integer_datasets
space = lambda dropped: instances(integer_datasets(n=1, T=2, d=1, lo=-1, hi=1))
refuted = Claim("refuted", "d >= 2", (), lambda i, b: Outcome(i.dataset.d >= 2), space)
holds = Claim("holds", "T >= 2", (), lambda i, b: Outcome(i.dataset.T >= 2), space)
raises = Claim("raises", "boom", (), lambda i, b: {}["missing"], space)
exits = Claim("exits", "exit", (), lambda i, b: __import__("sys").exit(0), space)
'''


def test_expectation_free_claims_fail_closed_and_a_raising_claim_is_its_own_row(monkeypatch, capsys, tmp_path):
    f = tmp_path / "mine.py"
    f.write_text(USER_CLAIMS)
    code, out, err = run(monkeypatch, capsys, "check", f, "--json", tmp_path / "c.json", "--witnesses", tmp_path / "w")
    rows = {r["id"].split(":")[1]: r for r in json.loads((tmp_path / "c.json").read_text())["reports"]}
    assert code == 1 and "Traceback" not in out + err
    assert rows["refuted"]["verdict"] == "REFUTED" and not rows["refuted"]["as_expected"]
    assert [p.name for p in (tmp_path / "w").iterdir()] == ["mine--refuted.json"]
    assert rows["holds"]["verdict"] == "SUPPORTED" and rows["holds"]["as_expected"]     # whole space, not exactly
    assert rows["raises"]["error"]["type"] == "KeyError" and rows["raises"]["error"]["instance"]["dataset"]["X"]
    assert rows["exits"]["error"]["type"] == "SystemExit"


def test_a_claims_file_that_exits_at_import_is_a_row_not_a_silent_pass(monkeypatch, capsys, tmp_path):
    f = tmp_path / "exits.py"
    f.write_text("import sys\nsys.exit(0)\n")
    code, out, err = run(monkeypatch, capsys, "check", f, "--json", tmp_path / "c.json")
    rows = json.loads((tmp_path / "c.json").read_text())["reports"]
    assert code == 1 and rows[0]["part"] == "load" and rows[0]["error"]["type"] == "SystemExit"


# ---------------------------------------------------------------- the console script as a process

SCRIPT = "from attnsvm.interfaces.cli.entry import main; main()"


def _script(*args, before=""):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", before + SCRIPT, *map(str, args)], capture_output=True, text=True)


def test_console_script_exit_codes_output_and_atexit_survive_its_fast_exit(tmp_path):
    """The console script leaves with os._exit once the command is done: the exit codes, every
    line of output and the atexit handlers (run last, after the output) are those of a normal
    exit."""
    from attnsvm.claims import registry

    hook = "import atexit; atexit.register(lambda: print('ATEXIT'));"
    ok = _script("list", "--json", tmp_path / "list.json", before=hook)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.rstrip().endswith("ATEXIT")
    listed = json.loads((tmp_path / "list.json").read_text())["results"]
    assert {r["id"] for r in listed} == {e.id for e in registry.all_nodes()}
    assert all(r["id"] in ok.stdout for r in listed)
    bad = _script("reproduce", "fig9", "--n", "0", "--out", tmp_path / "o")
    assert bad.returncode == 2 and bad.stderr.splitlines() == ["error: --n must be a finite positive number, got 0"]
    assert not (tmp_path / "o").exists()


def test_console_script_exit_status_is_sys_exit_s():
    from attnsvm.interfaces.cli.entry import _exit_code

    assert [_exit_code(c) for c in (None, 0, 1, 2, 130)] == [0, 0, 1, 2, 130]
    assert _exit_code("a message") == 1


def test_console_script_into_a_closed_pipe_is_quiet(tmp_path):
    import shlex
    import subprocess
    import sys

    cmd = f"{shlex.quote(sys.executable)} -c {shlex.quote(SCRIPT)} list | head -1"
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True)
    assert r.stdout.count("\n") == 1 and "Traceback" not in r.stderr


# ---------------------------------------------------------------- user claims: drops, witnesses of `check`

DROP_CLAIMS = '''
from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.claims.strategies import instances, integer_datasets
space = lambda dropped: instances(integer_datasets(n=1, T=2, d=(1, 2), lo=-1, hi=1))
wide = Hypothesis("wide", "d >= 2", lambda i: i.dataset.d >= 2)
two = Hypothesis("two_tokens", "T = 2", lambda i: i.dataset.T == 2)
needs_wide = Claim("needs-wide", "d >= 2, T = 2 => d >= 2", (wide, two), lambda i, b: Outcome(i.dataset.d >= 2), space)
'''


@pytest.mark.parametrize("drops", [["wide"], ["wide", "two_tokens"]], ids=["one-drop", "two-drops"])
def test_user_claim_counterexample_with_drops_saves_a_witness_that_replays(monkeypatch, capsys, tmp_path, drops):
    """`counterexample FILE.py:NAME --drop H`: one --drop works as several do (the file given
    relative to the current directory, as a user types it), and the witness replays."""
    (tmp_path / "mine.py").write_text(DROP_CLAIMS)
    monkeypatch.chdir(tmp_path)
    args = [a for h in drops for a in ("--drop", h)]
    code, out, err = run(monkeypatch, capsys, "counterexample", "mine.py:needs_wide", *args, "--budget", "quick",
                         "--out", "w.json")
    assert code == 0, out + err
    assert "replay: attnsvm replay w.json --claims mine.py" in " ".join(out.split())
    w = json.loads((tmp_path / "w.json").read_text())
    assert w["source"] == "mine.py:needs_wide" and w["dropped"] == sorted(drops) and "wide" in w["violates"]
    code, out, err = run(monkeypatch, capsys, "replay", "w.json", "--claims", "mine.py", "--json", "r.json")
    assert code == 0 and "REFUTED" in out and not err
    assert json.loads((tmp_path / "r.json").read_text())["verdict"] == "REFUTED"


CHECKED_CLAIMS = '''
from attnsvm.claims import Claim, Outcome
from attnsvm.claims.strategies import instances, integer_datasets
space = lambda dropped: instances(integer_datasets(n=1, T=2, d=1, lo=-1, hi=1))
refuted = Claim("refuted", "d >= 2", (), lambda i, b: Outcome(i.dataset.d >= 2), space)
holds = Claim("holds", "T >= 2", (), lambda i, b: Outcome(i.dataset.T >= 2), space)
'''


def test_check_of_a_claims_file_writes_each_refuted_claims_witness_and_its_replay_command(
        monkeypatch, capsys, tmp_path):
    (tmp_path / "mine.py").write_text(CHECKED_CLAIMS)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(monkeypatch, capsys, "check", "mine.py", "--json", "c.json")
    assert code == 1 and "Traceback" not in out + err
    witness = tmp_path / "attnsvm-witnesses" / "mine--refuted.json"
    line = "replay: attnsvm replay attnsvm-witnesses/mine--refuted.json --claims mine.py"
    assert witness.exists() and line in out and "mine--holds" not in out
    assert [p.name for p in witness.parent.iterdir()] == ["mine--refuted.json"]        # whole files only, no temp left
    rows = {r["id"]: r for r in json.loads((tmp_path / "c.json").read_text())["reports"]}
    assert rows["mine.py:refuted"]["evidence"]["witness_file"] == "attnsvm-witnesses/mine--refuted.json"
    replay_cmd = out[out.index(line) + len("replay: attnsvm "):].split("\n")[0].split()
    code, out, err = run(monkeypatch, capsys, *replay_cmd, "--json", "r.json")            # the printed command
    assert code == 0 and not err, out + err
    assert json.loads((tmp_path / "r.json").read_text())["verdict"] == "REFUTED"


def test_check_witness_dir_option_and_a_bad_one(monkeypatch, capsys, tmp_path):
    (tmp_path / "mine.py").write_text(CHECKED_CLAIMS)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(monkeypatch, capsys, "check", "mine.py", "--witnesses", "deep/w")
    assert code == 1 and (tmp_path / "deep" / "w" / "mine--refuted.json").exists()
    assert "attnsvm replay deep/w/mine--refuted.json --claims mine.py" in out
    (tmp_path / "afile").write_text("")
    code, out, err = run(monkeypatch, capsys, "check", "mine.py", "--witnesses", "afile")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "not a directory" in err


def test_supported_summary_names_proxy_horizon_tolerance_and_power():
    from attnsvm.claims.verdicts import Report, Verdict
    from attnsvm.interfaces.report import summary

    ev = {"budget": "quick", "seed": 0, "instances": 300, "proxy": "late norm growth rate", "horizon": "200 steps",
          "tolerance": "rate > 0.5 eta", "power": "no counterexample in 300 conclusive instances: ...",
          "search": {"random_targeted": {"instances": 300, "targeted": True}}}
    line = summary(Report("c", "check", Verdict.SUPPORTED, (), ev))
    for bit in ("300 instances held", "proxy: late norm growth rate", "horizon 200 steps", "tolerance rate > 0.5 eta",
                "failure rate above 0.01", "seed 0, quick"):
        assert bit in line, line
    plain = summary(Report("c", "check", Verdict.SUPPORTED, (), {"budget": "quick", "seed": 0, "instances": 5,
                                                                  "proxy": "", "tolerance": ""}))
    assert "proxy" not in plain and "tolerance" not in plain


def test_sigint_prints_interrupted_and_a_rerun_resumes(tmp_path):
    """SIGINT during a reproduce run: exit 130 and exactly 'interrupted' on stderr; a rerun resumes and completes."""
    import os
    import signal
    import subprocess
    import sys
    import time

    args = [sys.executable, "-m", "attnsvm", "reproduce", "fig9", "--n", "6", "--T", "8", "--d", "2:16:2",
            "--trials", "1000", "--steps", "1000", "--shard-size", "100", "--workers", "1", "--out", "o"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    p = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not list((tmp_path / "o").glob("shards/*")) and time.time() < deadline and p.poll() is None:
        time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and err == "interrupted\n"
    assert not (tmp_path / "o" / "fig9.json").exists()
    r = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode in (0, 1), r.stderr
    assert (tmp_path / "o" / "fig9.json").exists()


@pytest.mark.parametrize("content, args, message", [
    ('{"X": [[[0,0],[0,0]]], "Y": [1], "v": [0,0]}', (), "smoothness constant 0"),
    ('{"X": [[[1,0],[0,0]]], "Y": [1], "v": [1,0], "W": [[0,0],[0,0]]}', (), "smoothness constant 0"),
    ('{"X": [[[1e-320,0],[0,0]]], "Y": [1], "v": [1,0]}', (), "smoothness constant 0"),
    ('{"X": [[[1e100,0],[0,0]],[[0,0],[2e100,1e100]]], "Y": [1,1], "v": [1,-3]}', (), "outside float64"),
    ('{"X": [[[1e100,0],[0,0]],[[0,0],[2e100,1e100]]], "Y": [1,1], "v": [1,-3]}', ("--rule", "ngd"), "overflows"),
    ('{"X": [[[1,0],[0,0]],[[0,0],[2,1]]], "Y": [1,1], "v": [1,-3]}', ("--init", "1e308,1e308"), "overflowed"),
    ('{"X": [[[1,0],[0,0]],[[0,0],[2,1]]], "Y": [1,1], "v": [1,-3]}', ("--init", ""), "--init"),
])
def test_run_degenerate_scale_is_one_line_exit_2(monkeypatch, capsys, tmp_path, content, args, message):
    f = tmp_path / "d.json"
    f.write_text(content)
    code, out, err = run(monkeypatch, capsys, "run", f, "--steps", "50", *args, "--json", tmp_path / "r.json")
    assert code == 2 and err.startswith("error:") and message in err and err.count("\n") == 1
    assert not (tmp_path / "r.json").exists()


def test_plot_constant_risk_is_one_line_exit_2(monkeypatch, capsys, tmp_path):
    f = tmp_path / "d.json"
    f.write_text('{"X": [[[0,0],[0,0]]], "Y": [1], "v": [0,0]}')
    code, out, err = run(monkeypatch, capsys, "plot", f, "--out", tmp_path / "p.png")
    assert code == 2 and "smoothness constant 0" in err and "Traceback" not in err
    assert not (tmp_path / "p.png").exists()


@pytest.mark.parametrize("cmd", [("reproduce", "fig1", "--steps", "300", "--workers", "1"),
                                 ("reproduce", "fig9", "--workers", "1"),
                                 ("blueprint", "--no-figures", "--reports", "REPORTS")])
@pytest.mark.parametrize("where", ["file", "under_file", "read_only"])
def test_out_dir_that_cannot_be_written_is_one_line_exit_2(monkeypatch, capsys, tmp_path, cmd, where):
    import os

    reports = tmp_path / "r.json"
    reports.write_text(json.dumps({"reports": []}))
    f = tmp_path / "afile"
    f.write_text("x")
    ro = tmp_path / "ro"
    ro.mkdir()
    out = {"file": f, "under_file": f / "sub", "read_only": ro / "out"}[where]
    if where == "read_only":                    # also as root, where the mode bits do not bind
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, m, *a, **k: False if Path(p) == ro else real(p, m, *a, **k))
    args = [str(reports) if a == "REPORTS" else a for a in cmd]
    code, out_text, err = run(monkeypatch, capsys, *args, "--out", out)
    assert code == 2 and err.startswith("error:") and err.count("\n") == 1, err
    assert f.read_text() == "x" and list(ro.iterdir()) == []


def test_score_gap_beyond_float64_and_huge_plot_are_clean(monkeypatch, capsys, tmp_path):
    f = tmp_path / "d.json"
    f.write_text('{"X": [[[1e200,0],[0,0]]], "Y": [1], "v": [1e200,0]}')
    code, out, err = run(monkeypatch, capsys, "analyze", f)
    assert code == 0 and "beyond float64" in out and "Traceback" not in err
    g = tmp_path / "g.json"
    g.write_text('{"X": [[[1e154,0],[0,0]]], "Y": [1], "v": [1,0]}')
    code, out, err = run(monkeypatch, capsys, "plot", g, "--out", tmp_path / "p.png")
    assert code == 2 and err.startswith("error:") and err.count("\n") == 1
    assert not (tmp_path / "p.png").exists()


def test_run_checks_json_target_before_running(monkeypatch, capsys, data, tmp_path):
    import attnsvm.interfaces.analysis as analysis

    monkeypatch.setattr(analysis, "run_report", lambda *a, **k: pytest.fail("ran before checking --json"))
    code, out, err = run(monkeypatch, capsys, "run", data, "--json", tmp_path / "missing" / "x.json")
    assert code == 2 and "does not exist" in err and err.count("\n") == 1
