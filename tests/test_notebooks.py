"""`attnsvm reproduce tfsvm-rank | tfsvm-local | tfsvm-multitoken | tfsvm-paths` in the settings of
the Transformers-as-SVMs notebooks (issue 23): their generators draw for draw (values computed by
running the notebooks' own `data_generator` functions here, on the CPU), the rank-1-for-infeasible
artefact under `--conventions authors` and not by default, exact ranks, and each figure's
verdicts on a small run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnsvm.interfaces.executors import Inline
from attnsvm.interfaces.sweeps import notebooks, tfsvm_multitoken, tfsvm_paths, tfsvm_rank

from cli_run import run


def verdicts(summary: dict) -> list[str]:
    return [c.verdict for c in summary["checks"]]


# ---------------------------------------------------------------- the notebooks' generators

def test_rank_and_local_generator_draws_as_the_notebook():
    """svm_rank.ipynb / local_converge.ipynb `data_generator(0)` at n = T = 5, d = 3 (float32 draws,
    converted to float64 after normalising, as the notebook does)."""
    x = notebooks.rank_data(0, 5, 5, 3)
    np.testing.assert_array_equal(x.X[0, 0], [-0.6033015251159668, -0.7564078569412231, 0.2527337074279785])
    np.testing.assert_array_equal(x.Y, [1, -1, -1, 1, 1])
    np.testing.assert_array_equal(x.Z[0], [0.6945821046829224, -0.41329225897789, -0.588850736618042])
    np.testing.assert_array_equal(x.v, [0.5739808678627014, -0.10929460823535919, -0.8115422129631042])
    np.testing.assert_array_equal(x.best, [1, 1, 3, 3, 0])
    assert x.X.dtype == np.float64 and np.all(x.X == x.X.astype(np.float32))      # float32 values
    np.testing.assert_allclose(np.linalg.norm(x.X, axis=-1), 1, atol=1e-6)


def test_multitoken_generator_draws_as_the_notebook():
    """multi_token_converge.ipynb `data_generator(1, mode='relu')` at n = 3, T = 4, d = 4."""
    x = notebooks.multitoken_data(1, 3, 4, 4)
    np.testing.assert_array_equal(x.X[0, 0], [-0.45348572731018066, -0.7552504539489746, 0.4551578760147095,
                                              0.12953263521194458])
    np.testing.assert_array_equal(x.Y, [1, -1, 1])
    np.testing.assert_array_equal(x.Z[0], [-0.1162392869591713, 0.6984092593193054, -0.2081802487373352,
                                           -0.674813985824585])
    np.testing.assert_array_equal(x.v[0], [-0.40382617712020874, -0.1985868215560913, -0.17310914397239685,
                                           -0.42603161931037903])
    np.testing.assert_array_equal(x.best, [0, 0, 0])


def test_picture_generators_draw_as_the_notebooks():
    one, two = notebooks.picture_data("visualization1"), notebooks.picture_data("visualization2")
    np.testing.assert_array_equal(one.X[1], [[0.6917173862457275, -0.16891583800315857],
                                             [0.732312798500061, -0.017475053668022156],
                                             [0.9413471221923828, -0.2896907925605774]])
    np.testing.assert_array_equal(one.Z, [[0.8450113534927368, 0.534748375415802],
                                          [-0.6362639665603638, -0.771471381187439]])
    np.testing.assert_array_equal(one.best, [0, 2])
    np.testing.assert_array_equal(two.X[0, :2], [[1.0, 0.5], [-0.1897246241569519, -0.7983540296554565]])
    np.testing.assert_array_equal(two.v, [0.9771237969398499, 0.2126714289188385])
    np.testing.assert_array_equal(two.best, [0, 0])


def test_matrix_rank_of_an_infeasible_value_is_one():
    """The notebook's rank of an infeasible instance (cvxpy leaves W.value None)."""
    assert notebooks.matrix_rank(None) == 1
    assert notebooks.matrix_rank(np.diag([1.0, 1e-8])) == 1 and notebooks.matrix_rank(np.eye(3)) == 3


# ---------------------------------------------------------------- tfsvm-rank

def test_rank_grid_is_the_notebook_loop():
    s = tfsvm_rank.Settings()
    assert s.pairs() == [(5, 5), (10, 5), (15, 5), (5, 10), (5, 15)]
    assert (s.dims, s.trials) == ((1, 2, 3, 4, 5, 10, 15, 20), 100)
    assert len(tfsvm_rank.Settings(grid="product").pairs()) == 9


@pytest.fixture(scope="module")
def rank_runs(tmp_path_factory):
    """n = T = 5, d = 2 (seeds 0-3: 3 infeasible) and d = 6 (feasible), both conventions."""
    out = {}
    for conv in ("default", "authors"):
        s = tfsvm_rank.Settings(ns=(5,), Ts=(5,), dims=(2, 6), trials=4, conventions=conv)
        out[conv] = tfsvm_rank.sweep(s, tmp_path_factory.mktemp(conv), Inline())
    return out


