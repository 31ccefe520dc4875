"""Batched building blocks for conclusions (`claims.batched`), for the statements researchers
make most: run a rule for a horizon and measure correlation with an SVM direction, the risk
along the run, the selected tokens, the norm growth; the regularization path's direction at
given radii; exact LMM sets. A claim built from them is evaluated in batches::

    @batched
    def ngd_aligns(insts, budget):
        runs = blocks.run(insts, "ngd", steps=blocks.horizon(1500, budget), eta=0.1)
        corr = runs.corr(blocks.gmm_directions(insts))
        return blocks.outcomes(corr >= 0.99, undecided=~runs.trusted, reasons=runs.reasons,
                               detail={"corr": corr})

Instances are grouped by what runs together (shape (n, T, d), loss, steps) and advanced as one
batch (`dynamics.run`: normalized GD's unrecorded steps on the fused kernel); results come back
in the instances' order. An instance's results do not depend on the rest of its batch, so the
same instance gives the same outcome alone or in any batch. Exact SVM answers are memoized on
the dataset, so hypotheses and conclusions share one certificate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnsvm.claims.claim import Instance, Outcome
from attnsvm.svm import geometry

RECORDS = 16            # recorded rows of a run (a uniform grid over the horizon, and the last step)


def horizon(steps: int, budget) -> int:
    """A claim's iteration count under `budget` (its horizon factor: longer at standard and
    thorough, and when the engine extends or confirms)."""
    return max(1, int(steps * budget.horizon))


# ---- SVM directions ---------------------------------------------------------------------------

def gmm(insts: Sequence[Instance]) -> list[geometry.Selection]:
    """(ATT-SVM) for the optimal tokens of each instance, exactly certified (Definition 2)."""
    return [geometry.gmm(inst.dataset) for inst in insts]


def direction_of(sel: geometry.Selection) -> np.ndarray | None:
    """p_mm of a selection when it is feasible and certified, else None (nothing to compare with)."""
    return sel.p_mm if sel.feasible and sel.certified else None


def gmm_directions(insts: Sequence[Instance]) -> list[np.ndarray | None]:
    """p_mm(opt) per instance, or None where (ATT-SVM) is infeasible or uncertain."""
    return [direction_of(s) for s in gmm(insts)]


def lmm_sets(insts: Sequence[Instance], limit: int = 4096) -> list[list[geometry.Selection]]:
    """Every locally-max-margin selection of each instance (exact over [T]^n when T^n <= limit)."""
    return [geometry.lmms(inst.dataset, limit) for inst in insts]


# ---- runs -------------------------------------------------------------------------------------

TRUSTED = ("ok", "stationary")     # run statuses whose final point means what it says


@dataclass
class Runs:
    """Per-instance results of `run`, in the instances' order: recorded `steps`, iterates `p`
    (R, d), risk `value` (R,), `final` point, `status` ('ok', 'stationary', 'stalled',
    'non-finite'), `selected` tokens at the end."""

    steps: list[list[int]]
    p: list[np.ndarray]
    value: list[np.ndarray]
    final: list[np.ndarray]
    status: list[str]
    selected: list[tuple[int, ...]]

    @property
    def trusted(self) -> np.ndarray:
        """Whether each run's end point can be read: finite and not stalled by underflow."""
        return np.array([s in TRUSTED for s in self.status], dtype=bool)

    @property
    def reasons(self) -> list[str]:
        """Why a run is not trusted ('' where it is)."""
        return ["" if s in TRUSTED else f"run {s}" for s in self.status]

    def corr(self, targets: Sequence[np.ndarray | None]) -> np.ndarray:
        """corr(p_H, target) per instance; NaN where the target is None or p_H is 0."""
        return np.array([_corr(p, q) for p, q in zip(self.final, targets)])

    def corr_curve(self, targets: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        """corr(p_t, target) at each recorded step, per instance."""
        return [np.array([_corr(row, q) for row in P]) for P, q in zip(self.p, targets)]

    def risk_monotone(self, rtol: float = 1e-12) -> np.ndarray:
        """Whether the risk never rose between recorded steps (beyond rtol relative)."""
        return np.array([bool(np.all(np.diff(v) <= rtol * np.abs(v[:-1]))) for v in self.value])

    @property
    def norm(self) -> np.ndarray:
        return np.array([float(np.linalg.norm(p)) for p in self.final])

    def norm_growth(self) -> np.ndarray:
        """||p_H|| / ||p_{H/2}|| per instance (a run escaping to infinity keeps growing)."""
        out = []
        for steps, P in zip(self.steps, self.p):
            half = int(np.argmin(np.abs(np.asarray(steps) - steps[-1] / 2)))
            den = float(np.linalg.norm(P[half]))
            out.append(float(np.linalg.norm(P[-1])) / den if den > 0 else math.inf)
        return np.array(out)


def _corr(p: np.ndarray, q: np.ndarray | None) -> float:
    if q is None:
        return math.nan
    n = float(np.linalg.norm(p) * np.linalg.norm(q))
    return float(np.dot(p, q) / n) if n > 0 else math.nan


def _rule(name: str | Any, eta):
    from attnsvm import dynamics

    if not isinstance(name, str):
        return name
    if name not in dynamics.RULES:
        raise ValueError(f"unknown rule {name!r}; one of {sorted(dynamics.RULES)} or an UpdateRule")
    if name == "polyak":
        return dynamics.Polyak("infimum")
    if eta is None:
        raise ValueError(f"rule {name!r} needs a step size eta (a number, one per instance, or 'lemma6': 1/L_p)")
    return dynamics.RULES[name](eta)


def _per_instance(value, insts: Sequence[Instance]) -> list:
    """value per instance: a callable of the instance, a sequence (one each), an instance
    parameter's name, or one shared value."""
    if callable(value):
        return [value(inst) for inst in insts]
    if isinstance(value, (list, tuple)) and len(value) == len(insts):
        return list(value)
    if isinstance(value, str) and value != "lemma6":
        return [inst.params[value] for inst in insts]       # the name of an instance parameter
    return [value] * len(insts)


def run(insts: Sequence[Instance], rule: str | Any, steps: int, eta: Any = None, start: Any = None,
        loss: str | Callable = "logistic", records: int = RECORDS) -> Runs:
    """Run `rule` ('gd', 'ngd', 'polyak' with f_star = the risk's infimum, or an UpdateRule) on
    each instance's linear-head risk L(p) for `steps` iterations. `eta`: a step size, one per
    instance, an instance parameter's name, a function of the instance, or 'lemma6' (1/L_p of
    Lemma 6, our reconstruction of its constant); `start`: p_0 (zeros by default) in the same
    forms; `loss`: the loss name (or an instance parameter's name, e.g. 'loss'). Recorded at
    `records` evenly spaced steps and the last."""
    from attnsvm import dynamics
    from attnsvm.attention.losses import LOSSES
    from attnsvm.dynamics.smoothness import smoothness_constant

    losses = _per_instance(loss, insts) if not (isinstance(loss, str) and loss in LOSSES) else [loss] * len(insts)
    etas = _per_instance(eta, insts)
    starts = _per_instance(start, insts)
    groups: dict[tuple, list[int]] = {}
    for k, inst in enumerate(insts):
        ds = inst.dataset
        groups.setdefault((ds.n, ds.T, ds.d, str(losses[k])), []).append(k)
    out: list[Any] = [None] * len(insts)
    every = max(1, steps // records)
    for (_n, _T, d, _lossname), ks in groups.items():
        problem = dynamics.Problem.from_datasets([insts[k].dataset for k in ks], losses[ks[0]])
        step = [1.0 / smoothness_constant(insts[k].dataset, losses[k]) if etas[k] == "lemma6" else etas[k] for k in ks]
        shared = all(e == step[0] for e in step)
        p0 = np.stack([np.zeros(d) if starts[k] is None else np.broadcast_to(np.asarray(starts[k], float), (d,))
                       for k in ks])
        tr = dynamics.run(problem, _rule(rule, step[0] if shared else step), p0, steps, every=every)
        P = tr.p.cpu().numpy()
        V = tr.value.cpu().numpy()
        for j, k in enumerate(ks):
            out[k] = (list(tr.steps), P[:, j], V[:, j], tr.final[j].cpu().numpy(), tr.status[j],
                      tuple(int(a) for a in tr.selected[j].tolist()))
    return Runs(*(list(col) for col in zip(*out)))


# ---- regularization paths ---------------------------------------------------------------------

def path_directions(insts: Sequence[Instance], radii: Sequence[float], loss: str = "logistic",
                    starts: int = 4, seed: int = 0) -> tuple[list[np.ndarray], np.ndarray]:
    """The regularization path p(R) = argmin_{||p|| <= R} L(p) at each radius (shared by all
    instances), as unit directions: (per instance an array (len(radii), d), converged (B, len(radii))).
    Solved from each instance's p_mm(opt) direction (when feasible) and `starts` seeded random
    directions, the lowest risk winning (global optimality is not certified)."""
    from attnsvm import dynamics
    from attnsvm.dynamics import regpath

    groups: dict[tuple, list[int]] = {}
    for k, inst in enumerate(insts):
        groups.setdefault((inst.dataset.n, inst.dataset.T, inst.dataset.d), []).append(k)
    dirs: list[Any] = [None] * len(insts)
    ok = np.zeros((len(insts), len(radii)), dtype=bool)
    for (_n, _T, d), ks in groups.items():
        problem = dynamics.Problem.from_datasets([insts[k].dataset for k in ks], loss)
        S = []
        for k in ks:
            rng = np.random.default_rng([seed, k])
            rows = [q for q in [direction_of(geometry.gmm(insts[k].dataset))] if q is not None]
            rows += list(rng.normal(size=(starts, d)))
            rows = rows[:starts + 1] + [rows[-1]] * (starts + 1 - len(rows))
            S.append(np.stack(rows))
        res = regpath.path(problem, radii, np.stack(S))
        P = res.p.cpu().numpy()                                   # (radii, B, d)
        conv = res.converged().cpu().numpy()                      # (radii, B)
        for j, k in enumerate(ks):
            rows = P[:, j]
            dirs[k] = rows / np.linalg.norm(rows, axis=-1, keepdims=True)
            ok[k] = conv[:, j]
    return dirs, ok


# ---- outcomes ---------------------------------------------------------------------------------

def _column(value, k: int):
    if isinstance(value, np.ndarray):
        v = value[k]
        return v.tolist() if isinstance(v, np.ndarray) else (v.item() if isinstance(v, np.generic) else v)
    if isinstance(value, (list, tuple)):
        v = value[k]
        return v.tolist() if isinstance(v, np.ndarray) else v
    return value


def outcomes(holds, undecided=None, reasons: Sequence[str] | str = "", detail: dict | None = None,
             margin=None, applies=None, certified=None) -> list[Outcome]:
    """One Outcome per instance from per-instance arrays: `holds` (bool), `undecided` (bool:
    the outcome is None with its reason from `reasons`), `margin` (how far from failing),
    `applies` (False: outside the claim, counted apart), `certified`, and `detail` (name ->
    per-instance values, reported and searchable as measures)."""
    holds = np.asarray(holds, dtype=bool)
    B = holds.shape[0]
    undecided = np.zeros(B, dtype=bool) if undecided is None else np.asarray(undecided, dtype=bool)
    applies_ = np.ones(B, dtype=bool) if applies is None else np.asarray(applies, dtype=bool)
    certified_ = np.zeros(B, dtype=bool) if certified is None else np.asarray(certified, dtype=bool)
    outs = []
    for k in range(B):
        d = {name: _column(v, k) for name, v in (detail or {}).items()}
        d = {name: (None if isinstance(v, float) and math.isnan(v) else v) for name, v in d.items()}
        reason = _column(reasons, k) if not isinstance(reasons, str) else reasons
        m = None if margin is None else _column(margin, k)
        m = None if m is None or (isinstance(m, float) and math.isnan(m)) else m
        if not applies_[k]:
            outs.append(Outcome(None, detail=d, reason=reason or "outside the claim", applies=False))
        elif undecided[k]:
            outs.append(Outcome(None, detail=d, reason=reason or "undecided", margin=m))
        else:
            outs.append(Outcome(bool(holds[k]), certified=bool(certified_[k]), detail=d, margin=m))
    return outs
