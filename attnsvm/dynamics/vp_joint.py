"""Joint training of the head v and the attention weights p (paper A, Section 3) as a
`dynamics.run` problem: theta = (v, p) in R^{2d} (v first),

    L(v, p) = (1/n) sum_i loss(Y_i v^T X_i^T S(K_i p)),
    grad_v = (1/n) sum_i loss'_i Y_i X_i^T s_i,      grad_p = the linear-head gradient with
                                                     scores gamma_i = Y_i X_i v (Definition 1).

grad_p comes from `gradients.linear_head_grad` (log domain, no cancellation at saturation), so
`dynamics.BlockNormalizedGD(eta, (d, d))` normalises each block's gradient as the authors'
Figure-3 notebook does. The two blocks are joined in the log domain: a block is lost only when
its norm is e^-708 below the other's. (`dynamics.joint` is the (W, v) problem of paper C.)"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from attnsvm.attention import model
from attnsvm.attention.gradients import Grad, linear_head_grad
from attnsvm.attention.losses import Loss, get_loss
from attnsvm.dynamics.problem import default_device


@dataclass(frozen=True)
class VPProblem:
    """B instances of L(v, p): tokens X (B,n,T,d), keys K (B,n,T,d) (X W), labels Y (B,n)."""

    X: torch.Tensor
    K: torch.Tensor
    Y: torch.Tensor
    loss: Loss

    @classmethod
    def from_arrays(cls, X, Y, K=None, loss: Loss | str = "logistic", device=None) -> VPProblem:
        """K defaults to X (W = I)."""
        device = device or default_device()
        X = model.t(X, device)
        return cls(X, X if K is None else model.t(K, device), model.t(Y, device), get_loss(loss))

    @property
    def batch(self) -> int:
        return self.X.shape[0]

    @property
    def dim(self) -> int:
        return 2 * self.X.shape[-1]

    def split(self, theta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(v, p) of theta (..., 2d)."""
        d = self.X.shape[-1]
        return theta[..., :d], theta[..., d:]

    def complements(self, theta: torch.Tensor, alpha) -> tuple[np.ndarray, np.ndarray]:
        """The two curves of Figure 3(c) as their distances to 1, for theta (R, B, 2d): the mean
        softmax mass off tokens alpha, mean_i (1 - s_{i,alpha_i}) (a log-sum-exp over the other
        tokens, exact at saturation), and mean_i (1 - sigmoid(Y_i f(X_i))) = mean_i sigmoid(-Y_i f);
        each (R, B) as numpy arrays."""
        v, p = self.split(theta)
        a = torch.einsum("bntd,rbd->rbnt", self.K, p)
        alpha = torch.as_tensor(np.asarray(alpha), device=a.device).long()
        is_sel = torch.nn.functional.one_hot(alpha, a.shape[-1]).bool().expand(a.shape)
        off = torch.exp(torch.logsumexp(a.masked_fill(is_sel, float("-inf")), -1) - torch.logsumexp(a, -1))
        f = torch.einsum("rbnt,bntd,rbd->rbn", torch.softmax(a, -1), self.X, v)
        return off.mean(-1).cpu().numpy(), torch.sigmoid(-self.Y * f).mean(-1).cpu().numpy()

    def grad(self, theta: torch.Tensor, stats: bool = True) -> Grad:
        """L(v, p) and its gradient (grad_v, grad_p) as one log-domain `Grad` (selected tokens and
        saturation from the p-block)."""
        v, p = self.split(theta)
        gamma = self.Y[..., None] * torch.einsum("bntd,bd->bnt", self.X, v)
        gp = linear_head_grad(self.K, gamma, p, self.loss, stats)
        s = torch.softmax(torch.einsum("bntd,bd->bnt", self.K, p), -1)
        feat = torch.einsum("bnt,bntd->bnd", s, self.X)
        lp = self.loss.deriv(self.Y * torch.einsum("bnd,bd->bn", feat, v))
        gv = torch.einsum("bn,bnd->bd", lp * self.Y, feat) / self.X.shape[1]
        nv = gv.norm(dim=-1)
        log_nv = torch.log(nv)
        dv = gv / torch.where(nv > 0, nv, torch.ones_like(nv))[:, None]
        log_norm = torch.logaddexp(2 * log_nv, 2 * gp.log_norm) / 2
        safe = torch.where(torch.isfinite(log_norm), log_norm, torch.zeros_like(log_norm))[:, None]
        direction = torch.cat([dv * torch.exp(log_nv[:, None] - safe),
                               gp.direction * torch.exp(gp.log_norm[:, None] - safe)], -1)
        return replace(gp, direction=direction, log_norm=log_norm)
