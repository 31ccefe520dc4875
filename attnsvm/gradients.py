"""Cancellation-free, log-domain gradient of the linear-head risk, batched over instances.

For one input with logits a = K p, s = S(a), scores gamma, margin f = <s, gamma>:

    grad_p f = sum_t s_t (gamma_t - f)(k_t - k_ref),   gamma_t - f = sum_u s_u (gamma_t - gamma_u)

with k_ref the max-logit token. The textbook `K^T S'(a) gamma` (and autograd through softmax)
rounds f to gamma_ref at saturation, so `gamma_ref - f` becomes 0 and the remaining terms
point the wrong way; the form above has no such cancellation (f - gamma_ref is summed as
`sum_u s_u (gamma_u - gamma_ref)`). The weights `loss'_i s_it (gamma_it - f_i) / n` carry
their scale as a logarithm, so the gradient is returned as `exp(log_norm) * direction` and
its direction survives when its norm underflows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import torch

from .losses import Loss


@dataclass(frozen=True)
class Grad:
    """Risk and gradient of a batch of B instances (leading dimension B).

    value (B,): L(p); direction (B, d): unit gradient (0 where the gradient is exactly 0);
    log_norm (B,): log ||grad L(p)|| (-inf where 0); selected (B, n): max-logit token;
    log_unsat (B, n): log(1 - max_t s_it), the softmax saturation of each input;
    log_excess (B,): log(L(p) - L_inf), L_inf = mean_i loss(max_t gamma_it) (see `log_excess_risk`)."""

    value: torch.Tensor
    direction: torch.Tensor
    log_norm: torch.Tensor
    selected: torch.Tensor
    log_unsat: torch.Tensor
    log_excess: torch.Tensor | None = None

    def take(self, idx) -> "Grad":
        """The instances `idx` (an int slice or index tensor) of the batch."""
        return Grad(*(None if (x := getattr(self, f.name)) is None else x[idx] for f in fields(self)))

    @property
    def vector(self) -> torch.Tensor:
        """The gradient itself; underflows to 0 where log_norm < -745."""
        return self.direction * torch.exp(self.log_norm)[:, None]


def linear_head_grad(K: torch.Tensor, gamma: torch.Tensor, p: torch.Tensor, loss: Loss) -> Grad:
    """L(p) = mean_i loss(<S(K_i p), gamma_i>) and its gradient; K (B,n,T,d), gamma (B,n,T), p (B,d).

    Softmax masses are kept relative to each input's runner-up token (u_t = s_t / s_ru, one
    exp per token), with log s_ru in the log domain; the gradient terms are scaled by the
    largest input factor |loss'_i| s_{i,ru} over inputs with a nonzero term, so a term is lost
    to underflow only when it is e^-708 below the heaviest term of its instance."""
    B, n, T, d = K.shape
    a = torch.einsum("bntd,bd->bnt", K, p)
    top, ref = a.max(-1)                                                  # max-logit token (first on ties)
    is_ref = ref[..., None] == torch.arange(T, device=a.device)
    zo = (a - top[..., None]).masked_fill_(is_ref, float("-inf"))         # logit gaps of the other tokens
    z2 = zo.amax(-1, keepdim=True)                                        # the runner-up's gap
    u = (zo - z2).exp_()                                                  # s_t / s_ru, 0 at ref
    rest = u.sum(-1, keepdim=True)                                        # in [1, T-1]
    log_S = torch.log1p(z2.exp() * rest)                                  # log sum_t exp(a_t - a_ref)
    log_q = z2 - log_S                                                    # log s_ru
    log_unsat = (log_q + rest.log()).squeeze(-1)                          # log(1 - s_ref)
    g_ref = gamma.gather(-1, ref[..., None])
    delta = gamma - g_ref                                                 # gamma_t - gamma_ref
    excess = log_q.exp() * (u * delta).sum(-1, keepdim=True)              # f - gamma_ref, no cancellation
    margin = (g_ref + excess).squeeze(-1)                                 # Y_i f(X_i)
    value = loss.value(margin).mean(-1)
    lp = loss.deriv(margin)                                               # (B,n)
    uc = u * (delta - excess)                                             # (s_t / s_ru)(gamma_t - f), 0 at ref
    log_F = torch.where((uc != 0).any(-1), lp.abs().log() + log_q.squeeze(-1), float("-inf"))
    M = log_F.amax(-1)                                                    # (B,)
    finite = torch.isfinite(M)
    Msafe = torch.where(finite, M, 0.0)
    w = uc * ((log_F - Msafe[:, None]).exp() * lp.sign())[..., None]     # |w| <= max |gamma_t - f|
    flat_ref = ref + T * torch.arange(B * n, device=a.device).view(B, n)
    k_ref = K.reshape(B * n * T, d).index_select(0, flat_ref.flatten()).view(B, n, 1, d)
    scaled = torch.einsum("bnt,bntd->bd", w, K - k_ref)
    norm = scaled.norm(dim=-1)
    ok = finite & (norm > 0)
    safe = torch.where(ok, norm, 1.0)
    direction = torch.where(ok[:, None], scaled / safe[:, None], 0.0)
    log_norm = torch.where(ok, Msafe + safe.log() - math.log(n), float("-inf"))
    g_top = gamma.amax(-1, keepdim=True)
    gap = g_top - gamma                                                   # >= 0
    log_delta = torch.logaddexp(gap.gather(-1, ref[..., None]).log() - log_S,
                                log_q + (u * gap).sum(-1, keepdim=True).log()).squeeze(-1)
    return Grad(value, direction, log_norm, ref, log_unsat, log_excess_risk(log_delta, g_top.squeeze(-1), margin, loss))


EXCESS_SERIES = 1e-6   # below this gap delta the excess is taken from the midpoint rule


def log_excess_risk(log_delta: torch.Tensor, gamma_top: torch.Tensor, margin: torch.Tensor, loss: Loss) -> torch.Tensor:
    """log(L(p) - L_inf) per instance without cancellation, L_inf = mean_i loss(gamma*_i),
    gamma*_i = max_t gamma_it (`gamma_top`, (B,n)): a lower bound of L, and its infimum when the
    max-score tokens are separable (Lemma 2), approached as the softmax saturates on them.
    `log_delta` (B,n) is the log of the per-input gap delta_i = gamma*_i - <s_i, gamma_i> =
    sum_t s_it (gamma*_i - gamma_it), summed without cancellation (`linear_head_grad`), and
    loss(gamma* - delta) - loss(gamma*) = -loss'(gamma* - delta/2) delta (1 + O(delta^2))
    for delta < EXCESS_SERIES (else subtracted directly). This is what a Polyak step with
    f_star = L_inf needs: the plain difference L - L_inf is 0 in float64 once delta < 1e-16 L."""
    delta = log_delta.exp()
    direct = loss.value(margin) - loss.value(gamma_top)
    series = torch.log(-loss.deriv(gamma_top - delta / 2)) + log_delta
    log_each = torch.where(delta < EXCESS_SERIES, series, torch.log(direct.clamp_min(0)))
    return torch.logsumexp(log_each, -1) - math.log(margin.shape[1])
