"""Model and gradients: closed forms against torch autograd; the cancellation-free,
log-domain gradient against a 60-digit reference at deep saturation."""

import math

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnsvm import dynamics
from attnsvm.attention import model
from attnsvm.attention.gradients import Grad, linear_head_grad
from attnsvm.attention.heads import MLPHead
from attnsvm.attention.losses import LOSSES, custom, get_loss
from attnsvm.claims.strategies import gaussian_dataset
from attnsvm.svm import geometry

seeds = st.integers(0, 10_000)
losses = st.sampled_from(sorted(LOSSES))


def autograd(fn, x):
    x = torch.as_tensor(x, dtype=torch.float64).clone().requires_grad_(True)
    (g,) = torch.autograd.grad(fn(x), x)
    return g


@given(seeds, losses, st.booleans())
def test_grad_p_matches_autograd(seed, loss, mlp):
    rng = np.random.default_rng(seed)
    ds = gaussian_dataset(seed, 3, 4, 3, W="random")
    head = MLPHead.random(3, 4, rng) if mlp else None
    p = rng.normal(size=3)
    want = autograd(lambda q: model.risk(ds, q, loss, head), p)
    assert torch.allclose(model.grad_p(ds, p, loss, head), want, atol=1e-12, rtol=1e-9)


@given(seeds, losses, st.booleans())
def test_grad_W_and_KQ_match_autograd(seed, loss, mlp):
    rng = np.random.default_rng(seed)
    ds = gaussian_dataset(seed, 2, 3, 3)
    head = MLPHead.random(3, 4, rng) if mlp else None
    W, u = rng.normal(size=(3, 3)), rng.normal(size=3)
    want = autograd(lambda M: model.risk(ds, M @ torch.as_tensor(u), loss, head, W=torch.eye(3, dtype=torch.float64)),
                    W)
    assert torch.allclose(model.grad_W(ds, W, u, loss, head), want, atol=1e-12, rtol=1e-9)
    K, Q = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    gK = autograd(lambda k: model.risk_cross(ds, k @ torch.as_tensor(Q).T, loss, head), K)
    gQ = autograd(lambda q: model.risk_cross(ds, torch.as_tensor(K) @ q.T, loss, head), Q)
    cK, cQ = model.grad_KQ(ds, K, Q, loss, head)
    assert torch.allclose(cK, gK, atol=1e-12, rtol=1e-9) and torch.allclose(cQ, gQ, atol=1e-12, rtol=1e-9)


@given(seeds, losses)
def test_batched_log_domain_grad_matches_closed_form_when_unsaturated(seed, loss):
    ds = gaussian_dataset(seed, 3, 4, 3)
    p = np.random.default_rng(seed).normal(size=3)
    g = linear_head_grad(model.t(model.keys(ds))[None], model.t(model.scores(ds))[None], model.t(p)[None],
                         get_loss(loss))
    assert torch.allclose(g.vector[0], model.grad_p(ds, p, loss), atol=1e-13, rtol=1e-9)
    assert float(g.value[0]) == pytest.approx(float(model.risk(ds, p, loss)), rel=1e-12)


def reference_direction(ds, p, digits=40):
    """grad_p L for the logistic loss in mpmath with enough digits that gamma_t - f keeps
    `digits` significant digits at any saturation (the logit spread in base 10, plus 40)."""
    K, gam = model.keys(ds), model.scores(ds)
    spread = float(np.ptp(K @ p, axis=-1).max())
    mpmath.mp.dps = digits + int(spread / np.log(10)) + 10
    g = [mpmath.mpf(0)] * ds.d
    for i in range(ds.n):
        a = [mpmath.fsum(mpmath.mpf(K[i, t, j]) * mpmath.mpf(p[j]) for j in range(ds.d)) for t in range(ds.T)]
        e = [mpmath.exp(x) for x in a]
        s = [x / mpmath.fsum(e) for x in e]
        f = mpmath.fsum(s[t] * gam[i, t] for t in range(ds.T))
        lp = -1 / (1 + mpmath.exp(f))
        for j in range(ds.d):
            g[j] += lp * mpmath.fsum(s[t] * (gam[i, t] - f) * K[i, t, j] for t in range(ds.T))
    nrm = mpmath.sqrt(mpmath.fsum(x * x for x in g))
    return np.array([float(x / nrm) for x in g]), float(mpmath.log(nrm / ds.n))


@pytest.mark.parametrize("scale", [10.0, 60.0, 400.0, 2000.0])
@pytest.mark.parametrize("seed", [2, 13])
def test_direction_survives_saturation_and_underflow(seed, scale):
    ds = gaussian_dataset(seed, 2, 3, 2)
    p = np.random.default_rng(seed).normal(size=2) * scale
    want, log_norm = reference_direction(ds, p)
    g = linear_head_grad(model.t(model.keys(ds))[None], model.t(model.scores(ds))[None], model.t(p)[None],
                         get_loss("logistic"))
    assert float(g.direction[0] @ torch.as_tensor(want)) > 1 - 1e-10
    assert float(g.log_norm[0]) == pytest.approx(log_norm, rel=1e-9)


