"""Hostile and careless input, each kind through the real command (`python -m attnsvm` in a
process of its own): one `error:` line and exit 2 for bad input, never a traceback; costs
refused up front; exact answers at any scale; claim code that blocks, forks or exits ends as its
own row; and no process left behind, found by a marker in the environment every descendant
inherits (an orphan is no longer our child)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[1]
WITNESSES = ROOT / "counterexamples" / "witnesses"
TIGHT = {"name": "tightness", "X": [[[1, 0], [0, 0]], [[0, 0], [2, 1]]], "Y": [1, 1], "v": [1, -3]}


def marked(mark: str) -> list[psutil.Process]:
    """Live processes whose environment carries `mark`."""
    found = []
    for p in psutil.process_iter():
        try:
            if p.environ().get("ATTNSVM_TEST_MARK") == mark and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except (psutil.Error, OSError):
            pass
    return found


def none_left(mark: str, within: float = 15.0) -> None:
    """Every process of the run is gone (within a few seconds: a killed group takes a moment)."""
    end = time.monotonic() + within
    while marked(mark) and time.monotonic() < end:
        time.sleep(0.2)
    left = marked(mark)
    for p in left:
        p.kill()
    assert not left, [" ".join(p.cmdline())[-80:] for p in left]


PEAK = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=open('peak.txt', 'w')); sys.exit(code)")


def attnsvm(*args, cwd: Path, timeout: float = 600, shell: str | None = None,
            peak: bool = False) -> subprocess.CompletedProcess:
    """The command run to its end (or `shell`, a bash line where ATTNSVM stands for it); asserts
    it left no process behind. `peak`: its largest resident set (KiB, any of its processes)
    is written to cwd/peak.txt."""
    mark = uuid.uuid4().hex
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ATTNSVM_TEST_MARK": mark}
    command = [sys.executable, "-m", "attnsvm", *map(str, args)]
    if shell is not None:
        command = ["bash", "-c", shell.replace("ATTNSVM", " ".join(map(_quote, command)))]
    if peak:
        command = [sys.executable, "-c", PEAK, *command]
    r = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    none_left(mark)
    return r


def _quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


def one_error(r: subprocess.CompletedProcess, *words: str) -> None:
    """Exit 2 with a single `error:` line naming `words`, and no traceback."""
    shown = r.stdout + r.stderr
    assert r.returncode == 2 and r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, shown
    assert "Traceback" not in shown and all(w in r.stderr for w in words), shown


def write(path: Path, obj) -> Path:
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return path


# ---------------------------------------------------------------- files: regular, bounded, strict JSON

@pytest.mark.parametrize("command", [["analyze", "{fifo}"], ["replay", "{fifo}"],
                                     ["blueprint", "--reports", "{fifo}", "--out", "site"],
                                     ["analyze", "/dev/zero"], ["run", "."]],
                         ids=["analyze-fifo", "replay-fifo", "blueprint-fifo", "device", "directory"])
def test_only_regular_files_are_read(tmp_path, command):
    """A FIFO is refused without blocking, a device without being read, a directory by name."""
    os.mkfifo(tmp_path / "fifo")
    start = time.monotonic()
    r = attnsvm(*[a.format(fifo=tmp_path / "fifo") for a in command], cwd=tmp_path, timeout=120)
    one_error(r, "not a regular file")
    assert time.monotonic() - start < 120 and not (tmp_path / "site").exists()


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(300 * 2**20)                     # sparse: 300 MiB of size, no disk
    one_error(attnsvm("analyze", big, cwd=tmp_path, peak=True), "over the 256 MiB limit")
    assert int((tmp_path / "peak.txt").read_text()) < 250 * 2**10            # KiB: never read


@pytest.mark.parametrize("command, entry, words", [
    # past int-string limit
    ("analyze", "1" * 5000, "at most 4300 digits"), ("run", "1" * 5000, "at most 4300 digits"),
    ("analyze", '"1e999999999"', "beyond the exact numbers"), ("run", '"1e-999999999"', "beyond the exact numbers"),
    ("analyze", '"1/' + "7" * 5000 + '"', "beyond the exact numbers"), ("analyze", "NaN", "strict JSON"),
    ("analyze", "1e999", "overflows float64")],
    ids=["long-int", "long-int-run", "huge-exponent", "tiny-exponent-run", "long-denominator", "nan", "overflow"])
def test_numbers_are_bounded_before_they_are_built(tmp_path, command, entry, words):
    text = json.dumps(TIGHT).replace("[[[1, 0]", f"[[[{entry}, 0]", 1)
    start = time.monotonic()
    one_error(attnsvm(command, write(tmp_path / "d.json", text), cwd=tmp_path, timeout=120), words)
    assert time.monotonic() - start < 120


@pytest.mark.parametrize("text, words", [
    (json.dumps({**TIGHT, "name": "\ud800"}), "lone surrogate"),
    (json.dumps(TIGHT)[:-1] + ', "Y": [1, -1]}', "duplicate key 'Y'"),
    (json.dumps({**TIGHT, "name": "n" * 10**6}), "at most 200 characters")],
    ids=["surrogate", "duplicate-key", "megabyte-name"])
def test_malformed_datasets_are_one_line(tmp_path, text, words):
    r = attnsvm("analyze", write(tmp_path / "d.json", text), cwd=tmp_path)
    one_error(r, words)
    assert len(r.stderr) < 2500


def test_names_reach_the_terminal_escaped(tmp_path):
    r = attnsvm("analyze", write(tmp_path / "d.json", {**TIGHT, "name": "evil\x1b[2J\x00\x9b\u2028"}), cwd=tmp_path)
    assert r.returncode == 0 and "evil\\x1b[2J\\x00\\x9b\\u2028" in r.stdout, r.stdout + r.stderr
    assert not any(c in r.stdout + r.stderr for c in "\x1b\x00\x9b\u2028")


@pytest.mark.parametrize("command", [["analyze", "d.json", "--json", "d.json"], ["run", "d.json", "--json", "./d.json"],
                                     ["replay", "w.json", "--json", "w.json"]], ids=["analyze", "run", "replay"])
def test_an_output_onto_an_input_is_refused_and_the_input_kept(tmp_path, command):
    write(tmp_path / "d.json", TIGHT)
    (tmp_path / "w.json").write_bytes((WITNESSES / "lemma2--common_label.json").read_bytes())
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    one_error(attnsvm(*command, cwd=tmp_path), "is an input of this command")
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_a_report_nested_deeper_than_any_report_writes_nothing(tmp_path):
    head = '{"reports": [{"id": "lemma2", "part": "check", "verdict": "SUPPORTED", "expected": [], "evidence": '
    (tmp_path / "r.json").write_text(head + "[" * 950 + "]" * 950 + "}]}")     # text: no deep recursion in the test
    one_error(attnsvm("blueprint", "--reports", tmp_path / "r.json", "--out", "site", cwd=tmp_path),
              "nested too deeply")
    assert not (tmp_path / "site").exists()


# ---------------------------------------------------------------- exact answers at any scale

@pytest.mark.parametrize("entry", [1e200, 1e154, 1e308, -1e308, "1/" + "7" * 4000],
                         ids=["1e200", "1e154", "1e308", "-1e308", "4000-digit-denominator"])
def test_mixed_scale_data_are_decided_exactly(tmp_path, entry):
    """Appendix E's tightness data with one entry far from the others' scale: the GMM is feasible
    (exactly: an exact solve decides where float64 cannot hold both scales) and the LMM set is
    exact, as on the plain data."""
    data = json.loads(json.dumps(TIGHT))
    data["X"][0][0][0 if not isinstance(entry, str) else 1] = entry
    r = attnsvm("analyze", write(tmp_path / "d.json", data), "--json", "a.json", cwd=tmp_path)
    res = json.loads((tmp_path / "a.json").read_text())
    g = res["gmm"]
    assert r.returncode == 0 and g["feasible"] is True and g["status"] == "optimal" and g["certified"], r.stdout
    assert res["lmm_set_exact"] and all(s["decision"] == "exact" for s in res["lmms"])


def test_a_scale_float64_cannot_show_is_refused_never_called_infeasible(tmp_path):
    data = json.loads(json.dumps(TIGHT))
    data["X"][0][0][0] = "1e-400"              # p_mm's first entry is 1e400: decided, but not a float64
    one_error(attnsvm("analyze", write(tmp_path / "d.json", data), cwd=tmp_path), "not representable in float64")


# ---------------------------------------------------------------- witnesses: schema, parameters, bounds

def _edited(tmp_path: Path, name: str, edit) -> Path:
    w = json.loads((WITNESSES / name).read_text())
    edit(w)
    text = json.dumps(w).replace('"seed": -1', '"seed": 1' + "0" * 5000)       # past what json.dumps would write
    return write(tmp_path / "w.json", text)


@pytest.mark.parametrize("name, edit, words", [
    ("theorem2--assumption_B.json", lambda w: w["instance"]["params"].update(eta_factor=None), "'eta_factor' must be"),
    ("theorem2-tightness--hand.json", lambda w: w["instance"]["params"].update(eta_factor="x"), "'eta_factor' must be"),
    ("example-attsvm-prime-nonconvex--hand.json", lambda w: w["instance"]["params"].update(sets=None),
     "'sets' must be"),
    ("theorem2--assumption_B.json", lambda w: w["instance"]["params"].update(rule="nope"), "'rule' must be one of"),
    ("theorem2--assumption_B.json", lambda w: w.update(budget={"name": "x", "evaluations": 10, "seconds": None,
                                                               "min_instances": 1, "horizon": 1e12, "limit": 100}),
     "budget.horizon must be"),
    ("theorem2--assumption_B.json", lambda w: w.update(seed=-1), "at most 4300 digits"),
    ("theorem2--assumption_B.json", lambda w: w.update(claim="lemma1"), "disagrees with source")],
    ids=["null-parameter", "string-parameter", "null-sets", "unknown-rule", "horizon-1e12", "huge-seed",
         "claim-source"])
def test_an_edited_witness_is_refused_before_its_values_reach_claim_code(tmp_path, name, edit, words):
    if not (WITNESSES / name).exists():
        pytest.fail(f"shipped witness {name} is gone: pick another of its result")
    one_error(attnsvm("replay", _edited(tmp_path, name, edit), cwd=tmp_path), words)


# ---------------------------------------------------------------- costs refused up front, time-bounded work

def test_a_dataset_over_the_memory_estimate_is_refused_before_it_is_built(tmp_path):
    d = 3000                                            # a stored d x d W: 9M exact entries, ~5 GiB
    text = json.dumps({"X": [[[0] * d, [1] + [0] * (d - 1)]], "Y": [1], "v": [1] + [0] * (d - 1),
                       "W": [[0] * d for _ in range(d)]})
    start = time.monotonic()
    one_error(attnsvm("analyze", write(tmp_path / "d.json", text), cwd=tmp_path, peak=True), "GiB of memory",
              "--allow-large")
    assert time.monotonic() - start < 120 and int((tmp_path / "peak.txt").read_text()) < 1536 * 2**10   # KiB


@pytest.mark.parametrize("steps, words", [(10**8, "entry-steps of work"), (10**9, "--steps")], ids=["work", "range"])
def test_run_steps_are_bounded(tmp_path, steps, words):
    one_error(attnsvm("run", write(tmp_path / "d.json", TIGHT), "--steps", steps, cwd=tmp_path), words)


def test_run_bounds_its_lmm_enumeration_in_time(tmp_path):
    """n = 12, T = 3: 3^12 selections, sampled and stopped by --seconds, and the report says so."""
    import numpy as np

    rng = np.random.default_rng(0)
    data = {"X": rng.integers(-3, 4, size=(12, 3, 2)).tolist(), "Y": [1] * 12, "v": [1, -1]}
    start = time.monotonic()
    r = attnsvm("run", write(tmp_path / "d.json", data), "--steps", 10, "--seconds", 1, "--json", "r.json",
                cwd=tmp_path)
    assert r.returncode == 0 and time.monotonic() - start < 300, r.stdout + r.stderr
    res = json.loads((tmp_path / "r.json").read_text())
    assert not res["lmm_set_exact"] and "time limit" in res["lmm_search"]


def test_option_lists_parse_in_linear_time(tmp_path):
    start = time.monotonic()
    r = attnsvm("reproduce", "fig9", "--d", "1:100000", "--out", "o", cwd=tmp_path, timeout=120)
    one_error(r, "problem too large")                   # after 10^5 values are parsed and checked for repeats
    assert time.monotonic() - start < 60 and not (tmp_path / "o").exists()


# ---------------------------------------------------------------- claim code that exits, forks, blocks

BASE = '''
from attnsvm.claims import Claim, Outcome
from attnsvm.claims.strategies import instances, integer_datasets
space = lambda dropped: instances(integer_datasets(n=1, T=2, d=1))
'''
HOLDS = BASE + 'ok = Claim("ok", "true", (), lambda i, b: Outcome(True), space, evaluations=20)\n'
HOSTILE = {
    "exit-at-import": "import os\nos._exit(0)\n",
    "stdout-none": "import sys\n" + HOLDS + "sys.stdout = None\n",
    "chdir-at-import": "import os\n" + HOLDS + "os.chdir('/')\n",
    "thread-at-import": ("import threading, time\n" + HOLDS
                         + "threading.Thread(target=time.sleep, args=(3600,)).start()\n"),
    "fork-at-import": "import os, time\n" + HOLDS + "if os.fork() == 0:\n    time.sleep(3600)\n",
    "thread-in-conclusion": "import threading, time\n" + BASE + (
        "def c(i, b):\n    threading.Thread(target=time.sleep, args=(3600,)).start()\n    return Outcome(True)\n"
        "ok = Claim('ok', 'x', (), c, space, evaluations=8)\n"),
    "interrupt-in-conclusion": BASE + (
        "def c(i, b):\n    raise KeyboardInterrupt\nok = Claim('ok', 'x', (), c, space, evaluations=8)\n"),
    "fork-in-conclusion": "import os, time\n" + BASE + (
        "def c(i, b):\n    if os.fork() == 0:\n        time.sleep(3600)\n    return Outcome(True)\n"
        "ok = Claim('ok', 'x', (), c, space, evaluations=8)\n"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_claim_code_ends_as_its_own_row_and_leaves_nothing_running(tmp_path, kind):
    """The file's code runs only in workers: its rows come back, the --json lands where it was
    asked (a chdir there moves nothing here), a process that ends itself is a ProcessLost row,
    and whatever it started is killed with its worker's group."""
    write(tmp_path / "mine.py", HOSTILE[kind])
    r = attnsvm("check", "mine.py", "--json", "out.json", cwd=tmp_path)
    rows = json.loads((tmp_path / "out.json").read_text())["reports"]
    assert "Traceback" not in r.stdout + r.stderr, r.stdout + r.stderr
    if kind == "exit-at-import":
        assert r.returncode == 1 and rows[0]["part"] == "load" and rows[0]["error"]["type"] == "ProcessLost"
    elif kind == "interrupt-in-conclusion":                  # its own row, not the user's Ctrl-C
        assert r.returncode == 1 and rows[0]["error"]["type"] == "KeyboardInterrupt", r.stdout + r.stderr
    else:
        assert r.returncode in (0, 1) and [x["id"] for x in rows] == ["mine.py:ok"], r.stdout + r.stderr
        assert rows[0]["error"] is None and rows[0]["verdict"] in ("SUPPORTED", "INCONCLUSIVE")


