"""Lemma 1: GD on p (step eta) and GD on W (step eta/||u||^2) from W_0 = p_0 u^T/||u||^2 stay
related by W_t = p_t u^T/||u||^2, for random data, losses and heads (linear and MLP).

Both sequences are run with the closed-form gradients of attnsvm.attention.model (L_p has keys X_i,
L_W has logits X_i W u); the conclusion holds when max_t ||W_t - p_t u^T/||u||^2||_F is
within `TOL` relative to max(1, ||W_t||_F) over the horizon."""

import numpy as np
import torch
from hypothesis import strategies as st

from attnsvm.attention import model
from attnsvm.attention.heads import LinearHead, MLPHead
from attnsvm.claims import Claim, Hypothesis, Outcome
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
            p = p - P["eta"] * model.grad_p(ds, p, loss, head, W=eye)
            W = W - P["eta_W"] * model.grad_W(ds, W, u, loss, head)
    detail = {"max_rel_gap_W": worst, "max_rel_gap_Wu": worst_u, "steps": steps, "tolerance": TOL}
    return Outcome(worst <= TOL, detail=detail)


def _instances(dropped):
    d = st.shared(st.integers(1, 3), key="d")
    vec = lambda: d.flatmap(lambda k: st.lists(st.integers(-3, 3), min_size=k, max_size=k))
    nonzero = vec().filter(lambda x: any(x))

    def build(ds, u, p0, N, eta, eta_scale, loss, head, head_seed):
        u, p0 = np.array(u, float), np.array(p0, float)
        W0 = np.outer(p0, u) / (u @ u)
        if "rank_one_start" in dropped:     # keep W0 u = p0, add a component N (I - u u^T/|u|^2)
            N = np.array(N, float).reshape(ds.d, ds.d)
            W0 = W0 + N @ (np.eye(ds.d) - np.outer(u, u) / (u @ u))
        eta_W = float(eta / (u @ u)) if "step_scaling" not in dropped else eta * eta_scale
        from attnsvm.claims import Instance
        return Instance(ds, {"u": u.tolist(), "p0": p0.tolist(), "W0": W0.tolist(), "eta": eta, "eta_W": eta_W,
                             "loss": loss, "head": head, "head_seed": head_seed})

    return st.builds(build, gaussian_datasets(n=st.integers(1, 3), T=st.integers(2, 4), d=d), nonzero, vec(),
                     d.flatmap(lambda k: st.lists(st.integers(-2, 2), min_size=k * k, max_size=k * k)),
                     st.sampled_from([0.5, 1.0, 2.0]), st.sampled_from([1.0, 0.5, 2.0]),
                     st.sampled_from(["logistic", "exponential", "correlation"]), st.sampled_from(["linear", "mlp"]),
                     st.integers(0, 1000))


claim = Claim(
    name="lemma1",
    statement="GD on W with step eta/||u||^2 from W_0 = p_0 u^T/||u||^2 satisfies W_t = p_t u^T/||u||^2 for all t",
    hypotheses=(
        Hypothesis("rank_one_start", "W_0 = p_0 u^T / ||u||^2", rank_one_start),
        Hypothesis("step_scaling", "the W step is eta / ||u||^2", step_scaling),
    ),
    conclusion=tracks,
    instances=_instances,
    proxy=f"max over t <= {STEPS} x horizon of ||W_t - p_t u^T/||u||^2||_F / max(1, ||W_t||_F) <= {TOL}",
)
