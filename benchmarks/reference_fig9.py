"""One-trial-at-a-time reference for the Figure-9 experiment, written the way the papers'
notebooks are: one torch model, one optimizer loop (SGD on a normalized gradient), one cvxpy
solve per trial. `gradient="cancellation-free"` feeds the optimizer the core's gradient on its
eager torch path (`attnsvm.attention.gradients`, batch of one), so agreement with the batched sweep, whose
unrecorded steps run on the fused kernel (`attnsvm.attention.fused`), tests the batching and the kernel;
`gradient="autograd"` differentiates through softmax as the notebooks do.

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


def train(X, Y, v, p0, steps: int, lr: float, loss: str, gradient: str) -> np.ndarray:
    """Normalized GD, one step at a time: p <- p - lr g / ||g||."""
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
            model.p.grad = g / norm
        else:
            model.p.grad = problem.grad(model.p.detach()[None], stats=False).direction[0].clone()
        opt.step()
    return model.p.detach().numpy().copy()


def classify(X, Y, v, p, sat_tol: float) -> dict:
    """Same record fields as the batched sweep, decided by `geometry.select` (cvxpy + exact)."""
    a = X @ p
    s = np.exp(a - a.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    alpha = a.argmax(-1)
    unsat = float(np.mean(1 - s[np.arange(len(alpha)), alpha]))
    rec = {"unsat": unsat, "alpha": alpha.tolist(), "norm": float(np.linalg.norm(p)), "gap": None, "corr": None,
           "certified": None}
    if not unsat <= sat_tol:
        return {**rec, "cls": "non-saturated"}
    sel = geometry.select(Dataset.from_arrays(X, Y, v), alpha, solver="cvxpy")
    if not sel.feasible:
        return {**rec, "cls": "unresolved"}
    cls = "gmm" if sel.is_gmm else "lmm" if sel.score_gap > 0 else "neither"
    return {**rec, "cls": cls, "gap": sel.score_gap, "certified": sel.certified, "corr": geometry.corr(p, sel.p_mm)}


def trial(settings: fig9.Settings, d: int, t: int, gradient: str = "cancellation-free") -> dict:
    X, Y, v, p0 = fig9.instance(settings.seed, d, t, settings.n, settings.T, settings.init_scale)
    p = train(X, Y, v, p0, settings.steps, settings.lr, settings.loss, gradient)
    return {"trial": t, "d": d, "p": p.tolist(), **classify(X, Y, v, p, settings.sat_tol)}
