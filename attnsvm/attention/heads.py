"""Prediction heads h: R^d -> R applied to the attention output X^T S(X W p) (docs/statements.md#notation)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class LinearHead:
    """h(x) = <v, x>. With it the margin Y f equals <gamma, s> (scores, Definition 1)."""

    v: np.ndarray

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return x @ torch.as_tensor(self.v, dtype=x.dtype, device=x.device)

    def grad(self, x: torch.Tensor) -> torch.Tensor:
        return torch.as_tensor(self.v, dtype=x.dtype, device=x.device).expand_as(x)


@dataclass(frozen=True)
class MLPHead:
    """h(x) = w2^T tanh(W1 x + b1): a one-hidden-layer MLP (Appendix D, nonlinear heads)."""

    W1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray

    def _t(self, x):
        f = lambda a: torch.as_tensor(a, dtype=x.dtype, device=x.device)
        return f(self.W1), f(self.b1), f(self.w2)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        W1, b1, w2 = self._t(x)
        return torch.tanh(x @ W1.T + b1) @ w2

    def grad(self, x: torch.Tensor) -> torch.Tensor:
        W1, b1, w2 = self._t(x)
        sech2 = 1 - torch.tanh(x @ W1.T + b1) ** 2
        return (sech2 * w2) @ W1

    @classmethod
    def random(cls, d: int, width: int, rng: np.random.Generator) -> MLPHead:
        return cls(rng.normal(size=(width, d)) / np.sqrt(d), rng.normal(size=width),
                   rng.normal(size=width) / np.sqrt(width))


@dataclass(frozen=True)
class ReLUHead:
    """h(x) = 1^T ReLU(V^T x): a value matrix, a ReLU and a sum (the multi-token notebook of
    Transformers as SVMs). V (d, d), or (B, d, d) for one head per instance of a batch."""

    V: np.ndarray

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ torch.as_tensor(self.V, dtype=x.dtype, device=x.device)).sum(-1)

    def grad(self, x: torch.Tensor) -> torch.Tensor:
        V = torch.as_tensor(self.V, dtype=x.dtype, device=x.device)
        return (x @ V > 0).to(x.dtype) @ V.transpose(-1, -2)
