"""The fast path of the log-domain gradient: statistics skipped on unrecorded steps, the two
batched mat-vecs (`Keys`), and the one-mat-vec form sum_t w'_t k_t (w'_ref = -sum w_t) with its
rounding bound, against explicit differences and 60-digit references (near-duplicate keys)."""

import dataclasses
import math

import mpmath
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnsvm import dynamics
from attnsvm.attention import model
from attnsvm.attention.gradients import (
    CHAIN_MAX_DIM,
    ROUNDING,
    STATS,
    Keys,
    linear_head_grad,
)
from attnsvm.attention.losses import LOSSES, get_loss
from attnsvm.claims.strategies import gaussian_dataset

seeds = st.integers(0, 10_000)
losses = st.sampled_from(sorted(LOSSES))


def t(x):
    return torch.as_tensor(np.asarray(x), dtype=torch.float64)


def explicit_differences(K, gamma, p, loss):
    """grad L(p) = (1/n) sum_i loss'_i sum_t s_it (gamma_it - f_i)(k_it - k_iref) in float64 with
    the differences formed explicitly (unsaturated inputs only: plain softmax)."""
    a = torch.einsum("bntd,bd->bnt", K, p)
    s = torch.softmax(a, -1)
    f = (s * gamma).sum(-1)
    ref = a.argmax(-1)
    k_ref = torch.gather(K, 2, ref[..., None, None].expand(-1, -1, 1, K.shape[-1]))
    w = loss.deriv(f)[..., None] * s * (gamma - f[..., None])
    return torch.einsum("bnt,bntd->bd", w, K - k_ref) / K.shape[1]


def mp_grad(K, gamma, p, digits=30):
    """(direction, log norm) of the logistic-loss gradient of one instance (K (n,T,d), gamma (n,T))
    in mpmath, with enough digits for any saturation and for keys equal to 1e-15."""
    a = np.einsum("ntd,d->nt", K, p)
    mpmath.mp.dps = digits + 20 + int(np.ptp(a, axis=-1).max() / np.log(10))
    n, T, d = K.shape
    g = [mpmath.mpf(0)] * d
    for i in range(n):
        ai = [mpmath.fsum(mpmath.mpf(K[i, s, j]) * mpmath.mpf(p[j]) for j in range(d)) for s in range(T)]
        e = [mpmath.exp(x) for x in ai]
        s = [x / mpmath.fsum(e) for x in e]
        f = mpmath.fsum(s[u] * mpmath.mpf(gamma[i, u]) for u in range(T))
        lp = -1 / (1 + mpmath.exp(f))
        for j in range(d):
            g[j] += lp * mpmath.fsum(s[u] * (mpmath.mpf(gamma[i, u]) - f) * mpmath.mpf(K[i, u, j]) for u in range(T))
    nrm = mpmath.sqrt(mpmath.fsum(x * x for x in g))
    if nrm == 0:
        return np.zeros(d), -math.inf
    return np.array([float(x / nrm) for x in g]), float(mpmath.log(nrm / n))


@given(seeds, losses, st.integers(1, 4))
def test_without_statistics_the_same_direction_and_norm(seed, loss, B):
    ds = [gaussian_dataset(seed + b, 3, 4, 3) for b in range(B)]
    prob = dataclasses.replace(dynamics.Problem.from_datasets(ds, loss), fused_kernel=False)   # (test_fused_kernel)
    p = t(np.random.default_rng(seed).normal(size=(B, 3)) * 10 ** np.random.default_rng(seed).uniform(-1, 2.5))
    full, light = prob.grad(p), prob.grad(p, stats=False)
    assert all(getattr(light, f) is None for f in STATS) and all(getattr(full, f) is not None for f in STATS)
    assert torch.equal(full.direction, light.direction) and torch.equal(full.log_norm, light.log_norm)
    assert torch.equal(full.selected, light.selected)


