"""attnsvm.interfaces.sweeps: Figure-9 classification against exhaustive Definition-2 geometry, resumable
shards, batched vs one-at-a-time reference, statistics behind the verdicts, CLI errors."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from attnsvm.attention import fused
from attnsvm.attention.data import Dataset
from attnsvm.errors import UserError
from attnsvm.interfaces.executors import Inline as InlineExecutor
from attnsvm.interfaces.sweeps import fig9, stats
from attnsvm.interfaces.sweeps.shards import Shard, open_store, run_shards
from attnsvm.svm import classify, geometry

ROOT = Path(__file__).resolve().parents[1]
TINY = fig9.Settings(n=2, T=3, dims=(2, 3), trials=8, steps=300, shard_size=4, seed=3)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig9")
    summary, records = fig9.sweep(TINY, out, InlineExecutor())
    return out, summary, records


def test_classes_match_exhaustive_geometry(tiny):
    """Every saturated run: its tokens are an LMM iff exhaustive enumeration (all T^n token
    choices, exact certificates) lists them as locally optimal; GMM iff they are geometry.gmm."""
    _, _, records = tiny
    saturated = 0
    for r in records:
        X, Y, v, _ = fig9.instance(TINY.seed, r["d"], r["trial"], TINY.n, TINY.T, TINY.init_scale)
        ds = Dataset.from_arrays(X, Y, v)
        if r["cls"] == "non-saturated":
            assert r["unsat"] > TINY.sat_tol
            continue
        saturated += 1
        alpha = tuple(r["alpha"])
        local = {s.alpha for s in geometry.lmms(ds)}
        assert geometry.exhaustive(ds)
        assert (r["cls"] in ("lmm", "gmm")) == (alpha in local)
        g = geometry.gmm(ds)
        assert (r["cls"] == "gmm") == (g.feasible and g.alpha == alpha)
        sel = geometry.select(ds, alpha)
        assert sel.certified and r["gap"] == pytest.approx(sel.score_gap, abs=1e-12)
    assert saturated >= len(records) // 2


def _classified(s, d, trials):
    X, Y, v, p0 = fig9.instances(s, d, trials)
    run = fig9.run_batch(X, Y, v, p0, s)
    sats = fig9.saturation(s, X, run.p, run.log_unsat)
    return run, fig9.classify(X, Y, v, run.p, run.selected, sats)


def test_exact_path_agrees_with_fast_path(monkeypatch):
    """Forcing every run through the exact path (grey band everywhere) changes nothing."""
    _, fast = _classified(TINY, 3, range(6))
    monkeypatch.setattr(classify, "NEAR_ACTIVE", 1e12)
    _, exact = _classified(TINY, 3, range(6))
    for f, e in zip(fast, exact):
        assert f["cls"] == e["cls"]
        if e["cls"] != "non-saturated":
            assert e["certified"] is True and f["certified"] is None
            assert f["gap"] == pytest.approx(e["gap"], abs=1e-12)


def test_sweep_outputs(tiny):
    out, summary, records = tiny
    assert len(records) == len(TINY.dims) * TINY.trials
    assert json.loads((out / "fig9.json").read_text())["per_d"] == json.loads(json.dumps(summary["per_d"]))
    assert (out / "fig9.png").stat().st_size > 10_000
    for row in summary["per_d"]:
        assert sum(row[c] for c in fig9.CLASSES) == row["trials"] == TINY.trials
    assert {c.verdict for c in summary["checks"]} <= {"SUPPORTED", "REFUTED", "INCONCLUSIVE"}


def _count_task(calls, fail_on=None):
    def task(shard):
        if shard.key == fail_on:
            raise KeyboardInterrupt
        calls.append(shard.key)
        return {"square": shard.params["x"] ** 2}
    return task


def test_interrupted_run_resumes_without_recomputing(tmp_path):
    shards = [Shard(f"s{x}", {"x": x}) for x in range(5)]
    store = open_store(tmp_path, {"what": "squares"}, "test")
    calls = []
    with pytest.raises(KeyboardInterrupt):
        run_shards(_count_task(calls, fail_on="s3"), shards, store, InlineExecutor())
    assert calls == ["s0", "s1", "s2"]
    files = sorted(p.name for p in (tmp_path / "shards").iterdir())
    assert files == ["s0.json", "s1.json", "s2.json"]           # finished shards kept, no temp files
    (tmp_path / "shards" / "s1.json").write_text('{"fingerprint": "')   # a torn file is redone
    calls.clear()
    res = run_shards(_count_task(calls), shards, open_store(tmp_path, {"what": "squares"}, "test"), InlineExecutor())
    assert calls == ["s1", "s3", "s4"]
    assert [r["square"] for r in res] == [0, 1, 4, 9, 16]
    calls.clear()
    run_shards(_count_task(calls), shards, store, InlineExecutor())
    assert calls == []


def test_store_refuses_other_settings(tmp_path):
    open_store(tmp_path, {"a": 1}, "x")
    with pytest.raises(UserError, match="other settings"):
        open_store(tmp_path, {"a": 2}, "x")


def test_fig9_rerun_reads_shards(tiny, monkeypatch):
    out, summary, records = tiny
    monkeypatch.setattr(fig9, "run_shard", lambda *a: pytest.fail("a finished shard was recomputed"))
    again, rec2 = fig9.sweep(TINY, out, InlineExecutor())
    assert rec2 == json.loads(json.dumps(records))


def test_batched_agrees_with_reference():
    """The one-trial-at-a-time reference (same gradient, torch optimizer, cvxpy) reaches the
    same p and the same class as the batched sweep on the same seeds."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import reference_fig9 as ref

    s = replace(TINY, n=4, T=5, dims=(4,), trials=3, steps=150)
    run, batched = _classified(s, 4, range(3))
    for t in range(3):
        r = ref.trial(s, 4, t)
        np.testing.assert_allclose(r["p"], run.p[t], rtol=1e-9, atol=1e-9)
        assert r["alpha"] == batched[t]["alpha"] and r["cls"] == batched[t]["cls"]