def test_infeasible_counted_as_rank_one_only_under_the_authors_conventions(rank_runs):
    (summary, records), (asum, arecs) = rank_runs["default"], rank_runs["authors"]
    infeasible = [r for r in records if r["status"] == "infeasible"]
    assert infeasible and all(r["certified"] and r["rank_fro"] is None for r in infeasible)
    row = next(r for r in summary["table"] if r["d"] == 2)
    assert row["infeasible"] == len(infeasible) and row["feasible"] + row["infeasible"] == 4
    assert row["mean_rank_fro"] == np.mean([r["rank_fro"] for r in records if r["d"] == 2 and r["status"] == "optimal"])
    theirs = [r for r in arecs if r["reference"]["status"] == "infeasible"]
    assert [r["seed"] for r in theirs] == [r["seed"] for r in infeasible]
    assert all(r["rank_fro"] == 1 and r["rank_nuc"] == 1 and r["status"] == "infeasible" for r in theirs)
    arow = next(r for r in asum["table"] if r["d"] == 2)
    assert arow["published_rank_fro"] == np.mean([r["rank_fro"] for r in arecs if r["d"] == 2])
    assert asum["artefacts"]["infeasible_counted_as_rank_1"] == len(theirs)


def test_default_ranks_are_exact_and_the_nuclear_gap_is_shown(rank_runs):
    summary, records = rank_runs["default"]
    feas = [r for r in records if r["status"] == "optimal"]
    assert feas and all(r["certified"] and r["rank_fro"] <= min(r["n"], r["d"]) for r in feas)
    assert all(r["nuc_clear"] and r["nuc_kept"] >= 1e-4 for r in feas)
    gap = summary["nuclear_gap"]
    assert gap["unclear"] == 0 and (gap["largest_dropped"] is None or gap["largest_dropped"] < 1e-8)
    assert verdicts(summary) == ["SUPPORTED", "SUPPORTED", "SUPPORTED"]


def test_exact_rank_sees_a_rank_deficient_solution():
    """A W_mm whose rank is below the bound min(d, inputs with an active row): the modular rank
    does not reach the bound, so the integer rank decides."""
    from attnsvm.svm.certificates import Certificate

    tags = ((0, 1), (1, 1))
    cert = Certificate("kkt", True, xnum=(1, 2, 2, 4), xden=3, active=(0, 1))
    assert tfsvm_rank.exact_rank(cert, 2, tags) == 1
    cert = Certificate("kkt", True, xnum=(1, 2, 3, 4), xden=3, active=(0, 1))
    assert tfsvm_rank.exact_rank(cert, 2, tags) == 2


def test_tolerance_rank_reports_its_gap():
    t = tfsvm_rank.tolerance_rank(np.diag([2.0, 1.0, 1e-12]), 1e-6)
    assert (t["rank"], t["kept"], t["dropped"], t["clear"]) == (2, 0.5, 5e-13, True)
    assert not tfsvm_rank.tolerance_rank(np.diag([1.0, 1e-5]), 1e-6)["clear"]


# ---------------------------------------------------------------- tfsvm-local

def test_local_runs_on_the_notebook_data_with_random_queries():
    from attnsvm.interfaces.sweeps import tfsvm_local as L

    s = L.Settings()
    X, Y, Z, v, *_ = L.instance(s, 3)
    x = notebooks.rank_data(3, 6, 8, 10)
    np.testing.assert_array_equal(X, x.X)
    np.testing.assert_array_equal(Z, x.Z)
    assert not np.array_equal(Z, X[:, 0])
    X, _, Z, *_ = L.instance(L.Settings(attention="self"), 3)
    np.testing.assert_array_equal(Z, X[:, 0])
    assert L.preset("authors").solver == "authors"


def test_local_authors_conventions_small_run(tmp_path):
    from attnsvm.interfaces.sweeps import tfsvm_local as L

    s = L.preset("authors", n=3, T=3, d=3, runs=4, steps=2000, shard_size=4)
    summary, records = L.sweep(s, tmp_path, Inline())
    assert {r["W"]["fro_status"] for r in records} == {"optimal"}
    assert len(summary["mean_curves"]["W:softmax"]) == len(summary["steps"])
    assert summary["mean_curves"]["W:softmax"][-1] > 0.99
    assert verdicts(summary) == ["SUPPORTED", "SUPPORTED"]


# ---------------------------------------------------------------- tfsvm-multitoken

@pytest.fixture(scope="module")
def multitoken(tmp_path_factory):
    s = tfsvm_multitoken.Settings(dims=(4,), trials=24, shard_size=24)
    return tfsvm_multitoken.sweep(s, tmp_path_factory.mktemp("mt"), Inline())


