"""Regularization paths of many instances at once, and the finite-horizon rules that read them
(the named proxies of "p(R)/R converges as R -> oo", docs/statements.md#theorem1).

Solving: `linear_paths`, `kq_paths` and `joint_paths` take one job per instance (its dataset,
loss, radii and start directions, and for the restricted path its cone and norm bound), group
the jobs that can share a batch (same shape, loss and grid size) and solve each group with
`regpath` in one call (per-instance radii; instances with fewer starts are padded with "no
start" rows, which are never evaluated). The solver treats every instance as if alone, so an
instance's `Solved` is bitwise the same in any batch (`regpath.descend`).

Reading: each result keeps its own tolerances and passes them in; the rules are

- `plateau(values, tol, rel)`: the measure stays above `tol` without decreasing by `rel`
  (relative) over the window: the path has settled elsewhere (a failure, or for Theorem 4 the
  conclusion);
- `monotone(values)`: no value rises (relative slack 1e-6, absolute FLOOR);
- `approaches(x, values, tol, slope)` (`dynamics.trends`): converging to 0 like a power of R;
- `settles(values, tol, rel, floor)`: at most `tol`, non-increasing and still falling (halved
  over the window, or below `floor`) holds, a plateau fails, else undecided;
- `grid_size(base, budget)`: the number of radii at a budget (one more per doubling of its
  horizon, so the engine's `Claim.extend` and `Claim.confirm` lengthen the grid), or `grid(size,
  budget)`: a fixed number of radii sliding up one step per doubling.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnsvm.dynamics import regpath
from attnsvm.dynamics.problem import Problem
from attnsvm.dynamics.trends import FLOOR, approaches, loglog_slope
from attnsvm.numerics import DIV_FLOOR

__all__ = ["Solved", "linear_paths", "kq_paths", "joint_paths", "lmm_starts", "grid", "grid_size", "plateau",
           "monotone", "settles", "approaches", "gaps_to", "loglog_slope", "RESIDUAL"]

RESIDUAL = 1e-3     # a 'resolution' solve counts as settled up to this residual (`regpath.settled`)


# ---- reading a path ---------------------------------------------------------------------------

def grid_size(base: int, budget) -> int:
    """`base` radii at horizon 1, one more per doubling of the budget's horizon."""
    return base + max(0, int(round(math.log2(budget.horizon))))


def grid(size: int, budget, base: float = 2.0) -> np.ndarray:
    """`size` radii multipliers base^k, the window sliding up one step per doubling of the budget's
    horizon (k = h .. h + size - 1, h = log2(horizon)): a longer horizon reads the path at larger
    radii at the same cost (the smaller radii of a grid only warm-start its neighbours)."""
    shift = max(0, int(round(math.log2(budget.horizon))))
    return base ** np.arange(shift, shift + size, dtype=np.float64)


def monotone(values: Sequence[float]) -> bool:
    """No value rises over the previous one (relative slack 1e-6, absolute FLOOR)."""
    v = [float(x) for x in values]
    return all(b <= a * (1 + 1e-6) + FLOOR for a, b in zip(v, v[1:]))


def plateau(values: Sequence[float], tol: float, rel: float) -> bool:
    """The last value is above `tol` and the window's values did not decrease by `rel`
    (relative) from first to last: the measure has settled away from 0."""
    return float(values[-1]) > tol and float(values[-1]) >= float(values[0]) * (1 - rel)


def settles(values: Sequence[float], tol: float, rel: float, floor: float) -> bool | None:
    """True if the last value is <= tol, non-increasing over the window and still converging
    (halved over it, or below `floor`: a plateau below tol is not a limit); False on a plateau
    above tol (`plateau`); else None."""
    last = [float(x) for x in values]
    if last[-1] <= tol and monotone(last) and (last[-1] <= floor or last[-1] <= last[0] / 2):
        return True
    if plateau(last, tol, rel):
        return False
    return None


