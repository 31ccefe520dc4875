"""The fused C kernel of the light gradient (attnsvm.attention.fused) against the eager torch path and a
60-digit reference: same selected tokens, direction and log-norm, at any saturation, with score
ties, inputs without terms, every library loss and a custom one; its fallbacks when it cannot
run; and whole batched runs that take the same path either way."""

import math
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_gradient_fastpath import mp_grad

from attnsvm import dynamics
from attnsvm.attention import fused
from attnsvm.attention.gradients import linear_head_grad
from attnsvm.attention.losses import LOSSES, custom, get_loss

COMPILER = shutil.which(os.environ.get("CC") or "cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(fused.library() is None and not COMPILER, reason=f"fused kernel {fused.status()}")


def test_kernel_is_built_and_passes_its_self_check():
    """Where a C compiler exists the kernel must be on: off would mean a failed build or a
    failed self-check (`fused._self_check`), which the fallback would otherwise hide."""
    assert fused.status().startswith("on ("), fused.status()

TOL = 1e-9
softplus_loss = custom(lambda u: torch.nn.functional.softplus(-u), "softplus-custom")


def batch(seed, B, n, T, d, log10_scale, ties, dead, logits=None):
    """Random keys, scores and p; `ties`: tokens 0 and 1 share their score; `dead`: input 0 of
    every instance has equal scores and zero keys (no gradient terms); `logits` (T,): every
    input's logits, set by moving the keys along p (with `ties`, f - gamma_ref can then sit far
    below gamma_ref's rounding, e.g. logits 0, -3, -35)."""
    g = torch.Generator().manual_seed(seed)
    K = torch.randn(B, n, T, d, dtype=torch.float64, generator=g)
    gamma = torch.randn(B, n, T, dtype=torch.float64, generator=g)
    p = torch.randn(B, d, dtype=torch.float64, generator=g) * 10.0 ** log10_scale
    if logits is not None:
        K = fused.with_logits(K, p, logits)
    if ties:
        gamma[..., 1] = gamma[..., 0]
    if dead:
        gamma[:, 0], K[:, 0] = 0.3, 0.0
    return K, gamma, p


def assert_same(got, want):
    assert torch.equal(got.selected, want.selected)
    assert torch.allclose(got.direction, want.direction, rtol=0, atol=TOL)
    both_inf = torch.isneginf(got.log_norm) & torch.isneginf(want.log_norm)
    diff = torch.where(both_inf, 0.0, got.log_norm - want.log_norm).abs()
    assert (diff <= TOL * want.log_norm.abs().clamp_min(1)).all(), (got.log_norm, want.log_norm)


@given(seed=st.integers(0, 10_000), B=st.integers(1, 9), n=st.integers(1, 4), T=st.integers(2, 6),
       d=st.integers(1, 7), log10_scale=st.floats(-2, 3.5), ties=st.booleans(), dead=st.booleans(),
       loss=st.sampled_from(sorted(LOSSES) + ["custom"]))
def test_fused_equals_eager(seed, B, n, T, d, log10_scale, ties, dead, loss):
    """Logits gaps up to ~10^4: far past float64's exp range, where the kernel flushes terms
    below e^-700 of the largest and the eager path below e^-745."""
    K, gamma, p = batch(seed, B, n, T, d, log10_scale, ties, dead)
    lo = softplus_loss if loss == "custom" else get_loss(loss)
    kernel = fused.FusedGrad.of(K, gamma, lo)
    assert kernel.loss_code == (0 if loss == "custom" else fused.LOSS_CODES[loss])
    assert_same(kernel(p), linear_head_grad(K, gamma, p, lo, stats=False))


@given(seed=st.integers(0, 10_000), B=st.integers(1, 5), n=st.integers(1, 4), d=st.integers(2, 5),
       gaps=st.lists(st.floats(0, 60), min_size=2, max_size=5), loss=st.sampled_from(sorted(LOSSES)))
def test_fused_equals_eager_when_the_margin_excess_is_below_rounding(seed, B, n, d, gaps, loss):
    """Equal scores on the two largest logits and the others far below: f - gamma_ref is then
    under gamma_ref's rounding, and the kernel must carry it apart (a version that recomputed
    it as f - gamma_ref erred by 1e-4 in the direction)."""
    logits = -torch.tensor([0.0, *gaps]).cumsum(0)
    K, gamma, p = batch(seed, B, n, len(logits), d, 0.0, True, False, logits)
    lo = softplus_loss if loss == "custom" else get_loss(loss)
    kernel = fused.FusedGrad.of(K, gamma, lo)
    assert kernel.loss_code == (0 if loss == "custom" else fused.LOSS_CODES[loss])
    assert_same(kernel(p), linear_head_grad(K, gamma, p, lo, stats=False))


@pytest.mark.parametrize("scale", [1.0, 30.0, 300.0])
def test_fused_matches_60_digit_reference(scale):
    K, gamma, p = batch(7, 3, 3, 4, 3, 0.0, False, False)
    p = p * scale
    got = fused.FusedGrad.of(K, gamma, get_loss("logistic"))(p)
    for b in range(3):
        direction, log_norm = mp_grad(K[b].numpy(), gamma[b].numpy(), p[b].numpy())
        np.testing.assert_allclose(got.direction[b].numpy(), direction, atol=1e-10)
        assert math.isclose(got.log_norm[b].item(), log_norm, rel_tol=1e-10, abs_tol=1e-10)


def test_input_without_terms_beside_deep_saturation_is_finite():
    """Regression (both paths): an input whose scores are all equal has no gradient terms; its
    weight e^(log_F - M) overflowed to inf beside inputs saturated past e^-709, and 0 * inf made
    the whole instance's gradient NaN on the eager path."""
    K, gamma, p = batch(0, 2, 3, 4, 3, 0.0, False, True)
    p = p * 5000
    want = linear_head_grad(K, gamma, p, get_loss("logistic"), stats=False)
    assert torch.isfinite(want.direction).all() and torch.isfinite(want.log_norm).all()
    assert_same(fused.FusedGrad.of(K, gamma, get_loss("logistic"))(p), want)


def test_problem_uses_the_kernel_only_where_it_applies():
    K, gamma, _ = batch(1, 2, 2, 3, 2, 0.0, False, False)
    assert dynamics.Problem(K, gamma, get_loss("logistic")).fused is not None
    assert dynamics.Problem(K.float(), gamma.float(), get_loss("logistic")).fused is None   # float32
    assert dynamics.Problem(K[:, :, :1], gamma[:, :, :1], get_loss("logistic")).fused is None   # T = 1


def _fresh_library(monkeypatch, tmp_path, **env):
    monkeypatch.setenv("ATTNSVM_CACHE_DIR", str(tmp_path))
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    fused.reset()
    return fused.library()


@pytest.fixture
def restore_library():
    yield
    fused.reset()


def test_turned_off_or_unbuildable_falls_back_with_a_reason(monkeypatch, tmp_path, restore_library):
    assert _fresh_library(monkeypatch, tmp_path, ATTNSVM_FUSED="0") is None
    assert fused.status() == "off (ATTNSVM_FUSED=0)"
    K, gamma, _ = batch(2, 2, 2, 3, 2, 0.0, False, False)
    assert dynamics.Problem(K, gamma, get_loss("logistic")).fused is None
    monkeypatch.delenv("ATTNSVM_FUSED")
    assert _fresh_library(monkeypatch, tmp_path, CC="false") is None
    assert fused.status().startswith("off: ") and "-O3" in fused.status()
    assert list(tmp_path.iterdir()) == []                 # nothing half-written in the cache


def test_build_is_cached_and_reused(monkeypatch, tmp_path, restore_library):
    """The build and its self-check pass are cached: a later load skips the check (it would
    fail here) until the recorded digest no longer matches, then checks again."""
    assert _fresh_library(monkeypatch, tmp_path) is not None
    built = sorted(tmp_path.glob("fused_grad-*.so"))
    stamps = sorted(tmp_path.glob("fused_grad-*.checked"))
    assert len(built) == 1 and [s.stem for s in stamps] == [built[0].stem] and fused.status().startswith("on (")
    monkeypatch.setattr(fused, "_self_check", lambda lib: "self-check: made to fail")
    fused.reset()
    assert fused.library() is not None and sorted(tmp_path.glob("*")) == sorted(built + stamps)
    stamps[0].write_text("a digest of some other build or eager path")
    fused.reset()
    assert fused.library() is None and "made to fail" in fused.status()


@pytest.mark.parametrize("rule", [dynamics.NormalizedGD(1.0), dynamics.GD(0.5)])
def test_runs_take_the_same_path_with_or_without_the_kernel(rule):
    """A short Figure-9-like run (n=6, T=8, d=4): identical selections and statuses, and the same
    trajectory to rounding, whichever path computes the unrecorded steps."""
    g = torch.Generator().manual_seed(3)
    X = torch.randn(16, 6, 8, 4, dtype=torch.float64, generator=g)
    X /= X.norm(dim=-1, keepdim=True)
    gamma = torch.randn(16, 6, 8, dtype=torch.float64, generator=g)
    prob = dynamics.Problem(X, gamma, get_loss("logistic"))
    p0 = 0.01 * torch.randn(16, 4, dtype=torch.float64, generator=g)
    eager = dynamics.Problem(X, gamma, get_loss("logistic"), fused_kernel=False)
    a, b = dynamics.run(prob, rule, p0, 200), dynamics.run(eager, rule, p0, 200)
    assert a.status == b.status and torch.equal(a.selected, b.selected)
    assert torch.allclose(a.final, b.final, rtol=1e-8, atol=1e-10)


def test_a_damaged_cached_build_is_replaced(monkeypatch, tmp_path, restore_library):
    """A cached library that does not load (cut short, say) is rebuilt by the next process."""
    assert _fresh_library(monkeypatch, tmp_path) is not None
    (built,) = tmp_path.glob("fused_grad-*.so")
    built.unlink()                             # (a new file: this process still maps the old one)
    built.write_bytes(b"truncated")
    out = subprocess.run([sys.executable, "-c", "from attnsvm.attention import fused; print(fused.status())"],
                         capture_output=True, text=True, env={**os.environ, "ATTNSVM_CACHE_DIR": str(tmp_path)},
                         check=True)
    assert out.stdout.startswith("on (") and built.stat().st_size > 1000
    assert sorted(tmp_path.glob("*")) == [built.with_suffix(".checked"), built]


def test_numpy_constants_are_the_eager_paths():
    """The kernel's numpy side restates three things of the torch side: pinned here."""
    from attnsvm.attention import gradients

    assert fused.ROUNDING == gradients.ROUNDING and fused.UNDERFLOW == dynamics.UNDERFLOW
    assert set(fused.LOSS_CODES) == set(LOSSES)
    K, _, _ = batch(4, 5, 3, 4, 3, 0.0, False, False)
    np.testing.assert_allclose(fused.rounding_bound(K.numpy()), gradients.rounding_bound(K).numpy(), rtol=1e-15)


@given(seed=st.integers(0, 10_000), B=st.integers(1, 9), n=st.integers(1, 4), T=st.integers(2, 6),
       d=st.integers(1, 7), log10_scale=st.floats(-2, 3.5), ties=st.booleans(), dead=st.booleans(),
       loss=st.sampled_from(sorted(LOSSES)))
def test_numpy_entry_equals_eager_with_saturation(seed, B, n, T, d, log10_scale, ties, dead, loss):
    """`FusedGrad.of_arrays` (numpy keys, no torch): the eager path's selected tokens, direction,
    log-norm and, from the same pass, its saturation statistic log(1 - s_ref)."""
    K, gamma, p = batch(seed, B, n, T, d, log10_scale, ties, dead)
    kernel = fused.FusedGrad.of_arrays(K.numpy(), gamma.numpy(), loss)
    ws = kernel.workspace()
    direction, log_norm, selected = kernel.arrays(p.numpy(), ws)
    want = linear_head_grad(K, gamma, p, get_loss(loss), stats=True)
    got = fused.FusedGrad.of(K, gamma, get_loss(loss))
    assert_same(type(want)(None, torch.from_numpy(direction.copy()), torch.from_numpy(log_norm.copy()),
                           torch.from_numpy(selected), None), want)
    assert_same(got(p), want)
    np.testing.assert_allclose(kernel.log_unsat(ws), want.log_unsat.numpy(), rtol=1e-9, atol=1e-9)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**16), st.integers(1, 3), st.integers(2, 4), st.integers(1, 3), st.integers(1, 300))
