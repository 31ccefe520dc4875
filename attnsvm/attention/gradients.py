"""Cancellation-free, log-domain gradient of the linear-head risk, batched over instances.

For one input with logits a = K p, s = S(a), scores gamma, margin f = <s, gamma>:

    grad_p f = sum_t s_t (gamma_t - f)(k_t - k_ref),   gamma_t - f = sum_u s_u (gamma_t - gamma_u)

with k_ref the max-logit token. The textbook `K^T S'(a) gamma` (and autograd through softmax)
rounds f to gamma_ref at saturation, so `gamma_ref - f` becomes 0 and the remaining terms
point the wrong way; the form above has no such cancellation (f - gamma_ref is summed as
`sum_u s_u (gamma_u - gamma_ref)`). The weights `loss'_i s_it (gamma_it - f_i) / n` carry
their scale as a logarithm, so the gradient is returned as `exp(log_norm) * direction` and
its direction survives when its norm underflows.

The sum over t is taken as one batched mat-vec `sum_t w'_t k_t` with w'_ref = -sum_{t != ref} w_t
(`Keys.combine`), which equals the sum over differences in exact arithmetic; its rounding is
relative to sum_t |w'_t| ||k_t|| instead of sum_t |w_t| ||k_t - k_ref||, which matters only
when the gradient is that small relative to its terms (near-duplicate keys, a finite stationary
point). A gradient below `ROUNDING` times that scale is reported as untrusted: direction 0 and
log_norm the log of the bound (see `linear_head_grad`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from functools import lru_cache

import torch

from attnsvm.attention.losses import Loss

MAX_EXP = 700.0                                       # input weights e^(log_F - M) capped at e^700
ROUNDING = 1e-12                                      # trust a gradient above this x its terms' scale
STATS = frozenset({"value", "log_unsat", "log_excess"})   # the Grad fields `stats=False` leaves out


@dataclass(frozen=True)
class Grad:
    """Risk and gradient of a batch of B instances (leading dimension B).

    value (B,): L(p); direction (B, d): unit gradient (0 where the gradient is 0 or untrusted);
    log_norm (B,): log ||grad L(p)|| (-inf where 0; the log of a bound on it where untrusted);
    selected (B, n): max-logit token; log_unsat (B, n): log(1 - max_t s_it), the softmax
    saturation of each input; log_excess (B,): log(L(p) - L_inf), L_inf = mean_i
    loss(max_t gamma_it) (see `log_excess_risk`). The statistics (`STATS`) are None when the
    gradient was computed with `stats=False`."""

    value: torch.Tensor | None
    direction: torch.Tensor
    log_norm: torch.Tensor
    selected: torch.Tensor
    log_unsat: torch.Tensor | None
    log_excess: torch.Tensor | None = None

    def take(self, idx) -> Grad:
        """The instances `idx` (an int slice or index tensor) of the batch."""
        return Grad(*(None if (x := getattr(self, f.name)) is None else x[idx] for f in fields(self)))

    @property
    def vector(self) -> torch.Tensor:
        """The gradient itself; underflows to 0 where log_norm < -745."""
        return self.direction * torch.exp(self.log_norm)[:, None]


def rounding_bound(K: torch.Tensor) -> torch.Tensor:
    """ROUNDING * 2n max_{i,t} ||k_it|| (B,) for keys K (B,n,T,d): below it a computed gradient
    is untrusted (`linear_head_grad`)."""
    return K.norm(dim=-1).flatten(1).amax(-1) * (2 * K.shape[1] * ROUNDING)


CHAIN_MAX_DIM = 8   # logits as d fused multiply-adds up to this d, else one batched gemm


@dataclass(frozen=True)
class Keys:
    """The keys K (B,n,T,d) of a batch, stored as KbT (B,d,nT) for the gradient's two batched
    mat-vecs (`logits`, `combine`), and `bound` (B,): the rounding bound of `linear_head_grad`,
    ROUNDING * 2n max_{i,t} ||k_it||. Built once per problem (`dynamics.Problem.keys`)."""

    KbT: torch.Tensor
    bound: torch.Tensor

    @classmethod
    def of(cls, K: torch.Tensor) -> Keys:
        B, n, T, d = K.shape
        return cls(K.reshape(B, n * T, d).transpose(1, 2).contiguous(), rounding_bound(K))

    def logits(self, p: torch.Tensor) -> torch.Tensor:
        """a_it = <k_it, p> (B, n*T) for p (B,d). On CPU a batched gemm of B (1 x d)(d x nT)
        blocks costs 2-5x as much as d fused multiply-adds for small d, so those are used up to
        CHAIN_MAX_DIM."""
        d = p.shape[-1]
        if d > CHAIN_MAX_DIM:
            return torch.bmm(p[:, None, :], self.KbT)[:, 0]
        a = self.KbT[:, 0] * p[:, :1]
        for j in range(1, d):
            a.addcmul_(self.KbT[:, j], p[:, j:j + 1])
        return a

    def combine(self, w: torch.Tensor) -> torch.Tensor:
        """sum_{i,t} w_it k_it (B,d) for w (B,n*T)."""
        return torch.bmm(w[:, None, :], self.KbT.mT)[:, 0]


@lru_cache(maxsize=32)
def _offsets(rows: int, T: int, device: torch.device) -> torch.Tensor:
    return torch.arange(0, rows * T, T, device=device)


@lru_cache(maxsize=32)
def _ones(T: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    return torch.ones(T, dtype=dtype, device=device)


def _token_sums(x: torch.Tensor) -> torch.Tensor:
    """sum_t x_it of a contiguous (B,n,T) array, as one mat-vec (faster than .sum(-1) for small T)."""
    return torch.mv(x.view(-1, x.shape[-1]), _ones(x.shape[-1], x.dtype, x.device)).view(x.shape[:-1])


def linear_head_grad(K: torch.Tensor | Keys, gamma: torch.Tensor, p: torch.Tensor, loss: Loss,
                     stats: bool = True) -> Grad:
    """L(p) = mean_i loss(<S(K_i p), gamma_i>) and its gradient; K (B,n,T,d) (or its `Keys`),
    gamma (B,n,T), p (B,d). `stats=False` skips the statistics (`STATS`: value, log_unsat,
    log_excess), which update rules that need only the direction and norm do not read.

    Softmax masses are kept relative to each input's runner-up token (u_t = s_t / s_ru, one
    exp per token), with log s_ru in the log domain; the gradient terms are scaled by the
    heaviest input's term mass |loss'_i| s_{i,ru} sum_t u_t |gamma_t - f_i| (inputs whose terms
    are all 0 do not count), so a term is lost to underflow only when it is e^-708 below that.
    In those units sum_it |w'_it| <= 2n, so the mat-vec's rounding is below
    n*T*eps * 2n max_it ||k_it||; a computed norm at most `Keys.bound` = ROUNDING * 2n max_it ||k_it||
    (for n*T = 48, 190x that worst case) is untrusted: direction 0, log_norm the log of the bound."""
    keys = Keys.of(K) if isinstance(K, torch.Tensor) else K
    gamma = gamma.contiguous()           # the in-place index_add below needs views (an expanded gamma is not one)
    B, n, T = gamma.shape
    a = keys.logits(p).view(B, n, T)
    top, ref = a.max(-1)                                                  # max-logit token (first on ties)
    flat_ref = ref.view(-1) + _offsets(B * n, T, a.device)
    zo = a.view(-1).index_fill_(0, flat_ref, float("-inf")).view(B, n, T)   # logits of the other tokens
    ru = zo.amax(-1)                                                      # the runner-up's logit
    u = zo.sub_(ru[..., None]).exp_()                                     # s_t / s_ru, 0 at ref
    rest = _token_sums(u)                                                 # in [1, T-1]
    z2 = ru - top                                                         # the runner-up's gap, <= 0
    e2 = z2.exp()                                                         # may underflow: only scales
    S = torch.addcmul(_ones(1, a.dtype, a.device), e2, rest)              # sum_t exp(a_t - a_ref) = 1 / s_ref
    g_ref = gamma.reshape(-1).index_select(0, flat_ref).view(B, n)
    ud = torch.sub(gamma, g_ref[..., None]).mul_(u)                       # u_t (gamma_t - gamma_ref)
    if stats:
        gap_sum = _token_sums(torch.sub(gamma.amax(-1, keepdim=True), gamma).mul_(u))
    # sum_t u_t (gamma_t - f) = (f - gamma_ref) / s_ru
    t1 = _token_sums(ud).div_(S)
    excess = e2 * t1                                                      # f - gamma_ref, no cancellation
    margin = g_ref + excess                                               # Y_i f(X_i)
    lp = loss.deriv(margin)                                               # (B,n)
    uc = ud.addcmul_(u, excess[..., None], value=-1)                      # u_t (gamma_t - f), 0 at ref
    mass = _token_sums(torch.abs(uc, out=u))                              # sum_t |uc_t|
    log_F = torch.log(lp.abs().div_(S)).add_(z2)                          # log |loss'_i| s_{i,ru}
    M = torch.log(mass).add_(log_F).amax(-1)                              # (B,), -inf when every term is 0
    fac = (log_F - torch.nan_to_num(M, nan=math.nan, neginf=0.0)[:, None]).clamp_(max=MAX_EXP).exp_()
    fac.copysign_(lp).mul_(mass > 0)                                      # 0 for inputs with no terms
    w = uc.mul_(fac[..., None])
    w.view(-1).index_add_(0, flat_ref, (fac * t1).view(-1), alpha=-1)     # w_ref = -sum_{t != ref} w_t
    scaled = keys.combine(w.view(B, n * T))
    norm = scaled.norm(dim=-1)
    bound = keys.bound
    direction = scaled / torch.where(norm > bound, norm, math.inf)[:, None]
    log_norm = torch.maximum(norm, bound).log_().add_(M).sub_(math.log(n))
    if not stats:
        return Grad(None, direction, log_norm, ref, None)
    log_S = S.log()
    log_q = z2 - log_S                                                    # log s_ru
    g_top = gamma.amax(-1)
    log_delta = torch.logaddexp((g_top - g_ref).log() - log_S, log_q + gap_sum.log())
    return Grad(loss.value(margin).mean(-1), direction, log_norm, ref, log_q + rest.log(),
                log_excess_risk(log_delta, g_top, margin, loss))


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
