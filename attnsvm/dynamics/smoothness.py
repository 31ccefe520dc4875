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


def moving(ds: Dataset) -> bool:
    """Some input has unequal scores and unequal keys (else grad L = 0 everywhere: L is constant)."""
    g, K = model.scores(ds), model.keys(ds)
    return any(np.ptp(g[i]) > 0 and np.ptp(K[i], axis=0).max() > 0 for i in range(ds.n))


# ---- many instances' risks and gradients at once (Lemma 6's check) ----------------------------

PAD = (3, 4, 3)         # (n, T, d) the padding of `PaddedRisk`; a larger instance is padded to its own shape

_VALUE = {"logistic": lambda m: np.logaddexp(0.0, -m), "exponential": lambda m: np.exp(-m), "correlation": lambda m: -m}
_DERIV = {"logistic": lambda m: -0.5 * (1 - np.tanh(m / 2)), "exponential": lambda m: -np.exp(-m),
          "correlation": lambda m: -np.ones_like(m)}


class PaddedRisk:
    """The linear-head risks L(p) = (1/n) sum_i loss(<S(K_i p), gamma_i>) of instances of different
    shapes and losses, evaluated together in numpy float64 with their gradients
    (1/n) sum_i loss'(m_i) K_i^T (s_i o (gamma_i - m_i)).

    Instances are padded to `PAD` (fixed, so an instance's numbers do not depend on its batch):
    padded tokens are masked out of the softmax, padded inputs weigh 0, padded coordinates are 0 in
    the keys (so the gradient's padded coordinates are 0 too). Every sum runs over one short axis
    in a fixed order. The softmax subtracts the largest logit; the margin <s, gamma> is a T-term
    sum, so a risk value carries rounding of order T eps max|gamma| M1 + eps |L| (Lemma 6's
    descent tolerance is built on that)."""

    def __init__(self, datasets, losses):
        shapes = [(ds.n, ds.T, ds.d) for ds in datasets]
        N, T, D = (max([PAD[k]] + [s[k] for s in shapes]) for k in range(3))
        B = len(datasets)
        self.K, self.G = np.zeros((B, N, T, D)), np.zeros((B, N, T))
        self.mask, self.w = np.zeros((B, N, T), dtype=bool), np.zeros((B, N))
        for b, ds in enumerate(datasets):
            self.K[b, :ds.n, :ds.T, :ds.d] = model.keys(ds)
            self.G[b, :ds.n, :ds.T] = model.scores(ds)
            self.mask[b, :ds.n, :ds.T] = True
            self.mask[b, ds.n:, 0] = True            # a padded input sees one zero token: finite, weight 0
            self.w[b, :ds.n] = 1.0 / ds.n
        self.losses = list(losses)
        self.dim = D

    def value_grad(self, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """L and grad L at points P (B, M, D): shapes (B, M) and (B, M, D)."""
        K = self.K[:, None]                                              # (B, 1, N, T, D)
        a = (K * P[:, :, None, None, :]).sum(-1)                         # (B, M, N, T)
        a = np.where(self.mask[:, None], a, -np.inf)
        e = np.exp(a - a.max(-1, keepdims=True))
        s = e / e.sum(-1, keepdims=True)
        G = self.G[:, None]
        m = (s * G).sum(-1)                                              # (B, M, N)
        value, deriv = np.empty_like(m), np.empty_like(m)
        for name in set(self.losses):
            rows = np.array([x == name for x in self.losses])
            value[rows], deriv[rows] = _VALUE[name](m[rows]), _DERIV[name](m[rows])
        w = self.w[:, None]
        coef = (w * deriv)[..., None, None]                              # (B, M, N, 1, 1)
        terms = coef * (s * (G - m[..., None]))[..., None] * K           # (B, M, N, T, D)
        return (w * value).sum(-1), terms.sum(3).sum(2)
