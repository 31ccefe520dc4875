"""Update rules as composable objects (optax style: `init` / `update`), batched: GD,
normalized GD (paper C), per-block normalized GD, Polyak (paper C), one rule per instance.
Rules read the log-domain `Grad`, so normalized GD and Polyak keep the right direction when
the gradient underflows."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, Sequence

import torch

from attnsvm.attention.gradients import STATS, Grad


class UpdateRule(Protocol):
    """`needs`: the statistics of `Grad` (gradients.STATS) that `update` reads; `run` computes
    them on every step only for rules that need them (a rule without `needs` gets all)."""

    needs: frozenset[str]

    def init(self, p: torch.Tensor) -> Any: ...
    def update(self, g: Grad, state: Any, p: torch.Tensor) -> tuple[torch.Tensor, Any]: ...


class Parameterisation(Protocol):
    """How trained coordinates theta (B, D) map to the problem's p (B, d), e.g. W = K Q^T
    (attnsvm.dynamics.cross.KQ). `pullback` turns the log-domain gradient in p into the one in theta
    (chain rule), again as a `Grad`, so every update rule applies unchanged."""

    def to_p(self, theta: torch.Tensor) -> torch.Tensor: ...
    def pullback(self, g: Grad, theta: torch.Tensor) -> Grad: ...


@dataclass(frozen=True)
class Identity:
    """theta = p: the default parameterisation of `run`."""

    def to_p(self, theta):
        return theta

    def pullback(self, g: Grad, theta):
        return g


def _per_instance(x, like: torch.Tensor) -> float | torch.Tensor:
    """x for each instance of the batch `like` (B, ...): a number stays a float, else a (B,) tensor."""
    if isinstance(x, (int, float)):
        return float(x)
    return torch.as_tensor(x, dtype=like.dtype, device=like.device).expand(like.shape[0])


def _rows(x: float | torch.Tensor) -> float | torch.Tensor:
    """A per-instance factor (float or (B,)) that scales the rows of a (B, D) array."""
    return x if isinstance(x, float) else x[:, None]


@dataclass(frozen=True)
class GD:
    """p <- p - eta grad L(p). `eta` is a float or one value per instance (e.g. 1/L_p, Lemma 6)."""

    eta: float | Sequence[float] | torch.Tensor
    needs: ClassVar[frozenset] = frozenset()

    def init(self, p):
        return None

    def update(self, g: Grad, state, p):
        return g.direction * _rows(-_per_instance(self.eta, p) * torch.exp(g.log_norm)), state


@dataclass(frozen=True)
class NormalizedGD:
    """p <- p - eta grad L(p) / ||grad L(p)|| (paper C)."""

    eta: float | Sequence[float] | torch.Tensor
    needs: ClassVar[frozenset] = frozenset()

    def init(self, p):
        return None

    def update(self, g: Grad, state, p):
        return g.direction * _rows(-_per_instance(self.eta, p)), state


@dataclass(frozen=True)
class BlockNormalizedGD:
    """theta_k <- theta_k - eta grad_k L / ||grad_k L|| on each block k of consecutive coordinates
    (`sizes`, in order): normalized GD per parameter tensor, e.g. K and Q separately
    (`cross.KQ.blocks`), as the Transformers-as-SVMs code normalises each factor's gradient. A
    block whose gradient is 0 does not move. Exact from `Grad.direction` (scale-free)."""

    eta: float | Sequence[float] | torch.Tensor
    sizes: tuple[int, ...]
    needs: ClassVar[frozenset] = frozenset()

    def init(self, p):
        if sum(self.sizes) != p.shape[-1]:
            raise ValueError(f"blocks {self.sizes} do not add up to the {p.shape[-1]} coordinates")

    def update(self, g: Grad, state, p):
        blocks = g.direction.split(list(self.sizes), dim=-1)
        norms = [x.norm(dim=-1, keepdim=True) for x in blocks]
        unit = torch.cat([x / torch.where(n > 0, n, math.inf) for x, n in zip(blocks, norms)], -1)
        return unit * _rows(-_per_instance(self.eta, p)), state


@dataclass(frozen=True)
class Polyak:
    """p <- p - ((L(p) - f_star) / ||grad L||^2) grad L(p) (paper C), step length computed
    in the log domain as exp(log(L - f_star) - log||grad L||), capped at `max_step`.
    f_star="infimum" uses L_inf = mean_i loss(max_t gamma_it), the risk's infimum when the
    max-score tokens are separable (for a fixed head it is not 0), with log(L - L_inf) from
    `Grad.log_excess`, exact at any saturation."""

    f_star: float | Sequence[float] | torch.Tensor | str = 0.0
    max_step: float = 1e6
    needs: ClassVar[frozenset] = frozenset({"value", "log_excess"})

    def init(self, p):
        return None

    def update(self, g: Grad, state, p):
        if isinstance(self.f_star, str):
            if self.f_star != "infimum" or g.log_excess is None:
                raise ValueError(f"f_star={self.f_star!r}: only 'infimum' (with Grad.log_excess) is known")
            log_gap = g.log_excess
        else:
            log_gap = torch.log((g.value - _per_instance(self.f_star, p)).clamp_min(0))
        length = torch.exp(log_gap - g.log_norm).nan_to_num(0.0).clamp(max=self.max_step)
        return -length[:, None] * g.direction, state


@dataclass(frozen=True)
class PerInstance:
    """Instance b of the batch follows rules[b]: e.g. GD, NormalizedGD and Polyak side by side
    on copies of one problem, in one batched run."""

    rules: tuple

    @property
    def needs(self) -> frozenset:
        return frozenset().union(*(getattr(r, "needs", STATS) for r in self.rules))

    def init(self, p):
        if len(self.rules) != p.shape[0]:
            raise ValueError(f"PerInstance has {len(self.rules)} rules for a batch of {p.shape[0]}")
        return tuple(r.init(p[b:b + 1]) for b, r in enumerate(self.rules))

    def update(self, g: Grad, state, p):
        out = [r.update(g.take(slice(b, b + 1)), s, p[b:b + 1]) for b, (r, s) in enumerate(zip(self.rules, state))]
        return torch.cat([d for d, _ in out]), tuple(s for _, s in out)


RULES = {"gd": GD, "ngd": NormalizedGD, "polyak": Polyak}