def test_supervisor_kills_code_no_signal_stops_at_the_limit(tmp_path):
    """Code stuck in C, deaf to SIGALRM, or leaving threads and forks: each call ends as a Runaway
    row at its limit (+ grace), and every process it made goes with its group."""
    from attnsvm.claims import supervise

    grace, supervise.GRACE = supervise.GRACE, 1.0
    try:
        pool = supervise.Supervisor(3, lambda *a: 1.0, lambda *a: a[-3:])
        start = time.monotonic()
        futures = [pool.submit(fn, str(tmp_path / fn.__name__)) for fn in (_c_loop, _deaf_sleep, _forks_and_blocks)]
        rows = [f.result(timeout=120) for f in futures]
        pool.shutdown()
    finally:
        supervise.GRACE = grace
    assert all(r[:2] == ("clock", "Runaway") for r in rows), rows
    assert time.monotonic() - start < 60
    pids = [int(x) for f in tmp_path.iterdir() for x in f.read_text().split()]
    assert len(pids) == 4                                  # three workers and one fork
    end = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < end:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _note(path: str) -> None:
    with open(path, "a") as f:
        f.write(f"{os.getpid()}\n")


def _c_loop(path: str):
    _note(path)
    return sum(range(10**13))


def _deaf_sleep(path: str):
    _note(path)
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    signal.setitimer(signal.ITIMER_REAL, 0.1)
    time.sleep(3600)


