"""Seeded point sets at which pointwise conditions are checked (Lemmas 4, 5, 7), and the risk's
gradient at them: points around a direction q, vectorized (one call per set, every draw from the
caller's generator in a fixed order, so a seed gives the same points on every machine); the
log-domain gradient (`attnsvm.attention.gradients`) at every instance's points, instances of one
shape and loss in one batch (each row's result is its own: the same alone or in any batch)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attnsvm.attention import model
from attnsvm.dynamics import Problem, intra_op_threads


def cone(q: np.ndarray, mu, R, rng: np.random.Generator, size: int) -> np.ndarray:
    """`size` points of the cones C_{mu,R}(q) = {corr(p, q) >= 1 - mu, ||p|| >= R}: correlation
    uniform in [1 - mu, 1], direction uniform around q, norm R (1 + U[0, 1]). `mu` and `R` are
    numbers or one value per point."""
    q = np.ravel(q) / np.linalg.norm(q)
    mu = np.broadcast_to(np.asarray(mu, dtype=float), (size,))
    R = np.broadcast_to(np.asarray(R, dtype=float), (size,))
    c = 1 - mu * rng.uniform(size=size)
    w = rng.normal(size=(size, len(q)))
    w -= np.outer(w @ q, q)
    nw = np.linalg.norm(w, axis=1, keepdims=True)
    w = np.divide(w, nw, out=np.zeros_like(w), where=nw > 0)
    r = R * (1 + rng.uniform(size=size))
    return r[:, None] * (c[:, None] * q + np.sqrt(np.maximum(0.0, 1 - c * c))[:, None] * w)


def shell(d: int, R, rng: np.random.Generator, size: int) -> np.ndarray:
    """`size` points with uniform directions in R^d and norms R (1 + U[0, 1])."""
    u = rng.normal(size=(size, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return u * (np.asarray(R, dtype=float) * (1 + rng.uniform(size=size)))[:, None]


@dataclass
class Gradients:
    """The log-domain gradient of one instance's risk at its points: unit `direction` (P, d), 0
    where the gradient is 0 or below its rounding bound; `log_norm` (P,), -inf where it is 0;
    the max-logit tokens `selected` (P, n)."""

    direction: np.ndarray
    log_norm: np.ndarray
    selected: np.ndarray


def gradients(insts: Sequence, points: Sequence[np.ndarray], losses: Sequence[str]) -> list[Gradients]:
    """The gradient of each instance's linear-head risk (its loss) at its points, grouped by shape
    and loss into one `Problem` each."""
    groups: dict[tuple, list[int]] = {}
    for k, inst in enumerate(insts):
        ds = inst.dataset
        groups.setdefault((ds.n, ds.T, ds.d, losses[k]), []).append(k)
    out: list = [None] * len(insts)
    with intra_op_threads(1):                      # small tensors: threads only add overhead
        for (_, _, _, loss), ks in groups.items():
            K = np.concatenate([_repeat(model.keys(insts[k].dataset), len(points[k])) for k in ks])
            G = np.concatenate([_repeat(model.scores(insts[k].dataset), len(points[k])) for k in ks])
            g = Problem.from_arrays(K, G, loss).grad(model.t(np.concatenate([points[k] for k in ks])), stats=False)
            direction, log_norm, selected = (x.cpu().numpy() for x in (g.direction, g.log_norm, g.selected))
            at = 0
            for k in ks:
                m = len(points[k])
                out[k] = Gradients(direction[at:at + m], log_norm[at:at + m], selected[at:at + m])
                at += m
    return out


def _repeat(a: np.ndarray, m: int) -> np.ndarray:
    return np.broadcast_to(a, (m,) + a.shape)