def gaps_to(x: np.ndarray, q: np.ndarray) -> list[float]:
    """1 - corr(x_g, q) per row of x (G, d), clamped at 0 (numpy, per instance)."""
    q = np.asarray(q, dtype=np.float64)
    num = x @ q
    den = np.maximum(np.linalg.norm(x, axis=-1) * np.linalg.norm(q), DIV_FLOOR)
    return [max(0.0, float(g)) for g in 1 - num / den]


# ---- solving many paths -----------------------------------------------------------------------

@dataclass
class Solved:
    """One instance's path: x[j] the block-j solutions (G, d_j) (the last block is p, or theta
    for (K, Q)), `radii` (G,) (or (G, 2) for the joint path), status and residual per radius,
    `found` the distinct converged local solutions per radius."""

    x: tuple[np.ndarray, ...]
    radii: np.ndarray
    status: list[str]
    residual: np.ndarray
    found: list[int]

    @property
    def p(self) -> np.ndarray:
        return self.x[-1]

    def settled(self, max_residual: float = RESIDUAL) -> list[bool]:
        """Per radius: converged, or stopped at float64's resolution with residual <= max_residual."""
        return [s == regpath.st.CONVERGED or (s == regpath.st.RESOLUTION and float(r) <= max_residual)
                for s, r in zip(self.status, self.residual)]

    def unit(self, g: int = -1, block: int = -1) -> list[float]:
        x = self.x[block][g]
        return (x / max(float(np.linalg.norm(x)), DIV_FLOOR)).tolist()


def _solved(path: regpath.Path, b: int) -> Solved:
    return Solved(tuple(xb[:, b].cpu().numpy() for xb in path.x), path.radii[:, b].cpu().numpy(),
                  [row[b] for row in path.status], path.residual[:, b].cpu().numpy(),
                  [int(f) for f in path.found[:, b].tolist()])


def _starts(rows: Sequence[np.ndarray], d: int) -> np.ndarray:
    """Per-instance start directions (S_k, d) stacked as (B, max S_k, d), NaN rows for none."""
    S = max(len(r) for r in rows)
    out = np.full((len(rows), S, d), np.nan)
    for k, r in enumerate(rows):
        out[k, :len(r)] = np.asarray(r, dtype=np.float64).reshape(len(r), d)
    return out


def _grouped(keys: Sequence[Any], solve: Callable[[list[int]], list[Solved]]) -> list[Solved]:
    """Solve the jobs of each key together (first-seen order); results in the jobs' order."""
    groups: dict[Any, list[int]] = {}
    for k, key in enumerate(keys):
        groups.setdefault(key, []).append(k)
    out: list[Any] = [None] * len(keys)
    for ks in groups.values():
        for k, s in zip(ks, solve(ks)):
            out[k] = s
    return out


def linear_paths(datasets: Sequence, losses: Sequence, radii: Sequence[np.ndarray], starts: Sequence[np.ndarray],
                 iters: int, cones: Sequence[tuple | None] | None = None, min_radii: Sequence[float] | None = None,
                 build: Callable = Problem.from_datasets) -> list[Solved]:
    """p(R) = argmin {L(p) : ||p|| <= R [, p in cone_mu(q), ||p|| >= R0]} for each instance k on
    its radii[k] (G,) from its start directions starts[k] (S_k, d): `regpath.path` per group of
    same-shape instances with the same grid size, each with its own loss (a `Loss`, or a name). `cones[k]`:
    (q, mu) or None (all None or all given within a group); `min_radii[k]`: R0 (default 0);
    `build(datasets, loss)`: the problem (`Problem.from_datasets`, or `cross.w_problem` for W)."""
    n = len(datasets)
    cones = list(cones) if cones is not None else [None] * n
    min_radii = list(min_radii) if min_radii is not None else [0.0] * n
    keys = [(ds.n, ds.T, ds.d, len(r), c is None) for ds, r, c in zip(datasets, radii, cones)]

    def solve(ks: list[int]) -> list[Solved]:
        prob = build([datasets[k] for k in ks], losses[ks[0]])
        R = np.stack([np.asarray(radii[k], dtype=np.float64) for k in ks], axis=1)              # (G, B)
        cone = None
        if cones[ks[0]] is not None:
            cone = (np.stack([np.asarray(cones[k][0], dtype=np.float64) for k in ks]),
                    np.array([float(cones[k][1]) for k in ks]))
        lo = np.array([float(min_radii[k]) for k in ks])
        P = regpath.path(prob, R, _starts([starts[k] for k in ks], prob.dim), cone=cone, min_radius=lo, iters=iters,
                         loss=[losses[k] for k in ks])
        return [_solved(P, b) for b in range(len(ks))]

    return _grouped(keys, solve)