def _forks_and_blocks(path: str):
    import threading

    _note(path)
    threading.Thread(target=time.sleep, args=(3600,)).start()
    if os.fork() == 0:
        _note(path)
    time.sleep(3600)


# ---------------------------------------------------------------- killed runs leave nothing

SLOW = BASE + '''
import time
def slow(i, b):
    time.sleep(0.5)
    return Outcome(True)
a = Claim("a", "x", (), slow, space, evaluations=400)
b = Claim("b", "x", (), slow, space, evaluations=400)
'''


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL, signal.SIGINT], ids=["TERM", "KILL", "INT"])
@pytest.mark.parametrize("command, running", [
    # the command, resource tracker, fork server, 2 workers
    (["check", "mine.py", "--workers", "2"], 5),
    (["reproduce", "fig9", "--n", "3", "--T", "4", "--d", "4:60", "--trials", "2000", "--steps", "20000",
      "--workers", "2", "--out", "o"], 3)], ids=["check", "fig9"])   # the command and 2 workers forked from it
def test_a_killed_run_leaves_no_process(tmp_path, command, running, sig):
    write(tmp_path / "mine.py", SLOW)
    mark = uuid.uuid4().hex
    proc = subprocess.Popen([sys.executable, "-m", "attnsvm", *command], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "ATTNSVM_TEST_MARK": mark})
    end = time.monotonic() + 300
    while len(marked(mark)) < running and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.2)
    assert proc.poll() is None, proc.stderr.read()
    time.sleep(1)
    os.kill(proc.pid, sig)
    code = proc.wait(timeout=120)
    assert code in (130, 143, -signal.SIGKILL), code
    assert b"Traceback" not in proc.stderr.read()
    none_left(mark, within=10)


