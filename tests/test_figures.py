"""`attnsvm reproduce fig1 | fig3c | fig4 | fig5 | fig10` (issue 12): the verdicts on small runs,
the properties behind them (exact max-margin directions, Lemma 4's monotone inner product and
its failure without Assumption B, the joint (v, p) gradient against autograd, the figures' own
symmetries and first steps), verdict rules that can fail, and the command line."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsvm.interfaces.executors import Inline
from attnsvm.interfaces.sweeps import fig1, fig3c, fig4, fig5, fig9, fig10
from attnsvm.interfaces.sweeps.figures import sign_test, vanishing

ROOT = Path(__file__).resolve().parents[1]


def verdicts(summary: dict) -> list[str]:
    return [c.verdict for c in summary["checks"]]


# ---------------------------------------------------------------- verdict rules

def test_vanishing_and_sign_test_can_fail():
    assert vanishing("", 1e-3, 1e-5, 1e-3, 1e-2, "").verdict == "SUPPORTED"
    assert vanishing("", 1e-1, 1e-3, 1e-1, 1e-2, "").verdict == "INCONCLUSIVE"     # approaching, not yet within
    assert vanishing("", 1e-1, 2e-1, 2e-1, 1e-2, "").verdict == "REFUTED"          # moving away
    assert vanishing("", 1e-1, 1.5e-1, 1.5e-1, 1e-2, "").verdict == "INCONCLUSIVE"  # a drift, not clearly away
    assert sign_test("", 6, 6, "").verdict == "SUPPORTED"
    assert sign_test("", 0, 6, "").verdict == "REFUTED"
    assert sign_test("", 3, 6, "").verdict == sign_test("", 0, 0, "").verdict == "INCONCLUSIVE"


# ---------------------------------------------------------------- Figure 1

@pytest.fixture(scope="module")
def f1(tmp_path_factory):
    s = fig1.Settings(steps=400, window=100)
    summary, _ = fig1.sweep(s, tmp_path_factory.mktemp("fig1"), Inline(), draw=False)
    return summary


def test_fig1_verdicts_and_directions(f1):
    summary = f1
    assert verdicts(summary) == ["SUPPORTED"] * 5
    pa, pb = summary["panels"]["a"], summary["panels"]["b"]
    assert pa["assumption_b"] and not pb["assumption_b"] and summary["panels"]["c"]["assumption_b"]
    # (a): only the constraint against the (0, 0) token is active: p_mm = (-0.1, 1) / 1.01
    assert np.allclose(pa["directions"][0]["p_mm"], [-10 / 101, 100 / 101, 0], atol=1e-12)
    # (b): the GMM and one LMM, selecting (1, 0) against its only SVM-neighbour (0, 0): p_mm = (1, 0)
    assert [d["alpha"] for d in pb["directions"]] == [[0], [1]]
    assert np.allclose(pb["directions"][1]["p_mm"], [1, 0, 0], atol=1e-12)
    assert all(d["certified"] for p in summary["panels"].values() for d in p["directions"])


def test_fig1_lemma4_monotone_and_its_failure_without_assumption_b(f1):
    """Under Assumption B, <p_t, p_mm> rises at every step of every path; in (b) (no Assumption B)
    the paths that go to the LMM lose <p_t, p_mm(GMM)> at most steps: the check can fail."""
    rows = f1["rows"]
    assert all(r["ip_decreases"] == 0 for r in rows if r["panel"] in ("a", "c"))
    to_lmm = [r for r in rows if r["panel"] == "b" and r["closest"].startswith("LMM")]
    assert to_lmm and all(r["ip_decreases"] > 100 for r in to_lmm)
    assert all(r["norm"] <= np.linalg.norm(r["start"]) + 0.1 * 400 + 1e-9 for r in rows)   # NGD steps of length lr


# ---------------------------------------------------------------- Figure 3(c)

@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2 ** 31 - 1), st.sampled_from(["logistic", "correlation", "exponential"]))
def test_vp_gradient_matches_autograd(seed, loss):
    from attnsvm.attention.losses import get_loss
    from attnsvm.dynamics.vp_joint import VPProblem

    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(2, 3, 4, 2)), rng.choice([-1.0, 1.0], size=(2, 3))
    theta = torch.tensor(rng.normal(size=(2, 4)) * 2, requires_grad=True)
    prob = VPProblem.from_arrays(X, Y, loss=loss, device="cpu")
    Xt, Yt = torch.tensor(X), torch.tensor(Y)
    s = torch.softmax(torch.einsum("bntd,bd->bnt", Xt, theta[:, 2:]), -1)
    f = torch.einsum("bnt,bntd,bd->bn", s, Xt, theta[:, :2])
    get_loss(loss).value(Yt * f).mean(-1).sum().backward()
    g = prob.grad(theta.detach())
    assert torch.allclose(g.vector, theta.grad, rtol=1e-9, atol=1e-12)


def test_fig3c_probabilities_tend_to_one(tmp_path):
    s = fig3c.Settings()
    summary, records = fig3c.sweep(s, tmp_path, Inline(), draw=False)
    assert verdicts(summary) == ["SUPPORTED", "SUPPORTED"]
    for r in records:                                    # both datasets, (a) and Figure 3(b)'s
        assert r["off_mass"][-1] < 1e-20 and r["misclassification"][-1] < 1e-20
        for block in ("path_v", "path_p"):               # the authors' step: lr on each block's unit gradient
            steps = np.linalg.norm(np.diff(r[block], axis=0), axis=-1)
            assert np.allclose(steps, s.lr, atol=1e-12)


# ---------------------------------------------------------------- Figure 4

def test_fig4_ngd_saturates_faster_and_gd_norm_levels_off(tmp_path):
    s = fig4.Settings(trials=6)
    summary, records = fig4.sweep(s, tmp_path / "a", Inline(), draw=False)
    assert verdicts(summary) == ["SUPPORTED", "SUPPORTED"]
    for r in records:
        t = np.arange(s.steps + 1)
        assert np.all(np.array(r["ngd"]["norm"]) <= s.ngd_lr * t + 1e-9)    # normalized steps of length lr from 0
        assert r["gd"]["norm"][-1] < r["ngd"]["norm"][-1]
    # the check can fail: with a huge fixed step GD saturates first
    big, _ = fig4.sweep(fig4.Settings(trials=6, gd_lr=100.0), tmp_path / "b", Inline(), draw=False)
    assert big["checks"][0].verdict == "REFUTED"


# ---------------------------------------------------------------- Figure 5

def test_fig5_losses_select_different_tokens(tmp_path):
    s = fig5.Settings(steps=200, window=200)
    summary, records = fig5.sweep(s, tmp_path, Inline(), draw=False)
    assert verdicts(summary) == ["SUPPORTED"] * 3
    by = {(r["loss"], r["C"]): r for r in records}
    for loss in fig5.LOSSES:
        assert abs(by[(loss, 1)]["bias"]) < 1e-12        # mirror symmetry at C = 1
    # at C = 100 the correlation loss attends more to input 1's optimal token (1, 1), the logistic to input 2's
    u_corr, u_log = by[("correlation", 100)]["unsat"], by[("logistic", 100)]["unsat"]
    assert u_corr[0] < u_corr[1] and u_log[1] < u_log[0]
    assert by[("correlation", 100)]["p_window"][1] > 0 > by[("logistic", 100)]["p_window"][1]
    # the first step: -grad L(0) = (1/2) sum_i |loss'_i| (score gap / 4) k_i,opt
    for C in s.Cs:
        sig = lambda u: 1 / (1 + math.exp(u))
        for loss, (w1, w2) in (("correlation", (C, 1.0)), ("logistic", (C * sig(C / 2), sig(0.5)))):
            g = w1 * np.array([1.0, 1.0]) + w2 * np.array([1.0, -1.0])
            assert np.allclose(by[(loss, C)]["path"][1], s.lr * g / np.linalg.norm(g), atol=1e-12)


# ---------------------------------------------------------------- Figure 10

def _records(gaps, corrs, saturated):
    recs = [{"cls": "neither", "gap": g, "corr": c, "d": 4, "trial": k, "certified": None}
            for k, (g, c) in enumerate(zip(gaps, corrs))]
    return recs + [{"cls": "lmm", "gap": 0.1, "corr": 0.9999, "d": 4, "trial": 100 + k, "certified": None}
                   for k in range(saturated - len(recs))]


def test_fig10_verdict_rules_can_fail():
    s = fig9.Settings(dims=(4,), trials=1000)
    good = fig10.summarize(s, _records([-0.01] * 20, [0.999] * 20, 1000))
    assert verdicts(good)[1:] == ["SUPPORTED", "SUPPORTED"]
    bad = fig10.summarize(s, _records([-0.3] * 100, [0.5] * 100, 1000))
    assert verdicts(bad) == ["REFUTED"] * 3
    few = fig10.summarize(s, _records([-0.01] * 3, [0.999] * 3, 1000))
    assert verdicts(few)[2] == "INCONCLUSIVE"


def test_fig10_reads_figure9_runs(tmp_path):
    s = fig10.settings(dims=(4,), trials=60, steps=300)
    summary, records = fig10.sweep(s, tmp_path, Inline())
    neither = [r for r in records if r["cls"] == "neither"]
    assert summary["negative"] == len(neither) and all(r["gap"] < 0 for r in neither)
    assert summary["saturated"] == sum(r["cls"] in ("lmm", "gmm", "neither") for r in records)
    assert (tmp_path / "fig9_runs.json").exists() and (tmp_path / "fig10.png").read_bytes()[:4] == b"\x89PNG"


# ---------------------------------------------------------------- command line

def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-c", "from attnsvm.interfaces.cli import main; main()", "reproduce", *args],
                          capture_output=True, text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("args, message", [
    (["fig1", "--rule", "sgd"], "--rule must be ngd or gd"),
    (["fig3c", "--window", "5000"], "--window"),
    (["fig4", "--level", "1.5"], "--level must be below 1"),
    (["fig5", "--C", "2,x"], "--C: expected integers"),
    (["fig10", "--gap-tol", "0"], "--gap-tol must be a finite positive number"),
    (["fig4", "--json", "no-such-dir/s.json"], "does not exist"),
])
def test_cli_user_errors(tmp_path, args, message):
    r = _cli(*args, "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith("error: ") and message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_cli_fig5_writes_strict_json_and_png(tmp_path):
    r = _cli("fig5", "--C", "1,2,100", "--steps", "100", "--window", "100", "--out", "o", "--json", "s.json",
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    def strict(x):
        raise ValueError(x)
    summary = json.loads((tmp_path / "s.json").read_text(), parse_constant=strict)
    assert summary == json.loads((tmp_path / "o" / "fig5.json").read_text())
    assert [c["verdict"] for c in summary["checks"]] == ["SUPPORTED"] * 3
    assert (tmp_path / "o" / "fig5.png").read_bytes()[:4] == b"\x89PNG"
    assert "SUPPORTED" in r.stdout and "the paper's claims" in r.stdout


def test_fig5_verdicts_need_selection_and_two_values_of_C():
    """After one step (1 - s ~ 0.5: no token selected) the two losses' leans are no selection:
    INCONCLUSIVE; "more as C grows" from a single C is INCONCLUSIVE; a non-finite run is no evidence."""
    from attnsvm.interfaces.sweeps import fig5 as F

    def verdicts(s):
        return [c.verdict for c in F.summarize(s, [r for sh in s.shards() for r in F.run_shard(
            {**s.to_json()}, sh)["records"]])["checks"]]

    assert verdicts(F.Settings(Cs=(1, 2, 100), steps=1, window=1))[2] == "INCONCLUSIVE"
    assert verdicts(F.Settings(Cs=(100,), steps=300, window=200))[:2] == ["INCONCLUSIVE"] * 2
    s = F.Settings(Cs=(1, 2, 100), steps=300, window=200)
    recs = [r for sh in s.shards() for r in F.run_shard(s.to_json(), sh)["records"]]
    assert [c.verdict for c in F.summarize(s, recs)["checks"]] == ["SUPPORTED"] * 3
    bad = [{**r, "status": "non-finite"} if r["C"] == 100 else r for r in recs]
    assert [c.verdict for c in F.summarize(s, bad)["checks"]] == ["INCONCLUSIVE"] * 3


@pytest.mark.parametrize("args, message", [
    (["fig1", "--tol", "0.9"], "--tol must be at most 0.1"),
    (["fig3c", "--tol", "0.5"], "--tol must be at most 0.1"),
    (["fig10", "--gap-tol", "1e300"], "--gap-tol must be at most 0.5"),
    (["fig4", "--level", "0.1"], "at least 0.5"),
    (["fig9", "--sat-tol", "1e300"], "--sat-tol must be at most 0.01"),
    (["tfsvm-local", "--sat-tol", "0.5"], "--sat-tol must be at most 0.01"),
    (["tfsvm-rank", "--rank-tol", "5"], "--rank-tol must be at most 0.01"),
])
def test_cli_tolerances_have_upper_bounds(tmp_path, args, message):
    r = _cli(*args, "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def test_fig4_ties_and_neither_reaching_are_no_evidence(tmp_path):
    """Two steps: neither rule reaches the level, so "NGD saturates faster" is INCONCLUSIVE (it was
    REFUTED '0 of 20'); the sign test counts only trials where one rule reached it first."""
    summary, records = fig4.sweep(fig4.Settings(trials=6, steps=2, shard_size=6), tmp_path, Inline(), draw=False)
    assert all(r[k]["hit"] is None for r in records for k in ("ngd", "gd"))
    first = summary["checks"][0]
    assert first.verdict == "INCONCLUSIVE" and first.evidence["n"] == 0
    assert "6 trials tied or neither reached it" in first.evidence["summary"]


def test_tfsvm_local_still_rising_is_inconclusive_not_refuted():
    """The (K, Q) rule of fig1-fig5: a mean corr 0.81 -> 0.90 over [H/2, H], still rising, is
    INCONCLUSIVE (it was REFUTED at 0.897); falling away from 0.99 is REFUTED; within 0.01 throughout
    the second half is SUPPORTED; a non-finite run is not counted."""
    from attnsvm.interfaces.sweeps import tfsvm_local as L

    s = L.Settings(runs=1, steps=300)
    steps = [0, 64, 150, 256, 300]
    def verdict(curve, status="ok"):
        rec = {"KQ": {"saturated": True, "status": status, "corr_nuc": curve, "corr_fro": [0.5] * 5},
               "W": {"saturated": True, "status": "ok", "corr_fro": [0.999] * 5, "corr_nuc": [0.9] * 5}}
        return L.summarize(s, steps, [rec])["checks"]
    assert verdict([0.1, 0.5, 0.81, 0.88, 0.897])[1].verdict == "INCONCLUSIVE"
    assert verdict([0.1, 0.5, 0.95, 0.9, 0.8])[1].verdict == "REFUTED"
    assert verdict([0.1, 0.5, 0.995, 0.996, 0.997])[1].verdict == "SUPPORTED"
    checks = verdict([0.1, 0.5, 0.995, 0.996, 0.997], status="non-finite")
    assert checks[1].verdict == "INCONCLUSIVE" and checks[0].verdict == "SUPPORTED"
