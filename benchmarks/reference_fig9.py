"""One-trial-at-a-time reference for the Figure-9 experiment, written the way the papers'
notebooks are: one torch model, one optimizer loop (SGD on a normalized gradient, g / (||g|| +
eps) under the authors' conventions), one cvxpy solve per trial. `gradient="cancellation-free"` feeds the
optimizer the core's gradient on its eager torch path (`attnsvm.attention.gradients`, batch of one), so
agreement with the batched sweep, whose unrecorded steps run on the fused kernel (`attnsvm.attention.fused`),
tests the batching and the kernel; `gradient="autograd"` differentiates through softmax as the notebooks do.

The class of a run is decided exactly (`geometry.select` on the cvxpy solution: exact KKT
certificate, exact scores), so the reference is slow but authoritative.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from attnsvm import dynamics
from attnsvm.attention.data import Dataset
from attnsvm.attention.losses import get_loss
from attnsvm.interfaces.sweeps import fig9
from attnsvm.svm import geometry


class PromptAttention(torch.nn.Module):
    """f(X_i) = v^T X_i^T S(X_i W p) with W = I and a trainable token p."""

    def __init__(self, v, p0):
        super().__init__()
        self.register_buffer("v", torch.as_tensor(v, dtype=torch.float64))
        self.p = torch.nn.Parameter(torch.as_tensor(p0, dtype=torch.float64).clone())

    def attention(self, X: torch.Tensor) -> torch.Tensor:
        return torch.softmax(X @ self.p, dim=-1)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return torch.einsum("nt,ntd,d->n", self.attention(X), X, self.v)


def train(X, Y, v, p0, steps: int, lr: float, loss: str, gradient: str, eps: float = 0.0) -> np.ndarray:
    """Normalized GD, one step at a time: p <- p - lr g / (||g|| + eps)."""
    Xt, Yt = torch.as_tensor(X), torch.as_tensor(Y)
    model = PromptAttention(v, p0)
    opt = torch.optim.SGD([model.p], lr=lr)
    L = get_loss(loss)
    problem = dataclasses.replace(dynamics.Problem.from_arrays(X[None], fig9.scores(X, Y, v)[None], loss, device="cpu"),
                                  fused_kernel=False)
    for _ in range(steps):
        opt.zero_grad()
        if gradient == "autograd":
            L.value(Yt * model(Xt)).mean().backward()
            g = model.p.grad
            norm = g.norm()
            if norm == 0:
                break
            model.p.grad = g / (norm + eps)
        else:
            g = problem.grad(model.p.detach()[None], stats=False)
            factor = 1.0 / (1.0 + eps * torch.exp(-g.log_norm[0])) if eps else 1.0     # ||g|| / (||g|| + eps)
            model.p.grad = g.direction[0].clone() * factor
        opt.step()
    return model.p.detach().numpy().copy()


def classify(X, Y, v, p, settings: fig9.Settings) -> dict:
    """Same record fields as the batched sweep, decided by `geometry.select` (cvxpy + exact).
    Saturation by the settings' rule: mean_i (1 - s_{i,alpha_i}) <= sat_tol, or the authors'
    band (discard a run with a softmax value in (lo, hi], finite if none is <= lo)."""
    a = X @ p
    s = np.exp(a - a.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    alpha = a.argmax(-1)
    unsat = float(np.mean(1 - s[np.arange(len(alpha)), alpha]))
    rec = {"unsat": unsat, "alpha": alpha.tolist(), "norm": float(np.linalg.norm(p)), "gap": None, "corr": None,
           "certified": None}
    if settings.saturation == "band":
        hi, lo = settings.band
        if ((s > lo) & (s <= hi)).any():
            return {**rec, "cls": "discarded"}
        if not (s <= lo).any():
            return {**rec, "cls": "non-saturated"}
    elif not unsat <= settings.sat_tol:
        return {**rec, "cls": "non-saturated"}
    sel = geometry.select(Dataset.from_arrays(X, Y, v), alpha, solver="cvxpy")
    if not sel.feasible:
        return {**rec, "cls": "unresolved"}
    cls = "gmm" if sel.is_gmm else "lmm" if sel.score_gap > 0 else "neither"
    return {**rec, "cls": cls, "gap": sel.score_gap, "certified": sel.certified, "corr": geometry.corr(p, sel.p_mm)}


def trial(settings: fig9.Settings, d: int, t: int, gradient: str = "cancellation-free") -> dict:
    X, Y, v, p0 = fig9.instance(settings.seed, d, t, settings.n, settings.T, settings.init_scale, settings.labels)
    p = train(X, Y, v, p0, settings.steps, settings.lr, settings.loss, gradient, settings.eps)
    return {"trial": t, "d": d, "p": p.tolist(), **classify(X, Y, v, p, settings)}
