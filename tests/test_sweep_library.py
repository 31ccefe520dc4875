"""The sweeps on the library (issue 20, item 6): settings that validate themselves from a declared
table (`sweeps.params`) with the CLI's messages, update rules as compositions (`dynamics.rules`),
verdicts as the claims' `Report`s, and the one Definition-2 classifier (`svm.classify`)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from attnsvm.attention.gradients import Grad
from attnsvm.claims.verdicts import Report, Verdict
from attnsvm.dynamics import NormalizedGD, authors, rules
from attnsvm.errors import UserError
from attnsvm.interfaces.sweeps import (
    fig1,
    fig3c,
    fig4,
    fig5,
    fig9,
    params,
    reports,
    tfsvm_local,
    tfsvm_multitoken,
    tfsvm_paths,
    tfsvm_rank,
)

# ---------------------------------------------------------------- declared constraints


@pytest.mark.parametrize("constraint, value, message", [
    (params.COUNT, 0, "--x must be a finite positive number, got 0"),
    (params.COUNT, params.MAX_SIZE + 1, f"--x must be at most {params.MAX_SIZE}"),
    (params.COUNT, 2.5, "--x must be an integer, got 2.5"),
    (params.TOKENS, 1, "--x must be at least 2, got 1"),
    (params.STEP, math.inf, "--x must be a finite positive number, got inf"),
    (params.STEP, 1e300, "--x must be at most 1000 (larger steps overflow the iterates), got 1e+300"),
    (params.INIT_SCALE, math.nan, "--x must be a finite non-negative number, got nan"),
    (params.SAT_TOL, 0.5, "--x must be at most 0.01 (a looser threshold is no saturation)"),
    (params.Interval(float, 0.5, 1, closed="left"), 1.0, "--x must be below 1, got 1"),
    (params.Options(("ngd", "gd")), "sgd", "--x must be ngd or gd, got 'sgd'"),
    (params.LOSS, "hinge", "unknown loss 'hinge'; choose from correlation, exponential, logistic"),
    (params.Each(params.TOKENS), (3, 1), "--x must be at least 2, got 1"),
])
def test_constraints_say_what_is_wrong(constraint, value, message):
    with pytest.raises(UserError) as e:
        constraint.check("--x", value)
    assert str(e.value).startswith(message)


def test_accepted_values_pass():
    for constraint, value in ((params.COUNT, 1), (params.TOKENS, 2), (params.STEP, 1000.0), (params.STEP, 3),
                              (params.INIT_SCALE, 0.0), (params.SEED, 0), (params.EPS, 0.0)):
        constraint.check("--x", value)


@pytest.mark.parametrize("make, message", [
    (lambda: fig9.Settings(T=1), "--T must be at least 2, got 1"),
    (lambda: fig9.Settings(dims=(2, 0)), "--d must be a finite positive number, got 0"),
    (lambda: fig9.Settings(n=100_000, T=100_000), "problem too large: --shard-size x n x T x d"),
    (lambda: fig9.Settings(band=(1e-6, 1e-3)), "--band must be (hi, lo) with 0 < lo < hi < 1"),
    (lambda: fig9.preset("notebook"), "unknown conventions 'notebook'"),
    (lambda: tfsvm_local.Settings(T=1), "--T must be at least 2"),
    (lambda: tfsvm_local.Settings(kq_normalization="both"), "--kq-normalization must be per-factor or joint"),
    (lambda: tfsvm_rank.Settings(Ts=(1,)), "--T must be at least 2"),
    (lambda: tfsvm_rank.Settings(rank_tol=0.5), "--rank-tol must be at most 0.01"),
    (lambda: tfsvm_multitoken.Settings(every=5000), "need --every <= --steps, got --every 5000, --steps 2001"),
    (lambda: tfsvm_paths.Settings(steps=1), "--steps must be at least 2"),
    (lambda: fig1.Settings(window=2000), "need --window <= --steps"),
    (lambda: fig3c.Settings(tol=0.5), "--tol must be at most 0.1"),
    (lambda: fig4.Settings(level=0.4), "--level must be at least 0.5 (a softmax mass below 1/2 selects nothing)"),
    (lambda: fig5.Settings(Cs=(1, 0)), "--C must be a finite positive number, got 0"),
])
def test_each_sweeps_settings_validate_themselves(make, message):
    with pytest.raises(UserError) as e:
        make()
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_every_settings_class_declares_its_fields():
    """Every field of every sweep's settings has a constraint (or is a switch, a boolean)."""
    from dataclasses import fields

    for cls in (fig1.Settings, fig3c.Settings, fig4.Settings, fig5.Settings, fig9.Settings, tfsvm_local.Settings,
                tfsvm_rank.Settings, tfsvm_multitoken.Settings, tfsvm_paths.Settings):
        loose = [f.name for f in fields(cls) if f.name not in cls.PARAMS and f.type != "bool"]
        assert not loose, (cls, loose)