def test_trend_and_bound_checks():
    up = [(d, k, 1000) for d, k in zip(range(2, 17, 2), (50, 300, 600, 900, 980, 990, 995, 1000))]
    assert stats.trend_check("rises", up).verdict == "SUPPORTED"
    assert stats.trend_check("rises", [(x, 1000 - k, n) for x, k, n in up]).verdict == "REFUTED"
    dip = up[:3] + [(8, 100, 1000)] + up[4:]
    assert stats.trend_check("rises", dip).verdict == "REFUTED"
    assert stats.trend_check("rises", [(d, 0, 100) for d in (1, 2)]).verdict == "INCONCLUSIVE"
    assert stats.trend_check("rises", []).verdict == "INCONCLUSIVE"        # every run discarded
    assert stats.upper_bound_check("<1%", 0, 0, 0.01).verdict == "INCONCLUSIVE"
    assert stats.upper_bound_check("<1%", 2, 8000, 0.01).verdict == "SUPPORTED"
    assert stats.upper_bound_check("<1%", 300, 8000, 0.01).verdict == "REFUTED"
    assert stats.upper_bound_check("<1%", 80, 8000, 0.01).verdict == "INCONCLUSIVE"
    lo, hi = stats.wilson(5, 100)
    assert lo < 0.05 < hi


