"""Losses of Assumption A (docs/statements.md#assumption-A): strictly decreasing, loss' M0-Lipschitz and |loss'| <= M1
on bounded intervals. A loss is a value: `value`, `deriv` (torch, elementwise) and, where
known, `constants(lo, hi) -> (M0, M1)` on the interval [lo, hi] of margins `Y f`, and
`increment(u, c) = value(u - c) - value(u)` computed without cancellation (see `increment`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from attnsvm.errors import UserError


@dataclass(frozen=True)
class Loss:
    name: str
    value: Callable[[torch.Tensor], torch.Tensor]
    deriv: Callable[[torch.Tensor], torch.Tensor]
    constants: Callable[[float, float], tuple[float, float]] | None = None
    increment: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None

    def __call__(self, u: torch.Tensor) -> torch.Tensor:
        return self.value(u)


logistic = Loss(
    "logistic",
    value=lambda u: torch.nn.functional.softplus(-u),
    deriv=lambda u: -torch.sigmoid(-u),
    constants=lambda lo, hi: (0.25, 1.0),
    # log(1 + e^{c-u}) - log(1 + e^{-u}) = log1p(expm1(c) sigmoid(-u)); direct difference for |c| > 1
    increment=lambda u, c: torch.where(c.abs() > 1,
                                       torch.nn.functional.softplus(c - u) - torch.nn.functional.softplus(-u),
                                       torch.log1p(torch.expm1(c.clamp(-1, 1)) * torch.sigmoid(-u))),
)

exponential = Loss(
    "exponential",
    value=lambda u: torch.exp(-u),
    deriv=lambda u: -torch.exp(-u),
    constants=lambda lo, hi: (math.exp(-lo), math.exp(-lo)),
    increment=lambda u, c: torch.exp(-u) * torch.expm1(c),
)

correlation = Loss(
    "correlation",
    value=lambda u: -u,
    deriv=lambda u: -torch.ones_like(u),
    constants=lambda lo, hi: (0.0, 1.0),
    increment=lambda u, c: c,
)

LOSSES = {l.name: l for l in (logistic, exponential, correlation)}


def custom(fn: Callable[[torch.Tensor], torch.Tensor], name: str = "custom") -> Loss:
    """A user loss from a torch-differentiable scalar function; the derivative is autograd's.
    Assumption-A constants are unknown (None): checks that need them report INCONCLUSIVE."""

    def deriv(u: torch.Tensor) -> torch.Tensor:
        with torch.enable_grad():
            x = u.detach().clone().requires_grad_(True)
            (g,) = torch.autograd.grad(fn(x).sum(), x)
        return g

    return Loss(name, value=fn, deriv=deriv, constants=None)


def increment(loss: Loss, u: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """loss(u - c) - loss(u): the change of the loss when the margin u drops by c. Exact to
    relative rounding for the library losses even when |c| is far below u's resolution (a
    saturated softmax lowers the margin by e^{-R}); other losses use the plain difference."""
    if loss.increment is not None:
        return loss.increment(u, c)
    return loss.value(u - c) - loss.value(u)


def get_loss(name: str | Loss) -> Loss:
    if isinstance(name, Loss):
        return name
    try:
        return LOSSES[name]
    except KeyError:
        raise UserError(f"unknown loss {name!r}; choose from {sorted(LOSSES)}") from None
