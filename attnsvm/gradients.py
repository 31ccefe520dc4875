"""Cancellation-free, log-domain gradient of the linear-head risk, batched over instances.

For one input with logits a = K p, s = S(a), scores gamma, margin f = <s, gamma>:

    grad_p f = sum_t s_t (gamma_t - f)(k_t - k_ref),   gamma_t - f = sum_u s_u (gamma_t - gamma_u)

with k_ref the max-logit token. The textbook `K^T S'(a) gamma` (and autograd through softmax)
rounds f to gamma_ref at saturation, so `gamma_ref - f` becomes 0 and the remaining terms
point the wrong way; the form above has no such cancellation. Each term's weight
`loss'_i s_it (gamma_it - f_i) / n` is kept as sign and logarithm, so the gradient is
returned as `exp(log_norm) * direction` and its direction survives when its norm underflows.
"""

from __future__ import annotations

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
    """L(p) = mean_i loss(<S(K_i p), gamma_i>) and its gradient; K (B,n,T,d), gamma (B,n,T), p (B,d)."""
    n = K.shape[1]
    a = torch.einsum("bntd,bd->bnt", K, p)
    log_s = torch.log_softmax(a, dim=-1)
    s = log_s.exp()
    margin = (s * gamma).sum(-1)                                          # Y_i f(X_i)
    value = loss.value(margin).mean(-1)
    lp = loss.deriv(margin)                                               # (B,n)
    c = torch.einsum("bnu,bntu->bnt", s, gamma[..., :, None] - gamma[..., None, :])   # gamma_t - f
    ref = a.argmax(-1)                                                    # (B,n)
    is_ref = torch.nn.functional.one_hot(ref, a.shape[-1]).bool()
    log_w = log_s + torch.log(c.abs()) + torch.log(lp.abs())[..., None]   # (B,n,T)
    log_w = log_w.masked_fill(is_ref | (c == 0) | (lp == 0)[..., None], float("-inf"))
    sign = torch.sign(c) * torch.sign(lp)[..., None]
    M = log_w.flatten(1).max(-1).values                                   # (B,)
    finite = torch.isfinite(M)
    Msafe = torch.where(finite, M, torch.zeros_like(M))
    w = sign * torch.exp(log_w - Msafe[:, None, None])                    # in [-1, 1]
    k_ref = torch.gather(K, 2, ref[..., None, None].expand(-1, -1, 1, K.shape[-1]))
    scaled = torch.einsum("bnt,bntd->bd", w, K - k_ref)
    norm = scaled.norm(dim=-1)
    ok = finite & (norm > 0)
    direction = torch.where(ok[:, None], scaled / torch.where(ok, norm, torch.ones_like(norm))[:, None], torch.zeros_like(scaled))
    log_norm = torch.where(ok, Msafe + torch.log(torch.where(ok, norm, torch.ones_like(norm))) - torch.log(torch.tensor(float(n), dtype=p.dtype)),
                           torch.full_like(M, float("-inf")))
    log_unsat = torch.logsumexp(a.masked_fill(is_ref, float("-inf")), -1) - torch.logsumexp(a, -1)
    return Grad(value, direction, log_norm, ref, log_unsat, log_excess_risk(log_s, gamma, margin, loss))


EXCESS_SERIES = 1e-6   # below this gap delta the excess is taken from the midpoint rule


def log_excess_risk(log_s: torch.Tensor, gamma: torch.Tensor, margin: torch.Tensor, loss: Loss) -> torch.Tensor:
    """log(L(p) - L_inf) per instance without cancellation, L_inf = mean_i loss(gamma*_i),
    gamma*_i = max_t gamma_it: a lower bound of L, and its infimum when the max-score tokens are
    separable (Lemma 2), approached as the softmax saturates on them. Per input the gap
    delta_i = gamma*_i - <s_i, gamma_i> = sum_t s_it (gamma*_i - gamma_it) is summed in the log
    domain, and loss(gamma* - delta) - loss(gamma*) = -loss'(gamma* - delta/2) delta (1 + O(delta^2))
    for delta < EXCESS_SERIES (else subtracted directly). This is what a Polyak step with
    f_star = L_inf needs: the plain difference L - L_inf is 0 in float64 once delta < 1e-16 L."""
    top = gamma.max(-1, keepdim=True).values
    diff = top - gamma                                                   # >= 0
    log_delta = torch.logsumexp(log_s + torch.log(diff), -1)             # -inf where diff = 0
    delta = log_delta.exp()
    g_top = top[..., 0]
    direct = loss.value(margin) - loss.value(g_top)
    series = torch.log(-loss.deriv(g_top - delta / 2)) + log_delta
    log_each = torch.where(delta < EXCESS_SERIES, series, torch.log(direct.clamp_min(0)))
    return torch.logsumexp(log_each, -1) - torch.log(torch.tensor(float(gamma.shape[1]), dtype=gamma.dtype))
