"""Update rules as composable objects (optax style: `init` / `update`), batched: GD,
normalized GD (paper C), Polyak (paper C), one rule per instance; and transformations that
compose into rules (`chain`): `Normalize` (whole gradient or per block, with an optional eps in
the denominator) then `Descend` (times -eta), e.g. per-block normalized GD (`BlockNormalizedGD`)
and the authors' g / (||g|| + eps) step (`dynamics.authors.EpsNormalizedGD`).
Rules read the log-domain `Grad`, so normalized GD and Polyak keep the right direction when
the gradient underflows."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

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
class Update:
    """What a transformation passes on: `vector` (B, D) times `scale` (None, a number or one per
    instance), the scale applied last (so a chain multiplies the scalars first, as one rule would)."""

    vector: torch.Tensor
    scale: float | torch.Tensor | None = None

    def value(self) -> torch.Tensor:
        return self.vector if self.scale is None else self.vector * _rows(self.scale)


@dataclass(frozen=True)
class Normalize:
    """g / (||g|| + eps), as an `Update`: with `sizes` None the whole gradient, its norm taken from
    the log domain (exact where ||g|| underflows; eps > 0 scales the direction by ||g|| / (||g|| +
    eps) = exp(-log(1 + eps / ||g||)), the fused kernel's factor); else on each block of
    consecutive coordinates (`sizes`, in order, e.g. K and Q: `cross.KQ.blocks`), g_k / (||g_k|| +
    eps) from the block of the unit direction. A block whose gradient is 0 does not move."""

    sizes: tuple[int, ...] | None = None
    eps: float = 0.0
    needs: ClassVar[frozenset] = frozenset()

    def init(self, p):
        if self.sizes is not None and sum(self.sizes) != p.shape[-1]:
            raise ValueError(f"blocks {self.sizes} do not add up to the {p.shape[-1]} coordinates")

    def update(self, g: Grad, state, p):
        if self.sizes is None:
            if not self.eps:
                return Update(g.direction), state
            lengths = torch.exp(-torch.logaddexp(torch.zeros_like(g.log_norm), math.log(self.eps) - g.log_norm))
            return Update(g.direction, lengths), state
        inv = torch.exp(-g.log_norm)[:, None]                      # 1 / ||g|| (inf where g = 0)
        out = []
        for x in g.direction.split(list(self.sizes), dim=-1):    # g_k / (||g_k|| + eps) = x / (||x|| + eps/||g||)
            den = x.norm(dim=-1, keepdim=True)
            den = den + self.eps * inv if self.eps else den
            out.append(x / torch.where(den > 0, den, math.inf))
        return Update(torch.cat(out, -1)), state


@dataclass(frozen=True)
class Descend:
    """The step against an `Update`: times -eta (a number or one per instance)."""

    eta: float | Sequence[float] | torch.Tensor
    needs: ClassVar[frozenset] = frozenset()

    def init(self, p):
        return None

    def update(self, u: Update, state, p):
        step = -_per_instance(self.eta, p)
        return Update(u.vector, step if u.scale is None else step * u.scale), state


@dataclass(frozen=True)
class Chain:
    """Transformations applied in order (optax's `chain`), the first to the `Grad`, each to the
    `Update` before it; an update rule."""

    transforms: tuple

    @property
    def needs(self) -> frozenset:
        return frozenset().union(*(getattr(t, "needs", STATS) for t in self.transforms))

    def init(self, p):
        return tuple(t.init(p) for t in self.transforms)

    def update(self, g: Grad, state, p):
        state = state or (None,) * len(self.transforms)
        u, new = g, []
        for t, s in zip(self.transforms, state):
            u, s = t.update(u, s, p)
            new.append(s)
        return u.value(), tuple(new)


def chain(*transforms) -> Chain:
    return Chain(tuple(transforms))


def BlockNormalizedGD(eta, sizes) -> Chain:  # a rule's name: CamelCase
    """theta_k <- theta_k - eta grad_k L / ||grad_k L|| on each block k (`sizes`): normalized GD per
    parameter tensor, as the Transformers-as-SVMs code normalises K's and Q's gradients."""
    return chain(Normalize(tuple(sizes)), Descend(eta))


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

