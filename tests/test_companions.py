"""The companion papers (SPEC.md B, C): cross-attention core (attnsvm.cross) and the ids
tfsvm-* and rates-*."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from attnsvm import cross, dynamics, model
from attnsvm.strategies import gaussian_dataset


def _autograd_W(ds, W, loss="logistic"):
    Wt = model.t(W).clone().requires_grad_(True)
    (g,) = torch.autograd.grad(model.risk_cross(ds, Wt, loss), Wt)
    return g


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 3), T=st.integers(2, 4), d=st.integers(1, 4),
       loss=st.sampled_from(["logistic", "exponential", "correlation"]), cross_z=st.booleans())
def test_w_problem_gradient_matches_autograd(seed, n, T, d, loss, cross_z):
    ds = gaussian_dataset(seed, n, T, d)
    rng = np.random.default_rng(seed)
    if cross_z:
        ds = ds.with_(z=rng.normal(size=(n, d)))
    W = rng.normal(size=(d, d))
    g = cross.w_problem([ds], loss).grad(model.t(W.reshape(1, -1)))
    auto = _autograd_W(ds, W, loss)
    assert torch.allclose(g.vector[0].reshape(d, d), auto, atol=1e-10)
    assert torch.allclose(model.grad_W_cross(ds, W, loss), auto, atol=1e-10)
    assert torch.isclose(g.value[0], model.risk_cross(ds, W, loss))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), d=st.integers(1, 4), m=st.integers(1, 4))
def test_kq_pullback_matches_autograd(seed, d, m):
    ds = gaussian_dataset(seed, 2, 3, d)
    kq = cross.KQ(d, m)
    theta = kq.random(np.random.default_rng(seed), batch=1)
    K, Q = kq.unpack(theta)
    g = kq.pullback(cross.w_problem([ds]).grad(kq.to_p(theta)), theta)
    Kt, Qt = K[0].clone().requires_grad_(True), Q[0].clone().requires_grad_(True)
    aK, aQ = torch.autograd.grad(model.risk_cross(ds, Kt @ Qt.T), [Kt, Qt])
    assert torch.allclose(g.vector[0], torch.cat([aK.flatten(), aQ.flatten()]), atol=1e-10)
    cK, cQ = model.grad_KQ(ds, K[0], Q[0])
    assert torch.allclose(aK, cK, atol=1e-10) and torch.allclose(aQ, cQ, atol=1e-10)


def test_kq_direction_survives_underflow():
    """At a scale where ||grad_W|| underflows, normalized GD in (K, Q) still moves, along the
    direction it has at moderate scale (the log-domain norm carries the scale)."""
    ds = gaussian_dataset(3, 2, 3, 2)
    prob, kq = cross.w_problem([ds]), cross.KQ(2, 2)
    theta = kq.random(np.random.default_rng(0), batch=1)
    big = theta * 60.0   # logits scale as 3600 x: softmax saturates far beyond float64
    g = kq.pullback(prob.grad(kq.to_p(big)), big)
    assert g.log_norm[0] < dynamics.UNDERFLOW and torch.all(g.vector == 0)
    assert torch.isclose(g.direction[0].norm(), torch.tensor(1.0, dtype=torch.float64))
    tr = dynamics.run(prob, dynamics.NormalizedGD(0.5), big, 3, param=kq)
    assert tr.status == ["ok"] and not torch.equal(tr.theta, big)
    tr = dynamics.run(prob, dynamics.GD(0.5), big, 3, param=kq)
    assert tr.status == ["stalled"]


def test_run_identity_parameterisation_unchanged():
    """`run` with the default parameterisation: theta = p, final = theta."""
    ds = gaussian_dataset(1, 2, 3, 2)
    prob = cross.w_problem([ds, gaussian_dataset(2, 2, 3, 2)])
    tr = dynamics.run(prob, dynamics.GD(0.3), np.zeros(4), 5)
    assert torch.equal(tr.final, tr.theta)
    p = torch.zeros(2, 4, dtype=torch.float64)
    for _ in range(5):
        p = p - 0.3 * prob.grad(p).vector
    assert torch.allclose(tr.final, p, atol=1e-14)


def test_kq_run_is_w_of_kq():
    """The recorded p of a (K, Q) run is vec(K Q^T) of its theta."""
    ds = gaussian_dataset(4, 2, 3, 3)
    kq = cross.KQ(3, 2)
    tr = dynamics.run(cross.w_problem([ds]), dynamics.NormalizedGD(0.1), kq.random(np.random.default_rng(1)), 20, param=kq)
    K, Q = kq.unpack(tr.theta)
    assert torch.allclose(tr.final, (K @ Q.transpose(-1, -2)).flatten(-2))


def _mp_log_excess(K, gam, p, digits=30):
    """log(L(p) - mean_i loss(max_t gamma_it)), logistic loss, in mpmath."""
    import mpmath

    a = K @ p
    mpmath.mp.dps = digits + int(np.ptp(a, axis=-1).max() / np.log(10)) + 10
    total = mpmath.mpf(0)
    for i in range(K.shape[0]):
        e = [mpmath.exp(mpmath.mpf(x)) for x in a[i]]
        f = mpmath.fsum(x * g for x, g in zip(e, gam[i])) / mpmath.fsum(e)
        top = mpmath.mpf(max(gam[i]))
        total += mpmath.log1p(mpmath.exp(-f)) - mpmath.log1p(mpmath.exp(-top))
    return float(mpmath.log(total / K.shape[0]))


@pytest.mark.parametrize("scale", [0.5, 5.0, 40.0, 300.0, 3000.0])
def test_log_excess_matches_high_precision(scale):
    """Grad.log_excess = log(L - L_inf) to 1e-9 relative, also where L - L_inf < 1e-16 L."""
    ds = gaussian_dataset(7, 2, 3, 2, labels="positive")
    res = __import__("attnsvm.svm", fromlist=["att_svm"]).att_svm(ds, model.optimal_tokens(ds))
    p = res.x / np.linalg.norm(res.x) * scale + np.random.default_rng(0).normal(size=2) * 0.1
    K, gam = model.keys(ds), model.scores(ds)
    g = dynamics.Problem.from_datasets([ds]).grad(model.t(p)[None])
    assert float(g.log_excess[0]) == pytest.approx(_mp_log_excess(K, gam, p), rel=1e-9, abs=1e-9)


def test_polyak_infimum_keeps_moving_at_deep_saturation():
    """With f_star = 'infimum' the Polyak step survives saturation; with the float difference
    L - f_star it is 0 there and the run freezes."""
    ds = gaussian_dataset(7, 2, 3, 2, labels="positive")
    prob = dynamics.Problem.from_datasets([ds])
    p0 = model.t(np.array([1.0, 0.0]))
    p_far = dynamics.run(prob, dynamics.NormalizedGD(5.0), p0, 40).final
    L_inf = float(np.mean(np.log1p(np.exp(-model.scores(ds).max(1)))))
    assert float(prob.grad(p_far).value[0]) - L_inf == 0.0          # cancelled in float64
    tr = dynamics.run(prob, dynamics.Polyak("infimum"), p_far, 5)
    assert tr.status == ["ok"] and float((tr.final - p_far).norm()) > 0.1
    tr = dynamics.run(prob, dynamics.Polyak(L_inf), p_far, 5)
    assert tr.status == ["stationary"]


def test_per_instance_rules_equal_separate_runs():
    ds = gaussian_dataset(5, 2, 3, 2)
    rules = (dynamics.GD(0.5), dynamics.NormalizedGD(0.1), dynamics.Polyak("infimum"))
    prob = cross.w_problem([ds] * 3)
    W0 = np.random.default_rng(0).normal(size=(3, 4))
    together = dynamics.run(prob, dynamics.PerInstance(rules), W0, 30)
    for b, r in enumerate(rules):
        alone = dynamics.run(cross.w_problem([ds]), r, W0[b], 30)
        assert torch.allclose(together.final[b], alone.final[0], atol=1e-13)