def test_multitoken_applies_the_notebook_rules(multitoken):
    summary, records = multitoken
    row = summary["table"][0]
    assert sum(row[k] for k in tfsvm_multitoken.STATES) == 24
    for r in records:
        x = notebooks.multitoken_data(r["seed"], 3, 4, 4)
        assert (r["state"] == "no-negative-label") == (not (x.Y == -1).any())
        if r["state"] == "kept":
            assert r["masked_max"] <= 1e-6 and all(r["sets"])
            assert len(r["corr_svmeq"]) == len(summary["steps"]) == 22          # every 100 steps and 2001
    assert row["multi_token"] > 0


def test_multitoken_verdicts_on_a_small_run(multitoken):
    summary, _ = multitoken
    assert verdicts(summary) == ["INCONCLUSIVE", "INCONCLUSIVE", "SUPPORTED", "INCONCLUSIVE"]


def test_multitoken_svm_equivalence_reproduces_the_iterate():
    """W^SVMeq = W_fin + R W^mm with W_fin the projection of W on the within-set rows: exact on a
    W built from the two parts, and W^mm solves the generalized SVM (mask margins >= 1)."""
    s = tfsvm_multitoken.Settings()
    x = notebooks.multitoken_data(5, 3, 4, 4)
    soft = np.array([[0.6, 0.4, 1e-9, 1e-9], [1 - 2e-9, 1e-9, 1e-9, 1e-12], [0.5, 1e-10, 0.5, 1e-10]])
    w = np.random.default_rng(0).standard_normal(16)
    dirs = tfsvm_multitoken.directions(s, x, soft, w)
    W = dirs["mm"].reshape(4, 4)
    for i, O in enumerate(([0, 1], [0], [0, 2])):
        for o in O:
            for t in set(range(4)) - set(O):
                assert (x.X[i, o] - x.X[i, t]) @ W @ x.Z[i] >= 1 - 1e-9
    target = 3.0 * dirs["mm"] + (dirs["svmeq"] - (dirs["svmeq"] @ dirs["mm"]) / (dirs["mm"] @ dirs["mm"]) * dirs["mm"])
    again = tfsvm_multitoken.directions(s, x, soft, target)
    np.testing.assert_allclose(again["svmeq"], target, atol=1e-9)


# ---------------------------------------------------------------- tfsvm-paths

def test_paths_verdicts_on_a_short_run(tmp_path):
    summary, results = tfsvm_paths.sweep(tfsvm_paths.Settings(steps=1000, starts=2), tmp_path, Inline(), draw=False)
    assert verdicts(summary) == ["SUPPORTED", "SUPPORTED", "SUPPORTED"]
    assert [r["best"] for r in results] == [[0, 2], [0, 0]]
    assert all(0.85 < p["corr(W_mm, W*_mm)"] < 0.95 for p in summary["pictures"])
    short, _ = tfsvm_paths.sweep(tfsvm_paths.Settings(steps=100, starts=2), tmp_path / "short", Inline(), draw=False)
    assert verdicts(short)[:2] == ["INCONCLUSIVE", "INCONCLUSIVE"]


# ---------------------------------------------------------------- the command line

@pytest.mark.parametrize("args, message", [
    (["tfsvm-rank", "--grid", "diagonal"], "--grid must be cross or product, got 'diagonal'"),
    (["tfsvm-rank", "--attention", "both"], "--attention must be cross or self"),
    (["tfsvm-rank", "--conventions", "notebook"], "unknown conventions 'notebook'; choose from default, authors"),
    (["tfsvm-rank", "--T", "1,5"], "--T must be at least 2, got 1"),
    (["tfsvm-local", "--attention", "x"], "--attention must be cross or self"),
    (["tfsvm-multitoken", "--T", "1"], "--T must be at least 2"),
    (["tfsvm-multitoken", "--every", "5000"], "need --every <= --steps, got --every 5000, --steps 2001"),
    (["tfsvm-paths", "--steps", "1"], "--steps must be at least 2"),
    (["tfsvm-paths", "--conventions", "x"], "unknown conventions"),
])
def test_cli_user_errors(monkeypatch, capsys, tmp_path, args, message):
    code, _, err = run(monkeypatch, capsys, "reproduce", *args, "--out", tmp_path / "o")
    assert code == 2 and err.startswith("error: ") and message in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def test_cli_paths_writes_strict_json_and_png(monkeypatch, capsys, tmp_path):
    code, _, err = run(monkeypatch, capsys, "reproduce", "tfsvm-paths", "--steps", "200", "--starts", "1",
                       "--out", tmp_path / "o", "--json", tmp_path / "p.json")
    assert code == 0, err
    data = json.loads((tmp_path / "p.json").read_text(), parse_constant=lambda c: pytest.fail(f"non-strict {c}"))
    assert len(data["checks"]) == 3 and (tmp_path / "o" / "tfsvm_paths.png").stat().st_size > 0
