"""A batch of linear-head risks to descend (docs/statements.md#notation): keys K (B,n,T,d),
scores gamma (B,n,T), one loss; its gradient is the log-domain `Grad` (attnsvm.attention.gradients),
on the fused kernel for unrecorded steps where it runs. Runs on CUDA when present, else CPU,
in float64."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import torch

from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.attention.fused import FusedGrad
from attnsvm.attention.gradients import Grad, Keys, linear_head_grad
from attnsvm.attention.losses import Loss, get_loss


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@dataclass(frozen=True)
class Problem:
    """B instances of the linear-head risk L(p) = mean_i loss(<S(K_i p), gamma_i>).
    `fused_kernel`: take unrecorded steps' gradients on the fused kernel where it runs
    (attnsvm.attention.fused); False keeps every gradient on the eager torch path."""

    K: torch.Tensor
    gamma: torch.Tensor
    loss: Loss
    fused_kernel: bool = True

    @property
    def batch(self) -> int:
        return self.K.shape[0]

    @property
    def dim(self) -> int:
        return self.K.shape[-1]

    @classmethod
    def from_datasets(cls, datasets: Sequence[Dataset], loss: Loss | str = "logistic", device=None) -> Problem:
        """p-parameterisation: keys X_i W, scores Y_i X_i v."""
        device = device or default_device()
        K = torch.stack([model.t(model.keys(ds), device) for ds in datasets])
        g = torch.stack([model.t(model.scores(ds), device) for ds in datasets])
        return cls(K, g, get_loss(loss))

    @classmethod
    def from_arrays(cls, K, gamma, loss: Loss | str = "logistic", device=None) -> Problem:
        device = device or default_device()
        return cls(model.t(K, device), model.t(gamma, device), get_loss(loss))

    @cached_property
    def keys(self) -> Keys:
        """K laid out for the gradient's mat-vecs, built on first use."""
        return Keys.of(self.K)

    @cached_property
    def fused(self) -> FusedGrad | None:
        """The fused kernel of the gradient without statistics, where it runs (attnsvm.attention.fused)."""
        return FusedGrad.of(self.K, self.gamma, self.loss) if self.fused_kernel else None

    def grad(self, p: torch.Tensor, stats: bool = True) -> Grad:
        if not stats and self.fused is not None:
            return self.fused(p)
        return linear_head_grad(self.keys, self.gamma, p, self.loss, stats)


