"""Lemma 6's smoothness constant L_p (our reconstruction, docs/statements.md#lemma6, spectral norms):

    L_p = (1/n) sum_i (M0 ||v||^2 ||W||^2 ||X_i||^4 + 3 M1 ||v|| ||W||^2 ||X_i||^3)

with (M0, M1) of the loss on the interval of margins Y f, which always lies in
[min_it gamma_it, max_it gamma_it]. GD's default step is eta = 1/L_p."""

from __future__ import annotations

import numpy as np

from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.attention.losses import Loss, get_loss
from attnsvm.errors import UserError


def margin_interval(ds: Dataset) -> tuple[float, float]:
    g = model.scores(ds)
    return float(g.min()), float(g.max())


def smoothness_constant(ds: Dataset, loss: Loss | str = "logistic") -> float:
    loss = get_loss(loss)
    if loss.constants is None:
        raise UserError(f"loss {loss.name!r} has no known Assumption-A constants; pass a step size")
    M0, M1 = loss.constants(*margin_interval(ds))
    v = np.linalg.norm(ds.v)
    W = np.linalg.norm(ds.W, 2)
    X = np.array([np.linalg.norm(x, 2) for x in ds.X])
    return float(np.mean(M0 * v**2 * W**2 * X**4 + 3 * M1 * v * W**2 * X**3))
