"""The numerics of the authors' public experiment code (docs/reproducing.md), as composable pieces of
`dynamics.run`, to reproduce their runs and to isolate what each convention changes:

- `NaiveProblem`: the risk's gradient as float64 autograd through the softmax computes it,
  d L/d a_it = loss'_i s_it (gamma_it - sum_u s_iu gamma_iu) / n (no log domain: once the
  softmax saturates, gamma_opt - f is rounding noise and tiny gradients underflow);
- `AutogradHeadProblem`: the same for a nonlinear head (`cross.HeadProblem`), by torch's autograd;
- `Ridge`: the loss plus eps ||theta||^2 (their (K, Q) runs add eps (||K||_F^2 + ||Q||_F^2),
  eps = float64 machine epsilon), combined with the pulled-back gradient in the log domain;
- `EpsNormalizedGD`: per parameter tensor, theta_k <- theta_k - eta g_k / (||g_k|| + eps), the
  composition `Normalize(sizes, eps)` then `Descend(eta)` of `dynamics.rules`.

With `Ridge` the runs follow normalized GD on L + eps R: once ||grad L|| falls to the order of
eps ||theta|| the iterate settles near the minimizer of the regularized risk, a point of the
regularization path at lambda = eps (for (K, Q): L(W) + 2 eps ||W||_*)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import torch

from attnsvm.attention.gradients import Grad
from attnsvm.attention.losses import Loss, get_loss
from attnsvm.dynamics.rules import Chain, Descend, Normalize, Parameterisation, chain

EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class NaiveProblem:
    """B instances of L(p) = mean_i loss(<S(K_i p), gamma_i>) with the gradient of float64
    autograd (softmax backward s * (g - <s, g>)); the `dynamics.Problem` interface. K (B,n,T,D),
    gamma (B,n,T). log_unsat is measured in the log domain (a statistic, not used by the step)."""

    K: torch.Tensor
    gamma: torch.Tensor
    loss: Loss

    @classmethod
    def of(cls, problem) -> NaiveProblem:
        return cls(problem.K, problem.gamma, get_loss(problem.loss))

    @property
    def batch(self) -> int:
        return self.K.shape[0]

    def grad(self, p: torch.Tensor) -> Grad:
        a = torch.einsum("bntd,bd->bnt", self.K, p)
        s = torch.softmax(a, -1)
        f = (s * self.gamma).sum(-1)
        lp = self.loss.deriv(f) / self.gamma.shape[1]
        ga = lp[..., None] * s * (self.gamma - f[..., None])
        G = torch.einsum("bnt,bntd->bd", ga, self.K)
        norm = G.norm(dim=-1)
        direction = G / torch.where(norm > 0, norm, math.inf)[:, None]
        top, ref = a.max(-1)
        is_ref = torch.nn.functional.one_hot(ref, a.shape[-1]).bool()
        log_unsat = torch.logsumexp(a.masked_fill(is_ref, float("-inf")), -1) - torch.logsumexp(a, -1)
        return Grad(self.loss.value(f).mean(-1), direction, norm.log(), ref, log_unsat)


@dataclass(frozen=True)
class AutogradHeadProblem:
    """A `cross.HeadProblem` (W-parameterised cross-attention, any head) with the gradient of
    float64 autograd through its softmax and head, as `loss.backward()` computes it in the
    authors' notebooks; the `dynamics.Problem` interface. log_unsat is a statistic, measured in
    the log domain."""

    problem: object

    @property
    def K(self) -> torch.Tensor:
        return self.problem.X

    @property
    def batch(self) -> int:
        return self.problem.batch

    def grad(self, p: torch.Tensor) -> Grad:
        pr = self.problem
        with torch.enable_grad():
            p = p.detach().requires_grad_(True)
            a = pr.logits(p)
            out = pr.head(torch.einsum("bnt,bntd->bnd", torch.softmax(a, -1), pr.X))
            value = pr.loss.value(pr.Y * out).mean(-1)
            G, = torch.autograd.grad(value.sum(), p)
        a = a.detach()
        norm = G.norm(dim=-1)
        top, ref = a.max(-1)
        is_ref = torch.nn.functional.one_hot(ref, a.shape[-1]).bool()
        log_unsat = torch.logsumexp(a.masked_fill(is_ref, float("-inf")), -1) - torch.logsumexp(a, -1)
        return Grad(value.detach(), G / torch.where(norm > 0, norm, math.inf)[:, None], norm.log(), ref, log_unsat)


@dataclass(frozen=True)
class Ridge:
    """theta's risk plus eps ||theta||^2 on top of a parameterisation `param`: the gradient
    exp(log_norm) direction + 2 eps theta, combined in the log domain."""

    param: Parameterisation
    eps: float = EPS

    def to_p(self, theta):
        return self.param.to_p(theta)

    def pullback(self, g: Grad, theta):
        g = self.param.pullback(g, theta)
        r = theta.norm(dim=-1)
        log_r = torch.log(2 * self.eps * r)
        M = torch.maximum(g.log_norm, log_r)
        Ms = torch.where(torch.isfinite(M), M, torch.zeros_like(M))
        unit = theta / torch.where(r > 0, r, math.inf)[:, None]
        v = g.direction * torch.exp(g.log_norm - Ms)[:, None] + unit * torch.exp(log_r - Ms)[:, None]
        n = v.norm(dim=-1)
        direction = v / torch.where(n > 0, n, math.inf)[:, None]
        value = None if g.value is None else g.value + self.eps * r ** 2
        return replace(g, value=value, direction=direction, log_norm=Ms + n.log())


def EpsNormalizedGD(eta: float, sizes: tuple[int, ...], eps: float = EPS) -> Chain:  # a rule's name: CamelCase
    """theta_k <- theta_k - eta g_k / (||g_k|| + eps) on each block k of consecutive coordinates
    (`sizes`; one block: the whole theta): torch's SGD on the gradient divided by its norm plus
    eps, per parameter tensor, as in the authors' code."""
    return chain(Normalize(tuple(sizes), eps), Descend(eta))
