"""Scale-out on Dask (the `dask` extra): on a Dask scheduler, `reproduce` writes the records of
a local run with the same seed and `check` fans claims out with the verdicts and evidence of a
local run; `--executor dask` starts a local cluster and closes it after."""

from __future__ import annotations

import json

import pytest

from attnsvm.errors import UserError
from attnsvm.interfaces import executors

from cli_run import run

FIG9 = ["reproduce", "fig9", "--n", "2", "--T", "3", "--d", "2,3", "--trials", "6", "--steps", "200",
        "--shard-size", "3", "--seed", "5"]
CLAIMS = '''
from attnsvm.claims import Claim, Outcome
from attnsvm.claims.strategies import instances, integer_datasets

space = lambda dropped: instances(integer_datasets(n=(1, 2), T=2, d=(1, 2), lo=-1, hi=1))
tokens = Claim("tokens", "T >= 2", (), lambda i, b: Outcome(i.dataset.T >= 2), space)
wide = Claim("wide", "d >= 2", (), lambda i, b: Outcome(i.dataset.d >= 2), space)
few = Claim("few", "n <= 1", (), lambda i, b: Outcome(i.dataset.n <= 1), space, expected=("REFUTED",))
'''


@pytest.fixture(scope="module")
def scheduler():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


def test_a_sweep_on_a_dask_scheduler_writes_the_records_of_a_local_run(monkeypatch, capsys, tmp_path, scheduler):
    code, _, _ = run(monkeypatch, capsys, *FIG9, "--out", tmp_path / "local", "--workers", "1")
    assert code in (0, None)
    code, out, _ = run(monkeypatch, capsys, *FIG9, "--out", tmp_path / "dask", "--executor", scheduler,
                       "--workers", "2")
    assert code in (0, None), out
    local, dask = (json.loads((tmp_path / d / "fig9_runs.json").read_text()) for d in ("local", "dask"))
    assert dask == local and len(local) == 12


def test_check_fans_claims_out_on_a_dask_scheduler(monkeypatch, capsys, tmp_path, scheduler):
    f = tmp_path / "mine.py"
    f.write_text(CLAIMS)
    code_l, _, _ = run(monkeypatch, capsys, "check", f, "--workers", "1", "--json", tmp_path / "l.json",
                       "--witnesses", tmp_path / "w")
    code_d, _, _ = run(monkeypatch, capsys, "check", f, "--executor", scheduler, "--json", tmp_path / "d.json",
                       "--witnesses", tmp_path / "w")
    local, dask = (json.loads((tmp_path / j).read_text())["reports"] for j in ("l.json", "d.json"))
    assert code_l == code_d == 1                                    # `wide` is refuted and expects nothing: exit 1
    assert [(r["id"].split(":")[1], r["verdict"]) for r in dask] \
        == [(r["id"].split(":")[1], r["verdict"]) for r in local] \
        == [("tokens", "SUPPORTED"), ("wide", "REFUTED"), ("few", "REFUTED")]
    for a, b in zip(local[1:], dask[1:]):      # the same minimized witness (how many instances a search
        assert a["witness"] == b["witness"] and a["witness"]      # evaluates within its seconds is timed)


def test_executor_dask_starts_a_local_cluster_and_closes_it():
    pool = executors.pool("dask", 1)
    futures = {k: pool.submit(pow, k, 2) for k in range(4)}
    got = {k: f.result() for k, f in executors.completed(futures)}
    pool.shutdown()
    assert got == {0: 0, 1: 1, 2: 4, 3: 9} and pool.cluster.status.name == "closed"


def test_an_unreachable_scheduler_or_unknown_executor_is_a_one_line_error(monkeypatch, capsys):
    with pytest.raises(UserError, match="expected local, dask or a Dask scheduler address"):
        executors.pool("ray", 2)
    code, _, err = run(monkeypatch, capsys, "check", "lemma2", "--executor", "tcp://127.0.0.1:9", "--workers", "2")
    assert code == 2 and "cannot reach a Dask scheduler" in err and err.count("\n") == 1
