"""Losses of Assumption A (SPEC.md): strictly decreasing, loss' M0-Lipschitz and |loss'| <= M1
on bounded intervals. A loss is a value: `value`, `deriv` (torch, elementwise) and, where
known, `constants(lo, hi) -> (M0, M1)` on the interval [lo, hi] of margins `Y f`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch

from .errors import UserError


@dataclass(frozen=True)
class Loss:
    name: str
    value: Callable[[torch.Tensor], torch.Tensor]
    deriv: Callable[[torch.Tensor], torch.Tensor]
    constants: Callable[[float, float], tuple[float, float]] | None = None

    def __call__(self, u: torch.Tensor) -> torch.Tensor:
        return self.value(u)


logistic = Loss(
    "logistic",
    value=lambda u: torch.nn.functional.softplus(-u),
    deriv=lambda u: -torch.sigmoid(-u),
    constants=lambda lo, hi: (0.25, 1.0),
)

exponential = Loss(
    "exponential",
    value=lambda u: torch.exp(-u),
    deriv=lambda u: -torch.exp(-u),
    constants=lambda lo, hi: (math.exp(-lo), math.exp(-lo)),
)

correlation = Loss(
    "correlation",
    value=lambda u: -u,
    deriv=lambda u: -torch.ones_like(u),
    constants=lambda lo, hi: (0.0, 1.0),
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


def get_loss(name: str | Loss) -> Loss:
    if isinstance(name, Loss):
        return name
    try:
        return LOSSES[name]
    except KeyError:
        raise UserError(f"unknown loss {name!r}; choose from {sorted(LOSSES)}") from None