@given(seeds, losses)
def test_one_matvec_form_equals_explicit_differences(seed, loss):
    ds = [gaussian_dataset(seed + b, 3, 5, 4) for b in range(3)]
    prob = dynamics.Problem.from_datasets(ds, loss)
    p = t(np.random.default_rng(seed).normal(size=(3, 4)))
    want = explicit_differences(prob.K, prob.gamma, p, get_loss(loss))
    assert torch.allclose(prob.grad(p).vector, want, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("d", [2, CHAIN_MAX_DIM, CHAIN_MAX_DIM + 3])
def test_keys_matvecs(d):
    rng = np.random.default_rng(d)
    K, p, w = t(rng.normal(size=(5, 3, 4, d))), t(rng.normal(size=(5, d))), t(rng.normal(size=(5, 3, 4)))
    keys = Keys.of(K)
    assert torch.allclose(keys.logits(p).view(5, 3, 4), torch.einsum("bntd,bd->bnt", K, p), rtol=1e-14, atol=1e-14)
    assert torch.allclose(keys.combine(w.view(5, 12)), torch.einsum("bnt,bntd->bd", w, K), rtol=1e-14, atol=1e-14)
    assert torch.allclose(keys.bound, K.norm(dim=-1).flatten(1).amax(-1) * 2 * 3 * ROUNDING)


@pytest.mark.parametrize("d", [5, CHAIN_MAX_DIM + 4])
def test_batched_gradient_equals_one_instance_at_a_time(d):
    ds = [gaussian_dataset(s, 6, 8, d) for s in range(7)]
    prob = dynamics.Problem.from_datasets(ds)
    p = t(np.random.default_rng(0).normal(size=(7, d)) * 30)
    g = prob.grad(p)
    for b in range(7):
        one = dynamics.Problem.from_datasets(ds[b:b + 1]).grad(p[b:b + 1])
        assert torch.allclose(one.direction, g.direction[b:b + 1], rtol=0, atol=1e-15)
        assert torch.allclose(one.log_norm, g.log_norm[b:b + 1], rtol=1e-15)


def near_duplicate_instance(seed, eps):
    """Two inputs of four tokens in R^3, input 0's keys within eps of each other, input 1 generic;
    random scores and p."""
    rng = np.random.default_rng(seed)
    K = rng.normal(size=(2, 4, 3))
    K[0, 1:] = K[0, 0] + eps * rng.normal(size=(3, 3))
    return K, rng.normal(size=(2, 4)), rng.normal(size=3) * 2


@pytest.mark.parametrize("eps", [1e-3, 1e-6, 1e-9])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_near_duplicate_keys_accurate(seed, eps):
    """Input 0's gradient is O(eps) relative to its terms; input 1's is O(1): the one-mat-vec form
    loses ~1e-16/eps relative accuracy on input 0 only, so the total stays accurate."""
    K, gam, p = near_duplicate_instance(seed, eps)
    g = linear_head_grad(t(K)[None], t(gam)[None], t(p)[None], get_loss("logistic"))
    want, log_norm = mp_grad(K, gam, p)
    assert float(g.direction[0] @ t(want)) > 1 - 1e-12
    assert float(g.log_norm[0]) == pytest.approx(log_norm, rel=1e-10, abs=1e-10)


@pytest.mark.parametrize("eps", [1e-4, 1e-8, 1e-11, 1e-12, 1e-13, 1e-15, 0.0])
@pytest.mark.parametrize("seed", [3, 5])
def test_near_duplicate_keys_alone_accurate_or_untrusted(seed, eps):
    """When every input's keys are within eps of each other the whole gradient is O(eps) relative
    to its terms: it is accurate to ~1e-16/eps, or (below the rounding bound, eps <~ 1e-11)
    untrusted: direction 0 and log_norm the bound's, not below the true log norm (to rounding)."""
    K, gam, p = near_duplicate_instance(seed, eps)
    K[1, 1:] = K[1, 0] + eps * np.random.default_rng(seed + 1).normal(size=(3, 3))
    g = linear_head_grad(t(K)[None], t(gam)[None], t(p)[None], get_loss("logistic"))
    want, log_norm = mp_grad(K, gam, p)
    direction = g.direction[0].numpy()
    if np.any(direction != 0):
        angle = 1e-14 / eps                                    # rounding 1e-16 x terms, 100x slack
        assert float(direction @ want) >= math.cos(min(angle, 1.0)) - 1e-15
        assert float(g.log_norm[0]) == pytest.approx(log_norm, rel=1e-10, abs=angle)
    else:
        assert eps <= 1e-11
        assert float(g.log_norm[0]) >= log_norm - 0.01
    if eps <= 1e-13:
        assert np.all(direction == 0)
    if eps == 0.0:
        assert log_norm == -math.inf


def test_identical_tokens_stop_as_stationary():
    """Every input's tokens identical: the gradient is exactly 0 at a finite point; NGD and GD
    stop there and the run says 'stationary' (not 'stalled': no underflow is involved)."""
    K = np.repeat(np.random.default_rng(0).normal(size=(2, 1, 3)), 4, axis=1)
    gam = np.random.default_rng(1).normal(size=(2, 4))
    prob = dynamics.Problem.from_arrays(K[None], gam[None])
    p0 = np.array([0.3, -0.2, 0.1])
    g = prob.grad(model.t(p0)[None])
    assert torch.all(g.direction == 0) and float(g.log_norm[0]) > dynamics.UNDERFLOW
    for rule in (dynamics.NormalizedGD(0.5), dynamics.GD(0.5)):
        tr = dynamics.run(prob, rule, p0, 3)
        assert tr.status == ["stationary"] and torch.equal(tr.final[0], model.t(p0))


class Unannotated:
    """A rule without `needs`: `run` gives it the full statistics on every step."""

    def __init__(self, rule):
        self.rule = rule

    def init(self, p):
        return self.rule.init(p)

    def update(self, g, state, p):
        assert g.value is not None and g.log_excess is not None
        return self.rule.update(g, state, p)


@pytest.mark.parametrize("rule", [dynamics.NormalizedGD(0.3), dynamics.GD(2.0), dynamics.Polyak("infimum"),
                                  dynamics.PerInstance((dynamics.GD(2.0), dynamics.NormalizedGD(0.3)) * 8)])
def test_skipping_statistics_leaves_runs_unchanged(rule):
    """16 instances: a library rule's batch is padded to a multiple of 16 (`dynamics.run`), the
    wrapper's is not, so both run on the same rows."""
    ds = [gaussian_dataset(seed, 3, 4, 3) for seed in range(11, 27)]
    prob = dataclasses.replace(dynamics.Problem.from_datasets(ds), fused_kernel=False)   # bit-exact: one path
    p0 = np.random.default_rng(0).normal(size=(16, 3))
    fast, full = dynamics.run(prob, rule, p0, 200), dynamics.run(prob, Unannotated(rule), p0, 200)
    assert torch.equal(fast.final, full.final) and fast.status == full.status
    for a, b in ((fast.value, full.value), (fast.log_grad_norm, full.log_grad_norm), (fast.log_unsat, full.log_unsat)):
        assert torch.equal(a, b)


def test_rules_declare_what_they_read():
    assert dynamics.NormalizedGD(1.0).needs == frozenset() == dynamics.GD(1.0).needs
    assert dynamics.Polyak().needs <= STATS and dynamics.Polyak().needs
    per = dynamics.PerInstance((dynamics.GD(1.0), dynamics.Polyak("infimum")))
    assert per.needs == dynamics.Polyak().needs
    assert dynamics.PerInstance((dynamics.GD(1.0), Unannotated(dynamics.GD(1.0)))).needs == STATS