def test_settings_round_trip_through_json():
    for s in (fig9.preset("authors"), tfsvm_rank.Settings(ns=(2, 3)), fig5.Settings(Cs=(1, 2)),
              tfsvm_multitoken.Settings(dims=(4,))):
        assert params.from_json(type(s), json.loads(json.dumps(s.to_json()))) == s


# ---------------------------------------------------------------- update rules as compositions

def _grad(seed: int, B: int = 6, D: int = 8) -> Grad:
    rng = np.random.default_rng(seed)
    d = torch.tensor(rng.standard_normal((B, D)))
    d[0] = 0
    d[1, :4] = 0
    d = d / torch.where(d.norm(dim=-1, keepdim=True) > 0, d.norm(dim=-1, keepdim=True), 1)
    ln = torch.tensor(rng.uniform(-800, 5, B))
    ln[0] = -math.inf
    return Grad(None, d, ln, None, None)


@pytest.mark.parametrize("seed", range(5))
def test_compositions_are_the_rules_they_name(seed):
    """Normalize then Descend is normalized GD bitwise; per block it is g_k / ||g_k|| (a zero block
    stays put); with eps it is g / (||g|| + eps) on the gradient itself (exp(log_norm) direction)."""
    g, p = _grad(seed), torch.zeros(6, 8)
    ngd, _ = NormalizedGD(0.3).update(g, None, p)
    assert torch.equal(rules.chain(rules.Normalize(), rules.Descend(0.3)).update(g, None, p)[0], ngd)
    block, _ = rules.BlockNormalizedGD(0.3, (4, 4)).update(g, None, p)
    for lo, hi in ((0, 4), (4, 8)):
        x = g.direction[:, lo:hi]
        n = x.norm(dim=-1, keepdim=True)
        torch.testing.assert_close(block[:, lo:hi], -0.3 * torch.where(n > 0, x / n, 0.0), rtol=1e-15, atol=0)
    eps = 1e-3
    for sizes in (None, (8,)):
        step, _ = rules.chain(rules.Normalize(sizes, eps), rules.Descend(0.3)).update(g, None, p)
        G = g.direction * torch.exp(g.log_norm)[:, None]
        want = -0.3 * G / (G.norm(dim=-1, keepdim=True) + eps)
        torch.testing.assert_close(step[2:], want[2:], rtol=1e-12, atol=1e-300)
        assert torch.equal(step[0], torch.zeros(8))
    assert authors.EpsNormalizedGD(0.3, (4, 4), eps) == rules.chain(rules.Normalize((4, 4), eps), rules.Descend(0.3))


def test_a_composition_reads_no_statistics_and_checks_its_blocks():
    rule = rules.BlockNormalizedGD(0.1, (4, 4))
    assert rule.needs == frozenset()
    with pytest.raises(ValueError, match="do not add up"):
        rule.init(torch.zeros(2, 9))


# ---------------------------------------------------------------- verdicts as Reports

def test_sweep_verdicts_are_reports_with_strict_json(tmp_path):
    from attnsvm.interfaces.executors import Inline

    summary, _ = fig4.sweep(fig4.Settings(trials=4, steps=50, shard_size=4), tmp_path, Inline(), draw=False)
    checks = summary["checks"]
    assert all(isinstance(c, Report) and c.part == reports.PART and c.verdict in Verdict for c in checks)
    assert all(c.evidence["conditions"] == fig4.Settings(trials=4, steps=50, shard_size=4).describe() for c in checks)
    stored = json.loads((tmp_path / "fig4.json").read_text())["checks"]
    assert [Report.from_json(c).verdict for c in stored] == [c.verdict for c in checks]
    assert stored[0]["id"] == checks[0].claim and stored[0]["evidence"]["summary"] == checks[0].evidence["summary"]


def test_every_combines_parts():
    S, R, I = Verdict.SUPPORTED, Verdict.REFUTED, Verdict.INCONCLUSIVE
    assert reports.every([S, S]) == S and reports.every([S, R, I]) == R and reports.every([S, I]) == I
    assert reports.every([]) == I and reports.every([S, None]) == I


# ---------------------------------------------------------------- one Definition-2 classifier

def test_fig9_classifies_with_the_library_classifier(monkeypatch):
    from attnsvm.svm import classify

    s = fig9.Settings(n=2, T=3, dims=(3,), trials=6, steps=300, shard_size=6, seed=3)
    X, Y, v, p0 = fig9.instances(s, 3, range(6))
    run = fig9.run_batch(X, Y, v, p0, s)
    sats = fig9.saturation(s, X, run.p, run.log_unsat)
    found = classify.classify_runs(X, Y, v, run.p, run.selected, [x["state"] == "saturated" for x in sats])
    recs = fig9.classify(X, Y, v, run.p, run.selected, sats)
    assert any(found)
    for f, r, sat in zip(found, recs, sats):
        assert (f is None) == (sat["state"] != "saturated")
        assert r["cls"] == (sat["state"] if f is None else f["cls"])
        if f:
            assert {k: r[k] for k in f} == f
