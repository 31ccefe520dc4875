"""Lemma 1: GD on p (step eta) and GD on W (step eta/||u||^2) from W_0 = p_0 u^T/||u||^2 stay
related by W_t = p_t u^T/||u||^2, for random data, losses and heads (linear and MLP).

Both sequences are run with torch autograd on the risk itself (`model.risk`: L(p) with keys X_i,
L(W) with logits X_i W u), not with the closed-form gradients the other results use, so the
check shares no gradient code with what it could confirm; the conclusion holds when
max_t ||W_t - p_t u^T/||u||^2||_F is within `TOL` relative to max(1, ||W_t||_F) over the horizon."""

import numpy as np
import torch

from attnsvm.attention import model
from attnsvm.attention.heads import LinearHead, MLPHead
from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.claims import Instance
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import gaussian_datasets

TOL = 1e-9
STEPS = 25


def _arrays(inst):
    P = inst.params
    return np.array(P["u"], float), np.array(P["p0"], float), np.array(P["W0"], float)


def rank_one_start(inst) -> bool:
    u, p0, W0 = _arrays(inst)
    return np.allclose(W0, np.outer(p0, u) / (u @ u), rtol=0, atol=1e-12)


def step_scaling(inst) -> bool:
    u, _, _ = _arrays(inst)
    return abs(inst.params["eta_W"] - inst.params["eta"] / (u @ u)) <= 1e-12 * inst.params["eta"]


def head_of(inst):
    if inst.params["head"] == "linear":
        return LinearHead(inst.dataset.v)
    return MLPHead.random(inst.dataset.d, 3, np.random.default_rng(inst.params["head_seed"]))


def _autograd(f, x: torch.Tensor) -> torch.Tensor:
    """grad f(x) by torch autograd."""
    x = x.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(f(x), x)
    return g


def tracks(inst, budget) -> Outcome:
    ds, P = inst.dataset, inst.params
    u, p, W = (torch.as_tensor(a) for a in _arrays(inst))
    head, loss, eye = head_of(inst), P["loss"], torch.eye(ds.d, dtype=torch.float64)
    steps = int(STEPS * budget.horizon)
    worst, worst_u = 0.0, 0.0
    for t in range(steps + 1):
        gap = (W - torch.outer(p, u) / (u @ u)).norm() / max(1.0, float(W.norm()))
        worst = max(worst, float(gap))
        worst_u = max(worst_u, float((W @ u - p).norm() / max(1.0, float(p.norm()))))
        if not (torch.isfinite(W).all() and torch.isfinite(p).all()):
            return Outcome(None, reason=f"non-finite iterate at step {t}")
        if t < steps:
            p = p - P["eta"] * _autograd(lambda x: model.risk(ds, x, loss, head, W=eye), p)
            W = W - P["eta_W"] * _autograd(lambda x: model.risk(ds, u, loss, head, W=x), W)
    detail = {"max_rel_gap_W": worst, "max_rel_gap_Wu": worst_u, "steps": steps, "tolerance": TOL}
    return Outcome(worst <= TOL, detail=detail)


def _instances(dropped):
    """A Gaussian dataset, integer u != 0, p_0 and (dropped start) N, a step, a loss and a head."""
    datasets = gaussian_datasets(n=(1, 3), T=(2, 4), d=(1, 3))

    def generate(c) -> Instance:
        ds = datasets.generate(c)
        k = ds.d
        u = np.array([c.integer(-3, 3, "entry") for _ in range(k)], float)
        if not u.any():
            c.reject()
        p0 = np.array([c.integer(-3, 3, "entry") for _ in range(k)], float)
        W0 = np.outer(p0, u) / (u @ u)
        if "rank_one_start" in dropped:     # keep W0 u = p0, add a component N (I - u u^T/|u|^2)
            N = np.array([c.integer(-2, 2, "entry") for _ in range(k * k)], float).reshape(k, k)
            W0 = W0 + N @ (np.eye(k) - np.outer(u, u) / (u @ u))
        eta = c.sampled_from([0.5, 1.0, 2.0])
        eta_W = eta * c.sampled_from([1.0, 0.5, 2.0]) if "step_scaling" in dropped else float(eta / (u @ u))
        return Instance(ds, {"u": u.tolist(), "p0": p0.tolist(), "W0": W0.tolist(), "eta": eta, "eta_W": eta_W,
                             "loss": c.sampled_from(["logistic", "exponential", "correlation"]),
                             "head": c.sampled_from(["linear", "mlp"]), "head_seed": c.integer(0, 1000, "seed")})

    return Space(generate, "Gaussian datasets n 1..3, T 2..4, d 1..3; integer u, p_0 in [-3, 3]; steps, losses, heads")


claim = Claim(
    name="lemma1",
    evaluations=160,
    statement="GD on W with step eta/||u||^2 from W_0 = p_0 u^T/||u||^2 satisfies W_t = p_t u^T/||u||^2 for all t",
    hypotheses=(
        Hypothesis("rank_one_start", "W_0 = p_0 u^T / ||u||^2", rank_one_start),
        Hypothesis("step_scaling", "the W step is eta / ||u||^2", step_scaling),
    ),
    conclusion=tracks,
    instances=_instances,
    proxy=f"max over t <= {STEPS} x horizon of ||W_t - p_t u^T/||u||^2||_F / max(1, ||W_t||_F) <= {TOL}",
)