def _cli(*args, cwd, code="from attnsvm.interfaces.cli import main; main()"):
    """`attnsvm reproduce ARGS` in a subprocess running in `cwd` on this checkout's code."""
    return subprocess.run([sys.executable, "-c", code, "reproduce", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("args, message", [
    (["fig9", "--d", "2,x"], "--d: expected integers"),
    (["fig9", "--trials", "0"], "--trials must be a finite positive number"),
    (["fig9", "--loss", "hinge"], "unknown loss"),
    (["fig9", "--conventions", "notebook"], "unknown conventions"),
    (["fig9", "--conventions", "authors", "--sat-tol", "1e-9"], "saturation band"),
    (["tfsvm-rank", "--n", "0"], "--n: expected positive integers"),
])
def test_cli_user_errors(tmp_path, args, message):
    r = _cli(*args, "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith("error: ") and message in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_cli_refuses_to_mix_settings(tmp_path):
    assert _cli("fig9", "--n", "2", "--T", "3", "--d", "2", "--trials", "2", "--steps", "20", "--workers", "1",
                "--out", "o", cwd=tmp_path).returncode == 0
    r = _cli("fig9", "--n", "2", "--T", "3", "--d", "2", "--trials", "3", "--steps", "20", "--workers", "1",
             "--out", "o", cwd=tmp_path)
    assert r.returncode == 2 and "other settings" in r.stderr


def test_tfsvm_rank_tiny(tmp_path):
    """Every feasible W_mm has rank <= n (KKT form), the nuclear solution's rank never exceeds
    it here, and the W-SVM rows match the exact-row W-SVM of the core."""
    from attnsvm import svm
    from attnsvm.interfaces.sweeps import tfsvm_rank as R

    s = R.Settings(ns=(2,), Ts=(3,), dims=(1, 2, 4), trials=2)
    summary, records = R.sweep(s, tmp_path, InlineExecutor())
    feas = [r for r in records if r["rank_fro"] is not None]
    assert feas and all(r["rank_fro"] <= r["n"] for r in feas)
    assert all(r["status"] == "optimal" for r in records if r["d"] >= 2)
    assert summary["checks"][0].verdict == "SUPPORTED"
    rng = np.random.default_rng(0)
    X, Y, v = rng.standard_normal((2, 3, 3)), np.array([1.0, -1.0]), rng.standard_normal(3)
    a = svm.w_svm_arrays(X, X[:, 0], [0, 1])
    b = svm.w_svm(Dataset.from_arrays(X, Y, v), [0, 1])
    np.testing.assert_allclose(a.solution, b.solution, atol=1e-12)


def test_tfsvm_local_tiny_both_normalizations(tmp_path):
    """W runs approach W_mm (Frobenius); K Q^T runs are closer to W*_mm (nuclear) than to W_mm,
    whichever way the (K, Q) gradient is normalised; the setting is part of the stored settings."""
    from attnsvm.interfaces.sweeps import tfsvm_local as L

    finals = {}
    for how in ("per-factor", "joint"):
        s = L.Settings(n=3, T=3, d=3, runs=6, steps=400, lr=0.3, shard_size=3, kq_normalization=how, attention="self")
        summary, _ = L.sweep(s, tmp_path / how, InlineExecutor())
        f = summary["final"]
        assert summary["saturated"] == {"W": 6, "KQ": 6} and summary["checks"][0].verdict == "SUPPORTED"
        assert f["KQ~W*_mm"] > f["KQ~W_mm"] and f["W~W_mm"] > f["W~W*_mm"]
        assert json.loads((tmp_path / how / "tfsvm_local.json").read_text())["settings"]["kq_normalization"] == how
        finals[how] = f
    assert finals["per-factor"]["W~W_mm"] == finals["joint"]["W~W_mm"]       # the W run does not change
    assert finals["per-factor"]["KQ~W*_mm"] != finals["joint"]["KQ~W*_mm"]   # the (K, Q) run does


# ---- the authors' conventions (--conventions authors) and the torch-free path

AUTHORS = fig9.preset("authors", n=3, T=4, dims=(2, 5), trials=12, steps=300, shard_size=6, seed=1)


def test_authors_preset_is_their_conventions_and_keeps_explicit_settings():
    s = fig9.preset("authors")
    assert (s.lr, s.eps, s.labels, s.saturation, s.band) == (0.1, np.finfo(np.float64).eps, "gaussian-sign", "band",
                                                              (1e-3, 1e-6))
    assert (s.steps, s.trials, s.loss, s.init_scale) == (1000, 1000, "logistic", 0.01)   # Figure 9's protocol
    assert fig9.preset("default") == fig9.Settings()
    assert fig9.preset("authors", lr=0.5, sat_tol=None).lr == 0.5
    with pytest.raises(UserError, match="unknown conventions"):
        fig9.preset("notebook")
    assert fig9.Settings.from_json(json.loads(json.dumps(s.to_json()))) == s


def test_authors_data_differ_only_in_how_labels_are_drawn():
    """Rows and v are Gaussian rows over their norms either way; the labels come from the sign of
    a Gaussian draw, both values occur, and the trial's stream is its own."""
    X, Y, v, p0 = fig9.instance(0, 4, 7, 50, 3, 0.01, "gaussian-sign")
    X2, Y2, v2, _ = fig9.instance(0, 4, 7, 50, 3, 0.01)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(v, v2)
    np.testing.assert_allclose(np.linalg.norm(X, axis=-1), 1.0)
    assert set(Y) == {-1.0, 1.0} and not np.array_equal(Y, Y2)
    rng = np.random.default_rng([0, 4, 7])
    rng.standard_normal((50, 3, 4)), rng.standard_normal(4)
    np.testing.assert_array_equal(Y, np.where(rng.standard_normal(50) > 0, 1.0, -1.0))


def _one_input(*values):
    """X (1, 1, T, T) with identity keys and p = log(values): softmax values `values` / their sum."""
    T = len(values)
    return np.eye(T)[None, None], np.log(np.array(values, dtype=float))[None]


@pytest.mark.parametrize("values, state, in_band, multi", [
    ((1.0, 2e-9, 1e-13), "saturated", 0, 0),              # every other value <= 1e-6
    ((0.5, 0.5, 1e-9), "saturated", 0, 1),                # two tokens above 1e-3 (the argmax is classified)
    ((1.0, 0.99e-3, 1e-9), "discarded", 1, 0),            # a value in (1e-6, 1e-3]
    ((1.0, 1.01e-6, 1e-9), "discarded", 1, 0),            # just above the band's lower edge
    ((1.0, 0.99e-6, 1e-9), "saturated", 0, 0),            # just below it
    ((1.0, 1.01e-3, 1e-9), "saturated", 0, 1),            # just above its upper edge
    ((0.6, 0.3, 0.1), "non-saturated", 0, 1),             # no value <= 1e-6: finite
    ((1.0, 1e-2, 2e-3), "non-saturated", 0, 1),
])
def test_saturation_band_on_constructed_softmax_values(values, state, in_band, multi):
    """The authors' rule: any value in (1e-6, 1e-3] discards the run; no value <= 1e-6 means finite."""
    X, P = _one_input(*values)
    s = fig9.preset("authors", n=1, T=3, dims=(3,))
    log_unsat = np.log1p(-np.exp(fig9.log_softmax(X, P)).max(-1))
    (got,) = fig9.saturation(s, X, P, log_unsat)
    assert (got["state"], got["in_band"], got["multi_inputs"]) == (state, in_band, multi)
    (mean_rule,) = fig9.saturation(fig9.Settings(n=1, T=3, dims=(3,)), X, P, log_unsat)
    assert mean_rule["state"] == ("saturated" if got["unsat"] <= 1e-6 else "non-saturated")


@pytest.fixture(scope="module")
def authors_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig9-authors")
    return out, *fig9.sweep(AUTHORS, out, InlineExecutor(), draw=False)


def test_authors_run_applies_the_discard_rule(authors_run):
    """Discarded runs have softmax values in the band and no class; kept runs none; the per-d
    fractions and the checks count the kept runs only, and the discards are reported."""
    out, summary, records = authors_run
    assert {r["cls"] for r in records} <= set(fig9.CLASSES)
    for r in records:
        assert (r["cls"] == "discarded") == (r["in_band"] > 0)
        assert (r["gap"] is None) == (r["cls"] in ("discarded", "non-saturated", "unresolved"))
    for row in summary["per_d"]:
        assert row["kept"] == row["trials"] - row["discarded"] and sum(row[c] for c in fig9.CLASSES) == row["trials"]
        if row["kept"]:
            assert row["frac_lmm"] == row["lmm_incl_gmm"] / row["kept"]
    assert summary["discarded"] == sum(r["cls"] == "discarded" for r in records)
    assert f"({summary['discarded']} discarded in all)" in summary["checks"][0].evidence["conditions"]
    assert json.loads((out / "fig9.json").read_text())["settings"]["saturation"] == "band"


def test_authors_run_selects_the_final_argmax_and_classifies_it(authors_run):
    """Recomputed from the run's own data: the selected tokens are the final iterate's argmax
    and every saturated run's class is that of geometry.select on them."""
    _, _, records = authors_run
    d = 5
    mine = [r for r in records if r["d"] == d]
    X, Y, v, p0 = fig9.instances(AUTHORS, d, range(AUTHORS.trials))
    run = fig9.run_batch(X, Y, v, p0, AUTHORS)
    np.testing.assert_array_equal(run.selected, np.einsum("bntd,bd->bnt", X, run.p).argmax(-1))
    checked = 0
    for b, r in enumerate(mine):
        assert r["alpha"] == run.selected[b].tolist()
        if r["cls"] in ("gmm", "lmm", "neither"):
            sel = geometry.select(Dataset.from_arrays(X[b], Y[b], v[b]), r["alpha"])
            assert r["cls"] == ("gmm" if sel.is_gmm else "lmm" if sel.score_gap > 0 else "neither")
            checked += 1
    assert checked >= 3


def test_eps_step_matches_the_torch_rule_and_stops_below_eps():
    """g/(||g|| + eps) on the kernel equals the torch path's rule (`Normalize(eps)` then `Descend`); once
    ||g|| is far below eps the step is ||g||/eps of lr, so a deeply saturated start stays put."""
    import torch

    from attnsvm import dynamics
    from attnsvm.dynamics import rules

    X, Y, v, p0 = fig9.instances(AUTHORS, 5, range(6))
    gamma = fig9.scores(X, Y, v)
    kernel = fused.FusedGrad.of_arrays(X, gamma, "logistic")
    run = kernel.normalized_gd(p0, 200, 0.1, fig9.MACHINE_EPS)
    tr = dynamics.run(dynamics.Problem.from_arrays(X, gamma, "logistic", device="cpu"),
                      rules.chain(rules.Normalize(eps=fig9.MACHINE_EPS), rules.Descend(0.1)), torch.as_tensor(p0), 200,
                      every=200)
    np.testing.assert_allclose(run.p, tr.final.numpy(), rtol=1e-9, atol=1e-9)
    assert np.array_equal(run.selected, tr.selected.numpy()) and run.status == tr.status
    deep = run.p * (2000 / np.linalg.norm(run.p, axis=-1, keepdims=True))      # ||g|| ~ e^-hundreds
    _, log_norm, _ = kernel.arrays(deep)
    still = kernel.normalized_gd(deep, 50, 0.1, fig9.MACHINE_EPS).p
    moves = kernel.normalized_gd(deep, 50, 0.1, 0.0).p
    far = log_norm < math.log(fig9.MACHINE_EPS) - 5
    assert far.any()
    assert (np.linalg.norm(still - deep, axis=-1)[far] < 5 * 0.1 * 50 * math.exp(-5)).all()
    np.testing.assert_allclose(np.linalg.norm(moves - deep, axis=-1)[far], 0.1 * 50, rtol=1e-6)


def test_kernel_run_matches_dynamics_run():
    """`FusedGrad.normalized_gd` (numpy, no torch) against `dynamics.run` on the same problem: the
    same selections, statuses and saturation, and saturated runs reach the same p to rounding
    (non-saturated runs wander with lr 1, so their first-step rounding differences grow)."""
    import torch

    from attnsvm import dynamics

    s = replace(TINY, n=4, T=5)
    X, Y, v, p0 = fig9.instances(s, 4, range(8))
    run = fig9.run_batch(X, Y, v, p0, s)
    tr = dynamics.run(dynamics.Problem.from_arrays(X, fig9.scores(X, Y, v), "logistic", device="cpu"),
                      dynamics.NormalizedGD(1.0), torch.as_tensor(p0), s.steps, every=s.steps)
    sat = np.exp(run.log_unsat).mean(-1) <= s.sat_tol
    assert sat.sum() >= 4 and run.status == tr.status
    np.testing.assert_array_equal(run.selected[sat], tr.selected.numpy()[sat])
    np.testing.assert_allclose(run.p[sat], tr.final.numpy()[sat], rtol=1e-9)
    np.testing.assert_allclose(run.log_unsat[sat], tr.log_unsat[-1].numpy()[sat], rtol=1e-9)


def test_reproduce_fig9_imports_no_torch_sympy_or_cvxpy(tmp_path):
    """End to end through the command line (two workers): the run needs neither torch, sympy nor
    cvxpy (matplotlib only to draw), given a cached, checked kernel."""
    assert fused.status().startswith("on (")
    code = ("import atexit, sys; atexit.register(lambda: print('MODULES', sorted(m for m in "
            "('torch', 'sympy', 'cvxpy', 'scipy.optimize') if m in sys.modules)));"
            "from attnsvm.interfaces.cli import main; main()")
    r = _cli("fig9", "--n", "3", "--T", "4", "--d", "3,4", "--trials", "8", "--steps", "50", "--shard-size", "4",
             "--workers", "2", "--out", "o", cwd=tmp_path, code=code)
    assert r.returncode == 0, r.stderr
    records = json.loads((tmp_path / "o" / "fig9_runs.json").read_text())
    if all(r["certified"] is None for r in records):      # (an exact certificate imports the exact path)
        assert "MODULES []" in r.stdout
    assert (tmp_path / "o" / "fig9.png").stat().st_size > 10_000


def test_every_run_discarded_is_inconclusive_and_strict_json(tmp_path):
    """A horizon too short for the band (every run has a softmax value in (1e-6, 1e-3]): no
    fraction, every verdict INCONCLUSIVE, and the outputs are strict JSON (no NaN)."""
    s = fig9.preset("authors", n=3, T=4, dims=(3,), trials=20, steps=100, shard_size=20)
    summary, records = fig9.sweep(s, tmp_path, InlineExecutor())
    assert summary["discarded"] == 20 and summary["per_d"][0]["frac_lmm"] is None
    assert {c.verdict for c in summary["checks"]} == {"INCONCLUSIVE"}

    def refuse(constant):
        raise ValueError(constant)
    json.loads((tmp_path / "fig9.json").read_text(), parse_constant=refuse)
    assert (tmp_path / "fig9.png").stat().st_size > 10_000


@pytest.mark.parametrize("text, message", [
    ("12,12,12", "repeated value 12"), ("4,2,4", "repeated value 4"), ("1,,2", "empty item"), (",", "empty item"),
    ("", "empty item"), ("2,", "empty item"),
])
def test_int_list_rejects_repeats_and_empty_items(text, message):
    from attnsvm.interfaces.sweeps.cli import int_list, joined_int_list

    with pytest.raises(UserError, match=message):
        int_list(text, "d")
    with pytest.raises(UserError, match=message):
        joined_int_list(text, "C")


def test_int_lists_are_sorted_and_trend_verdicts_order_free():
    from attnsvm.interfaces.sweeps.cli import int_list, joined_int_list

    assert int_list("8,2,4", "d") == (2, 4, 8) and int_list("2:8:2", "d") == (2, 4, 6, 8)
    assert joined_int_list("100,1:3", "C") == (1, 2, 3, 100)
    with pytest.raises(UserError, match="repeated value 2"):
        joined_int_list("1:3,2", "C")
    groups = [(2, 10, 100), (8, 90, 100)]
    assert stats.trend_check("rises", groups) == stats.trend_check("rises", groups[::-1])


@pytest.mark.parametrize("args", [
    ["fig9", "--d", "12,12"], ["fig10", "--d", "2,,4"], ["tfsvm-rank", "--n", "5,5"], ["tfsvm-rank", "--T", "3,"],
    ["fig5", "--C", ","], ["fig5", "--C", ""], ["fig5", "--C", "1:10,5"],
])
def test_cli_list_options_reject_repeats_and_empty_items_before_writing(tmp_path, args):
    r = _cli(*args, "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("error: --") and len(r.stderr.splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_negative_gap_bound_counts_only_runs_that_could_show_one(tiny):
    """The denominator of "negative score gaps in < 1%" is the saturated, classified runs; with
    none (one step: nothing saturates) the verdict is INCONCLUSIVE, never SUPPORTED."""
    _, summary, records = tiny
    classified = sum(r["cls"] in ("lmm", "gmm", "neither") for r in records)
    neg = sum(r["cls"] == "neither" for r in records)
    row = next(c for c in summary["checks"] if c.claim.startswith("negative score gaps"))
    assert row.evidence["summary"].startswith(f"{neg} of {classified} ")
    unsat = [{**r, "cls": "non-saturated", "gap": None, "corr": None} for r in records]
    row = next(c for c in fig9.summarize(TINY, unsat)["checks"] if c.claim.startswith("negative score gaps"))
    assert row.verdict == "INCONCLUSIVE"


def test_tfsvm_rank_checks_count_only_informative_instances():
    """rank <= n is counted only where d > n (INCONCLUSIVE if none); "lower rank" is a paired
    comparison (ties are no evidence) and names nuclear solves that ended in error."""
    from attnsvm.interfaces.sweeps import tfsvm_rank as R

    s = R.Settings(ns=(3,), Ts=(3,), dims=(1, 2, 3), trials=2)
    rec = lambda d, t, fro, nuc, **kw: {"n": 3, "T": 3, "d": d, "trial": t, "status": "optimal", "rank_fro": fro,
                                        "rank_nuc": nuc, "certified": True, "nuc_clear": True, **kw}
    recs = [rec(d, t, min(d, 3), min(d, 3)) for d in (1, 2, 3) for t in range(2)]
    checks = R.summarize(s, recs)["checks"]
    assert checks[0].verdict == "INCONCLUSIVE" and "no feasible instance with d > n" in checks[0].evidence["summary"]
    assert checks[2].verdict == "INCONCLUSIVE"                     # all ties
    s = R.Settings(ns=(1,), Ts=(3,), dims=(2, 3), trials=4)
    recs = [{**rec(d, t, 2, 1, nuc_status="optimal"), "n": 1} for d in (2, 3) for t in range(4)]
    recs[-1] = {**recs[-1], "rank_nuc": None, "nuc_status": "solver_error"}
    checks = R.summarize(s, recs)["checks"]
    assert checks[0].verdict == "REFUTED"                          # rank 2 > n = 1 with d > n
    assert checks[2].verdict == "SUPPORTED"
    assert "1 nuclear solve ended in error (solver_error)" in checks[2].evidence["summary"]
    recs = [{**r, "rank_nuc": 1 if i == 0 else 2} for i, r in enumerate(recs[:-1])]   # lower on 1 of 1 that differ
    assert R.summarize(s, recs)["checks"][2].verdict == "INCONCLUSIVE"


@pytest.mark.parametrize("args, message", [
    (["fig9", "--seed", "-1"], "--seed"), (["fig10", "--seed", "-1"], "--seed"),
    (["tfsvm-rank", "--seed", "-1"], "--seed"), (["tfsvm-local", "--seed", "-1"], "--seed"),
    (["fig1", "--seed", "-1"], "--seed"), (["fig4", "--seed", "-1"], "--seed"),
    (["fig9", "--n", "100000", "--T", "100000"], "problem too large"),
    (["tfsvm-local", "--d", "100000"], "problem too large"), (["tfsvm-rank", "--d", "100000"], "problem too large"),
    (["fig9", "--lr", "1e300"], "--lr must be at most"),
    (["fig9", "--init-scale", "1e300"], "--init-scale must be at most"),
    (["fig4", "--ngd-lr", "1e300"], "--ngd-lr must be at most"),
    (["fig4", "--gd-lr", "1e300"], "--gd-lr must be at most"),
    (["tfsvm-local", "--lr", "1e300"], "--lr must be at most"), (["fig5", "--lr", "1e300"], "--lr must be at most"),
])
def test_cli_bad_seed_size_and_step_refused_before_writing(tmp_path, args, message):
    r = _cli(*args, "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def test_non_finite_runs_are_never_evidence(tiny):
    _, _, records = tiny
    bad = [{**r, "status": "non-finite"} for r in records]
    summary = fig9.summarize(TINY, bad)
    assert {c.verdict for c in summary["checks"]} == {"INCONCLUSIVE"} and summary["non_finite"] == len(records)