def test_run_takes_normalized_gd_segments_on_the_kernel_loop_bitwise(seed, n, T, d, steps):
    """`dynamics.run` hands normalized GD's unrecorded steps to the kernel's own loop: the
    trajectory (recorded rows, final p, statuses) is bitwise the one of the step-by-step loop."""
    from attnsvm.claims.strategies import gaussian_dataset
    from attnsvm.dynamics import NormalizedGD, Problem, run
    from attnsvm.dynamics import trajectory as tr

    P = Problem.from_datasets([gaussian_dataset(seed + b, n, T, d) for b in range(3)])
    p0 = np.random.default_rng(seed).normal(size=(3, d)) * 4
    fast = run(P, NormalizedGD(0.3), p0, steps)
    orig, tr._fused_normalized_gd = tr._fused_normalized_gd, lambda *a: None
    try:
        slow = run(P, NormalizedGD(0.3), p0, steps)
    finally:
        tr._fused_normalized_gd = orig
    assert fast.steps == slow.steps and fast.status == slow.status
    for name in ("p", "value", "log_grad_norm", "log_unsat", "final", "selected"):
        assert torch.equal(getattr(fast, name), getattr(slow, name)), name


def test_kernel_reads_p_it_was_given_on_a_w_problem():
    """The per-step entry and the kernel's own loop on a W-parameterised problem (d^2 = 100
    coordinates, 5 instances, a padded chunk): both equal the eager gradient step and each
    other, on every call. (The per-step entry once passed the kernel the address of a temporary
    padded copy of p, freed before the call read it: the first instance's step then came from
    reused memory, differently in every process.)"""
    from attnsvm.attention import losses
    from attnsvm.dynamics import cross

    rng = np.random.default_rng(3)
    X = rng.normal(size=(5, 6, 8, 10))
    gamma = rng.normal(size=(5, 6, 8))
    prob = cross.w_problem_from_arrays(X, X[:, :, 0], gamma, "logistic")
    kernel = prob.fused
    for _ in range(3):
        p0 = rng.normal(size=(5, 100)) * 0.3
        want = linear_head_grad(prob.K, prob.gamma, torch.as_tensor(p0), losses.logistic, stats=False)
        direction, log_norm, _ = kernel.arrays(p0)
        np.testing.assert_allclose(direction, want.direction.numpy(), rtol=0, atol=1e-12)
        step = kernel.normalized_gd(p0, 1, 0.1).p
        np.testing.assert_array_equal(step, p0 + direction * -0.1)