# ---------------------------------------------------------------- the terminal: closed or full output

@pytest.mark.parametrize("shell", ["ATTNSVM analyze d.json >&-", "ATTNSVM list > /dev/full"], ids=["closed", "full"])
def test_output_that_cannot_be_written_is_one_error_line(tmp_path, shell):
    write(tmp_path / "d.json", TIGHT)
    one_error(attnsvm(cwd=tmp_path, shell=shell), "cannot write the output")


# ---------------------------------------------------------------- printed commands and names

REFUTED = (BASE.replace("d=1", "d=(1, 2)")
           + 'wide = Claim("wide", "x", (), lambda i, b: Outcome(i.dataset.d >= 2), space)\n')


def test_a_printed_command_replays_as_printed_and_names_are_escaped(tmp_path):
    """A claims file named like a shell injection, with ESC in it: the replay command that
    `counterexample` prints is one shell word per argument (pasting it replays the witness and
    runs nothing else) and no raw control character reaches the terminal."""
    name = "my claims$(touch X)\x1b[31m.py"
    write(tmp_path / name, REFUTED)
    r = attnsvm("counterexample", name, "--out", "w it.json", cwd=tmp_path)
    assert r.returncode == 0 and "\x1b" not in r.stdout + r.stderr, r.stdout + r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("witness written"))
    printed = line[line.index("(replay: ") + len("(replay: "):-1]
    r = attnsvm(cwd=tmp_path, shell=printed.replace("attnsvm", "ATTNSVM", 1))
    assert r.returncode == 0 and "REFUTED" in r.stdout and not (tmp_path / "X").exists(), r.stdout + r.stderr
