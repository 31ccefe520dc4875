"""attnsvm.interfaces.sweeps: Figure-9 classification against exhaustive Definition-2 geometry, resumable
shards, batched vs one-at-a-time reference, statistics behind the verdicts, CLI errors."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from attnsvm.attention.data import Dataset
from attnsvm.errors import UserError
from attnsvm.interfaces.sweeps import fig9, stats
from attnsvm.interfaces.sweeps.shards import (
    InlineExecutor,
    Shard,
    open_store,
    run_shards,
)
from attnsvm.svm import geometry

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


def test_exact_path_agrees_with_fast_path(monkeypatch):
    """Forcing every run through the exact path (grey band everywhere) changes nothing."""
    X, Y, v, p0 = fig9.instances(TINY, 3, range(6))
    P, sel, lu, _ = fig9.run_batch(X, Y, v, p0, 300, 1.0, "logistic")
    fast = [fig9.classify(X[b], Y[b], v[b], P[b], sel[b], lu[b], TINY.sat_tol) for b in range(6)]
    monkeypatch.setattr(fig9, "NEAR_ACTIVE", 1e12)
    exact = [fig9.classify(X[b], Y[b], v[b], P[b], sel[b], lu[b], TINY.sat_tol) for b in range(6)]
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
    assert {c["verdict"] for c in summary["checks"]} <= {"SUPPORTED", "REFUTED", "INCONCLUSIVE"}


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
    X, Y, v, p0 = fig9.instances(s, 4, range(3))
    P, sel, lu, _ = fig9.run_batch(X, Y, v, p0, s.steps, s.lr, s.loss)
    for t in range(3):
        r = ref.trial(s, 4, t)
        b = fig9.classify(X[t], Y[t], v[t], P[t], sel[t], lu[t], s.sat_tol)
        np.testing.assert_allclose(r["p"], P[t], rtol=1e-9, atol=1e-9)
        assert r["alpha"] == b["alpha"] and r["cls"] == b["cls"]


def test_trend_and_bound_checks():
    up = [(d, k, 1000) for d, k in zip(range(2, 17, 2), (50, 300, 600, 900, 980, 990, 995, 1000))]
    assert stats.trend_check("rises", up)["verdict"] == "SUPPORTED"
    assert stats.trend_check("rises", [(x, 1000 - k, n) for x, k, n in up])["verdict"] == "REFUTED"
    dip = up[:3] + [(8, 100, 1000)] + up[4:]
    assert stats.trend_check("rises", dip)["verdict"] == "REFUTED"
    assert stats.trend_check("rises", [(d, 0, 100) for d in (1, 2)])["verdict"] == "INCONCLUSIVE"
    assert stats.upper_bound_check("<1%", 2, 8000, 0.01)["verdict"] == "SUPPORTED"
    assert stats.upper_bound_check("<1%", 300, 8000, 0.01)["verdict"] == "REFUTED"
    assert stats.upper_bound_check("<1%", 80, 8000, 0.01)["verdict"] == "INCONCLUSIVE"
    lo, hi = stats.wilson(5, 100)
    assert lo < 0.05 < hi


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-c", "from attnsvm.interfaces.cli import main; main()", "reproduce", *args],
                          capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize("args, message", [
    (["fig9", "--d", "2,x"], "--d: expected integers"),
    (["fig9", "--trials", "0"], "--trials must be positive"),
    (["fig9", "--loss", "hinge"], "unknown loss"),
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
    assert summary["checks"][0]["verdict"] == "SUPPORTED"
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
        s = L.Settings(n=3, T=3, d=3, runs=6, steps=400, lr=0.3, shard_size=3, kq_normalization=how)
        summary, _ = L.sweep(s, tmp_path / how, InlineExecutor())
        f = summary["final"]
        assert summary["saturated"] == {"W": 6, "KQ": 6} and summary["checks"][0]["verdict"] == "SUPPORTED"
        assert f["KQ~W*_mm"] > f["KQ~W_mm"] and f["W~W_mm"] > f["W~W*_mm"]
        assert json.loads((tmp_path / how / "tfsvm_local.json").read_text())["settings"]["kq_normalization"] == how
        finals[how] = f
    assert finals["per-factor"]["W~W_mm"] == finals["joint"]["W~W_mm"]       # the W run does not change
    assert finals["per-factor"]["KQ~W*_mm"] != finals["joint"]["KQ~W*_mm"]   # the (K, Q) run does
