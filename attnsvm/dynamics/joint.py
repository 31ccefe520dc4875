"""Joint training of the key-query matrix W and the linear decoder v of self-attention (paper C,
"jointly training W and the linear decoder"): L(W, v) = mean_i loss(Y_i v^T X_i^T S(X_i W z_i)),
trained in theta = (vec W, v) by any `dynamics` rule (`dynamics.run(JointProblem, rule, theta0, H)`).

The W-block is the linear-head gradient of `cross.w_problem` with the current scores
gamma_it = Y_i v^T x_it (log domain, exact at saturation); the v-block is
grad_v = (1/n) sum_i loss'_i Y_i X_i^T s_i; the two are joined in the log domain."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np
import torch

from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.attention.gradients import Grad, Keys, linear_head_grad
from attnsvm.attention.losses import Loss, get_loss
from attnsvm.dynamics.cross import w_keys
from attnsvm.dynamics.problem import default_device


@dataclass(frozen=True)
class JointProblem:
    """B instances; X (B,n,T,d), Z (B,n,d) queries, Y (B,n). theta (B, d*d + d) = (vec W, v),
    W row-major. `K` are the W-keys vec(x_it z_i^T) (for `dynamics.run`: device, size)."""

    X: torch.Tensor
    Z: torch.Tensor
    Y: torch.Tensor
    loss: Loss

    @classmethod
    def from_datasets(cls, datasets: Sequence[Dataset], loss: Loss | str = "logistic", device=None) -> "JointProblem":
        device = device or default_device()
        X = model.t(np.stack([ds.X for ds in datasets]), device)
        Z = model.t(np.stack([model.queries(ds) for ds in datasets]), device)
        Y = model.t(np.stack([ds.Y for ds in datasets]), device)
        return cls(X, Z, Y, get_loss(loss))

    @cached_property
    def K(self) -> torch.Tensor:
        return w_keys(self.X, self.Z)

    @cached_property
    def keys(self) -> Keys:
        return Keys.of(self.K)

    @property
    def batch(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[-1]

    def split(self, theta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(vec W, v) of theta."""
        return theta[..., : self.d * self.d], theta[..., self.d * self.d:]

    def margins(self, theta: torch.Tensor) -> torch.Tensor:
        """Y_i v^T X_i^T S(X_i W z_i), (B, n)."""
        w, v = self.split(theta)
        s = torch.softmax(torch.einsum("bntd,bd->bnt", self.K, w), -1)
        return self.Y * torch.einsum("bnt,bntd,bd->bn", s, self.X, v)

    def grad(self, theta: torch.Tensor) -> Grad:
        w, v = self.split(theta)
        gamma = self.Y[..., None] * torch.einsum("bntd,bd->bnt", self.X, v)
        gw = linear_head_grad(self.keys, gamma, w, self.loss)
        s = torch.softmax(torch.einsum("bntd,bd->bnt", self.K, w), -1)
        feat = torch.einsum("bnt,bntd->bnd", s, self.X)
        lp = self.loss.deriv(self.Y * torch.einsum("bnd,bd->bn", feat, v))
        gv = torch.einsum("bn,bnd->bd", lp * self.Y, feat) / self.X.shape[1]
        nv = gv.norm(dim=-1)
        M = torch.maximum(gw.log_norm, nv.log())
        Ms = torch.where(torch.isfinite(M), M, torch.zeros_like(M))
        vec = torch.cat([gw.direction * torch.exp(gw.log_norm - Ms)[:, None], gv * torch.exp(-Ms)[:, None]], -1)
        n = vec.norm(dim=-1)
        direction = vec / torch.where(n > 0, n, math.inf)[:, None]
        return Grad(gw.value, direction, Ms + n.log(), gw.selected, gw.log_unsat)