def kq_paths(datasets: Sequence, losses: Sequence[str], widths: Sequence[int], radii: Sequence[np.ndarray],
             starts: Sequence[np.ndarray], iters: int) -> list[Solved]:
    """The (K, Q) path (`regpath.kq_path`) of each instance on the W-parameterised problem
    (`cross.w_problem`), width widths[k], radii[k] (G,), theta start directions starts[k]."""
    from attnsvm.dynamics import cross

    keys = [(ds.n, ds.T, ds.d, m, len(r)) for ds, m, r in zip(datasets, widths, radii)]

    def solve(ks: list[int]) -> list[Solved]:
        ds0 = datasets[ks[0]]
        kq = cross.KQ(ds0.d, widths[ks[0]])
        prob = cross.w_problem([datasets[k] for k in ks], losses[ks[0]])
        R = np.stack([np.asarray(radii[k], dtype=np.float64) for k in ks], axis=1)
        P = regpath.kq_path(prob, kq, R, _starts([starts[k] for k in ks], 2 * kq.d * kq.m), iters=iters,
                            loss=[losses[k] for k in ks])
        return [_solved(P, b) for b in range(len(ks))]

    return _grouped(keys, solve)


def joint_paths(X: Sequence[np.ndarray], Y: Sequence[np.ndarray], K: Sequence[np.ndarray], radii: Sequence[np.ndarray],
                v_starts: Sequence[np.ndarray], p_starts: Sequence[np.ndarray], iters: int,
                loss: str = "logistic") -> list[Solved]:
    """The joint path (v, p)(r, R) (`regpath.joint_path`) of each instance: tokens X[k], labels
    Y[k], keys K[k], radii[k] (G, 2) as (r, R), paired start directions."""
    keys = [(x.shape, len(r)) for x, r in zip(X, radii)]

    def solve(ks: list[int]) -> list[Solved]:
        R = np.stack([np.asarray(radii[k], dtype=np.float64) for k in ks], axis=1)               # (G, B, 2)
        d = X[ks[0]].shape[-1]
        P = regpath.joint_path(np.stack([X[k] for k in ks]), np.stack([Y[k] for k in ks]), np.stack([K[k] for k in ks]),
                               R, _starts([v_starts[k] for k in ks], d), _starts([p_starts[k] for k in ks], d),
                               loss=loss, iters=iters)
        return [_solved(P, b) for b in range(len(ks))]

    return _grouped(keys, solve)


def lmm_starts(ds, q: np.ndarray, seed: int, extra: int = 2, limit: int = 64) -> np.ndarray:
    """Start directions of a path: q, every LMM direction (Definition 2, exact; exhaustive when
    T^n <= limit, else sampled) and `extra` seeded random directions."""
    from attnsvm.svm import geometry

    rng = np.random.default_rng(seed)
    dirs = [np.asarray(q, dtype=np.float64)] + [s.p_mm for s in geometry.lmms(ds, limit=limit, rng=rng)]
    dirs += list(rng.normal(size=(extra, ds.d)))
    return np.array(dirs)


