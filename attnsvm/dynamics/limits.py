"""Finite-horizon evidence of directional convergence (paper A's Theorems 2 and 3, docs/statements.md#theorem2).

A run converges in direction to q when p_t/||p_t|| -> q/||q||. At a finite horizon H, per
start, we measure at the last recorded checkpoints (H/4, H/2, H):

- increment alignment `1 - corr(-grad L(p_t), q)` from the log-domain gradient direction
  (exact at any saturation). GD and normalized GD step along -grad L; if the steps align with
  q while ||p_t|| -> infinity, then p_t/||p_t|| -> q/||q|| (Stolz-Cesaro). For GD with an
  exponentially tailed softmax the alignment typically settles polynomially in t (slower when
  an active constraint has a zero dual), whereas corr(p_t, q) itself creeps up like
  1 - O(1/log(t)^2) (p_t = q log t + bounded residual);
- norm growth: ||p_t|| increasing over the checkpoints;
- 1 - corr(p_t, q): not increasing over the last octave (or already below `floor`); its
  fitted slope against log t, and for GD the residual growth ||r_H|| - ||r_{H/2}||,
  r_t = p_t - q log t, are reported.

`classify` names the limit of one start: 'gmm' (converging to p_mm(opt)), 'other' (converging
to p_mm(alpha) of tokens alpha != opt that it selects: e.g. an LMM), or 'undecided' with the
reason. `run_to_limit` runs a batch of starts and extends the horizon (up to `max_factor` x)
while some start is undecided, and always before it accepts an 'other' limit, so a failure
is only called after the longer horizon confirmed it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.dynamics.problem import Problem
from attnsvm.dynamics.rules import UpdateRule
from attnsvm.dynamics.trajectory import Trajectory, intra_op_threads, run
from attnsvm.dynamics.trends import loglog_slope
from attnsvm.svm import geometry


@dataclass(frozen=True)
class Tolerances:
    """align: largest 1 - corr(-grad L, q) at the horizon; floor: 1 - corr(p, q) below which the
    direction counts as converged whatever its trend (float64 noise of a converged run)."""

    align: float = 0.05
    floor: float = 1e-3


def alignment_gap(problem: Problem, p: torch.Tensor, q) -> np.ndarray:
    """1 - corr(-grad L(p_b), q_b) per instance b of the batch; q (d,) or (B, d). A zero
    gradient (exact stationarity) gives 1."""
    with intra_op_threads(1):                    # tiny tensors: threads only add overhead
        g = problem.grad(p)
    q = model.t(q, p.device)
    q = q if q.dim() == 2 else q[None].expand(p.shape[0], -1)
    c = -(g.direction * q).sum(-1) / q.norm(dim=-1)
    return (1 - c).cpu().numpy()


def extend(problem: Problem, rule: UpdateRule, tr: Trajectory, steps: int) -> Trajectory:
    """Continue a run of a stateless rule (GD, NormalizedGD, Polyak) for `steps` more iterations;
    the records of both parts are joined (steps of the second part offset by the first)."""
    more = run(problem, rule, tr.final, steps)
    offset = tr.steps[-1]
    status = [b if b != "ok" else m for b, m in zip(tr.status, more.status)]
    return Trajectory(tr.steps + [offset + s for s in more.steps[1:]], torch.cat([tr.p, more.p[1:]]),
                      torch.cat([tr.value, more.value[1:]]), torch.cat([tr.log_grad_norm, more.log_grad_norm[1:]]),
                      torch.cat([tr.log_unsat, more.log_unsat[1:]]), more.selected, more.final, status)


@dataclass(frozen=True)
class Limit:
    """kind: 'gmm' | 'other' | 'undecided'; alpha: tokens selected at the horizon; detail: the
    measured values (JSON-ready); reason: why undecided."""

    kind: str
    alpha: tuple[int, ...]
    detail: dict = field(default_factory=dict)
    reason: str = ""


def _towards(problem: Problem, tr: Trajectory, b: int, q: np.ndarray, rows: list[int], tol: Tolerances) -> tuple[bool, dict]:
    P = tr.p[rows, b]                                                     # (3, d)
    batch = Problem(problem.K[b:b + 1].expand(len(rows), *problem.K.shape[1:]),
                    problem.gamma[b:b + 1].expand(len(rows), *problem.gamma.shape[1:]), problem.loss)
    align = alignment_gap(batch, P, q)
    corr_gap = [1 - geometry.corr(P[k].cpu().numpy(), q) for k in range(len(rows))]
    norms = P.norm(dim=-1).cpu().numpy()
    steps = [tr.steps[r] for r in rows]
    resid = [float(np.linalg.norm(P[k].cpu().numpy() - q * math.log(steps[k]))) for k in range(len(rows))]
    d = {"align_gap": align.tolist(), "corr_gap": corr_gap, "norm": norms.tolist(), "steps": steps,
         "corr_gap_slope_vs_log_t": loglog_slope(steps, corr_gap), "residual_growth_last_octave": resid[-1] - resid[-2]}
    ok = (align[-1] <= tol.align and bool(np.all(np.diff(norms) > 0))
          and (corr_gap[-1] <= corr_gap[-2] or corr_gap[-1] <= tol.floor))
    return ok, d


def classify(ds: Dataset, problem: Problem, tr: Trajectory, b: int, gmm: geometry.Selection,
             tol: Tolerances = Tolerances()) -> Limit:
    """The limit of start b of `tr` (a run on copies of `ds`); `gmm` = geometry.gmm(ds), the
    selection of the optimal tokens (first index on ties: callers that need the GMM proper
    require strict optimality)."""
    alpha = tuple(int(a) for a in tr.selected[b].tolist())
    rows = list(range(len(tr.steps)))[-3:]
    detail = {"alpha": list(alpha), "status": tr.status[b], "horizon": tr.steps[-1],
              "final_p": tr.final[b].cpu().tolist(), "log_unselected_mass": tr.log_unsat[-1, b].cpu().tolist()}
    if tr.status[b] != "ok":
        return Limit("undecided", alpha, detail, f"run {tr.status[b]} (gradient underflow or non-finite): untrusted")
    if gmm.feasible:
        ok, d = _towards(problem, tr, b, gmm.p_mm, rows, tol)
        detail["to_gmm"] = d
        if ok and alpha == gmm.alpha:
            return Limit("gmm", alpha, detail)
    sel = gmm if alpha == gmm.alpha else geometry.select(ds, alpha)
    if sel.feasible and alpha != gmm.alpha:
        ok, d = _towards(problem, tr, b, sel.p_mm, rows, tol)
        detail.update(to_selected=d, selected_p_mm=sel.p_mm.tolist(), selected_locally_optimal=sel.locally_optimal,
                      selected_score_gap=sel.score_gap, selected_certified=sel.certified)
        if ok:
            return Limit("other", alpha, detail)
    why = "selected tokens not separable (ATT-SVM infeasible)" if not sel.feasible else \
        f"not converged at horizon {tr.steps[-1]} (alignment, norm growth or corr trend outside tolerance)"
    return Limit("undecided", alpha, detail, why)


def run_to_limit(ds: Dataset, problem: Problem, rule: UpdateRule, starts, steps: int, max_factor: int = 4,
                 tol: Tolerances = Tolerances(), extend_on: tuple[str, ...] = ("undecided", "other")
                 ) -> tuple[Trajectory, list[Limit]]:
    """Run every start (problem holds one copy of `ds` per start) for `steps`, classify, and
    extend to `max_factor * steps` when a start's kind is in `extend_on`. Keep 'other' in it:
    a failure must persist over the longer horizon; dropping 'undecided' saves time when only
    failures matter (a search for counterexamples)."""
    gmm = geometry.gmm(ds)
    tr = run(problem, rule, starts, steps)
    limits = [classify(ds, problem, tr, b, gmm, tol) for b in range(problem.batch)]
    if max_factor > 1 and any(l.kind in extend_on for l in limits):
        tr = extend(problem, rule, tr, (max_factor - 1) * steps)
        limits = [classify(ds, problem, tr, b, gmm, tol) for b in range(problem.batch)]
    return tr, limits