def textbook_ngd(ds, p0, steps, eta):
    """NGD with autograd through softmax: the cancelling form the issue warns about."""
    p = torch.tensor(p0, dtype=torch.float64)
    for _ in range(steps):
        g = autograd(lambda q: model.risk(ds, q), p)
        if g.norm() == 0:
            break
        p = p - eta * g / g.norm()
    return p.numpy()


def test_ngd_on_gmm_direction_stays_there_where_autograd_drifts():
    """Issue 2's scenario: one input, three tokens, start at corr 0.99 with the GMM, 3000 NGD steps of 0.1."""
    ds = gaussian_dataset(13, 1, 3, 2, labels="positive")
    q = geometry.gmm(ds).p_mm
    q = q / np.linalg.norm(q)
    c, s = np.cos(0.14), np.sin(0.14)
    p0 = 30 * np.array([[c, -s], [s, c]]) @ q
    assert geometry.corr(p0, q) == pytest.approx(0.99, abs=1e-3)
    tr = dynamics.run(dynamics.Problem.from_datasets([ds]), dynamics.NormalizedGD(0.1), p0, 3000)
    assert tr.status == ["ok"]
    assert geometry.corr(tr.final[0].numpy(), q) > 0.9999
    assert geometry.corr(textbook_ngd(ds, p0, 3000, 0.1), q) < 0.5      # the failure mode is real


def test_fixed_step_gd_reports_stalled_at_deep_saturation():
    ds = gaussian_dataset(13, 1, 3, 2, labels="positive")
    q = geometry.gmm(ds).p_mm
    tr = dynamics.run(dynamics.Problem.from_datasets([ds]), dynamics.GD(1.0), 2000 * q / np.linalg.norm(q), 5)
    assert tr.status == ["stalled"]
    assert float(tr.log_grad_norm[-1, 0]) < dynamics.UNDERFLOW


def test_update_rules_step_lengths():
    ds = gaussian_dataset(3, 2, 3, 2)
    prob = dynamics.Problem.from_datasets([ds])
    p0 = np.array([0.3, -0.2])
    g = prob.grad(model.t(p0)[None])
    one = lambda rule: dynamics.run(prob, rule, p0, 1).final[0].numpy() - p0
    assert np.allclose(one(dynamics.GD(0.5)), -0.5 * g.vector[0].numpy(), atol=1e-15)
    assert np.linalg.norm(one(dynamics.NormalizedGD(0.25))) == pytest.approx(0.25)
    step = one(dynamics.Polyak(f_star=0.1))
    want = (float(g.value[0]) - 0.1) / float(torch.exp(g.log_norm[0]))
    assert np.linalg.norm(step) == pytest.approx(want, rel=1e-9)
    assert geometry.corr(step, -g.direction[0].numpy()) == pytest.approx(1.0)


def test_custom_loss_uses_autograd_derivative():
    sq = custom(lambda u: (1 - u).clamp_min(0) ** 2, "squared-hinge")
    u = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64)
    assert torch.allclose(sq.deriv(u), torch.tensor([-4.0, -1.0, 0.0], dtype=torch.float64))
    assert sq.constants is None


@given(st.integers(0, 1000), st.lists(st.integers(1, 4), min_size=1, max_size=3), st.floats(0.01, 2))
def test_block_normalized_gd_moves_each_block_by_eta(seed, sizes, eta):
    """Each block of the step has norm eta and the direction of that block's gradient; with one
    block it is normalized GD; a block whose gradient is 0 does not move."""
    g = torch.Generator().manual_seed(seed)
    B, D = 3, sum(sizes)
    raw = torch.randn(B, D, dtype=torch.float64, generator=g)
    raw[0, :sizes[0]] = 0.0
    grad = Grad(None, raw / raw.norm(dim=-1, keepdim=True).clamp_min(1e-300), torch.zeros(B, dtype=torch.float64),
                None, None)
    p = torch.zeros(B, D, dtype=torch.float64)
    rule = dynamics.BlockNormalizedGD(eta, tuple(sizes))
    rule.init(p)
    step, _ = rule.update(grad, None, p)
    start = 0
    for size in sizes:
        blk, gb = step[:, start:start + size], grad.direction[:, start:start + size]
        for b in range(B):
            if gb[b].norm() == 0:
                assert torch.equal(blk[b], torch.zeros(size, dtype=torch.float64))
            else:
                assert math.isclose(blk[b].norm().item(), eta, rel_tol=1e-12)
                assert torch.allclose(blk[b], -eta * gb[b] / gb[b].norm(), atol=1e-14)
        start += size
    one, _ = dynamics.BlockNormalizedGD(eta, (D,)).update(grad, None, p)
    assert torch.allclose(one, dynamics.NormalizedGD(eta).update(grad, None, p)[0], atol=1e-15)
    with pytest.raises(ValueError, match="do not add up"):
        dynamics.BlockNormalizedGD(eta, (D + 1,)).init(p)
