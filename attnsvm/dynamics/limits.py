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


def run_gd(problem: Problem, eta, p0, steps: int, every: int | None = None) -> Trajectory:
    """`trajectory.run(problem, GD(eta), p0, steps, every)` (eta a number or one per instance) with its
    steps in numpy on the fused kernel (`trajectory.kernel_run`: p <- p - eta exp(log||g||) g/||g||,
    about 2.5x fewer microseconds per step than the torch loop for the few instances of one shape
    that a check runs together); where the kernel does not run (a GPU, a custom loss) it is `run`."""
    from attnsvm.dynamics.rules import GD
    from attnsvm.dynamics.trajectory import kernel_run

    fused = problem.fused if problem.K.device.type == "cpu" else None
    if fused is None or not fused.loss_code:
        return run(problem, GD(eta), p0, steps, every)
    step = -np.broadcast_to(np.asarray(eta, dtype=np.float64), (problem.batch,))
    return kernel_run(problem, p0, steps, every,
                      lambda p, D, log_norm, rate: (p + D * (rate * np.exp(log_norm))[:, None], log_norm), rate=step)


def extend(problem: Problem, rule: UpdateRule, tr: Trajectory, steps: int) -> Trajectory:
    """Continue a run of a stateless rule (GD, NormalizedGD, Polyak) for `steps` more iterations;
    the records of both parts are joined (steps of the second part offset by the first)."""
    more = run(problem, rule, tr.final, steps)
    offset = tr.steps[-1]
    status = [b if b != "ok" else m for b, m in zip(tr.status, more.status)]
    return Trajectory(tr.steps + [offset + s for s in more.steps[1:]], torch.cat([tr.p, more.p[1:]]),
                      torch.cat([tr.value, more.value[1:]]), torch.cat([tr.log_grad_norm, more.log_grad_norm[1:]]),
                      torch.cat([tr.log_unsat, more.log_unsat[1:]]), more.selected, more.final, status)


def joined(tr: Trajectory, rows, more: Trajectory) -> Trajectory:
    """The rows `rows` of `tr` continued by `more` (a run from their final points): records joined,
    the second part's steps offset by the first's, the status of the second part where the first
    was 'ok'."""
    rows = torch.as_tensor(np.asarray(rows), dtype=torch.long)
    offset = tr.steps[-1]
    status = [tr.status[r] if tr.status[r] != "ok" else m for r, m in zip(rows.tolist(), more.status)]
    return Trajectory(tr.steps + [offset + s for s in more.steps[1:]], torch.cat([tr.p[:, rows], more.p[1:]]),
                      torch.cat([tr.value[:, rows], more.value[1:]]),
                      torch.cat([tr.log_grad_norm[:, rows], more.log_grad_norm[1:]]),
                      torch.cat([tr.log_unsat[:, rows], more.log_unsat[1:]]), more.selected, more.final, status)


@dataclass(frozen=True)
class Limit:
    """kind: 'gmm' | 'other' | 'undecided'; alpha: tokens selected at the horizon; detail: the
    measured values (JSON-ready); reason: why undecided."""

    kind: str
    alpha: tuple[int, ...]
    detail: dict = field(default_factory=dict)
    reason: str = ""


def _towards(problem: Problem, tr: Trajectory, jobs: list[tuple[int, np.ndarray]], rows: list[int],
             tol: Tolerances) -> list[tuple[bool, dict]]:
    """For each (b, q) of `jobs`: does start b of `tr` converge towards q at the recorded `rows`
    (increments aligned with q within tol.align at the last row, norm growing, 1 - corr(p, q)
    not rising over the last octave or below tol.floor)? One batched gradient for all jobs."""
    if not jobs:
        return []
    bs = [b for b, _ in jobs]
    P = tr.p[rows][:, bs].transpose(0, 1).reshape(len(jobs) * len(rows), -1)          # job-major
    idx = torch.as_tensor(bs, device=problem.K.device).repeat_interleave(len(rows))
    batch = Problem(problem.K[idx], problem.gamma[idx], problem.loss)
    Q = np.repeat(np.stack([q for _, q in jobs]), len(rows), axis=0)
    align = alignment_gap(batch, P, Q).reshape(len(jobs), len(rows))
    steps = [tr.steps[r] for r in rows]
    out = []
    for j, (b, q) in enumerate(jobs):
        Pj = tr.p[rows, b].cpu().numpy()
        corr_gap = [1 - geometry.corr(Pj[k], q) for k in range(len(rows))]
        norms = np.linalg.norm(Pj, axis=-1)
        resid = [float(np.linalg.norm(Pj[k] - q * math.log(steps[k]))) for k in range(len(rows))]
        d = {"align_gap": align[j].tolist(), "corr_gap": corr_gap, "norm": norms.tolist(), "steps": steps,
             "corr_gap_slope_vs_log_t": loglog_slope(steps, corr_gap),
             "residual_growth_last_octave": resid[-1] - resid[-2]}
        ok = (align[j, -1] <= tol.align and bool(np.all(np.diff(norms) > 0))
              and (corr_gap[-1] <= corr_gap[-2] or corr_gap[-1] <= tol.floor))
        out.append((bool(ok), d))
    return out


def classify_all(datasets: list[Dataset], problem: Problem, tr: Trajectory,
                 tol: Tolerances = Tolerances()) -> list[Limit]:
    """The limit of every start b of `tr`, a run on `datasets[b]` (one per start; a dataset may
    repeat): 'gmm' when it converges (in the sense of `_towards`) to p_mm(opt) selecting opt,
    'other' when it converges to p_mm(alpha) of the tokens alpha != opt it selects, else
    'undecided' with the reason. The GMM is `geometry.gmm(ds)` (first index on ties: callers that
    need the GMM proper require strict optimality). Two batched gradients for the whole run."""
    rows = list(range(len(tr.steps)))[-3:]
    gmms = [geometry.gmm(ds) for ds in datasets]
    alphas = [tuple(int(a) for a in tr.selected[b].tolist()) for b in range(len(datasets))]
    details = [{"alpha": list(alphas[b]), "status": tr.status[b], "horizon": tr.steps[-1],
                "final_p": tr.final[b].cpu().tolist(), "log_unselected_mass": tr.log_unsat[-1, b].cpu().tolist()}
               for b in range(len(datasets))]
    out: list[Limit | None] = [None] * len(datasets)
    for b in range(len(datasets)):
        if tr.status[b] != "ok":
            out[b] = Limit("undecided", alphas[b], details[b], f"run {tr.status[b]} (gradient underflow or "
                                                               "non-finite): untrusted")
    todo = [b for b in range(len(datasets)) if out[b] is None]
    first = [b for b in todo if gmms[b].feasible]
    for b, (ok, d) in zip(first, _towards(problem, tr, [(b, gmms[b].p_mm) for b in first], rows, tol)):
        details[b]["to_gmm"] = d
        if ok and alphas[b] == gmms[b].alpha:
            out[b] = Limit("gmm", alphas[b], details[b])
    sels = {b: geometry.select(datasets[b], alphas[b]) for b in todo if out[b] is None and alphas[b] != gmms[b].alpha}
    second = [b for b, sel in sels.items() if sel.feasible]
    for b, (ok, d) in zip(second, _towards(problem, tr, [(b, sels[b].p_mm) for b in second], rows, tol)):
        sel = sels[b]
        details[b].update(to_selected=d, selected_p_mm=sel.p_mm.tolist(), selected_locally_optimal=sel.locally_optimal,
                          selected_score_gap=sel.score_gap, selected_certified=sel.certified)
        if ok:
            out[b] = Limit("other", alphas[b], details[b])
    for b in todo:
        if out[b] is None:
            sel = sels.get(b, gmms[b])
            why = "selected tokens not separable (ATT-SVM infeasible)" if not sel.feasible else \
                f"not converged at horizon {tr.steps[-1]} (alignment, norm growth or corr trend outside tolerance)"
            out[b] = Limit("undecided", alphas[b], details[b], why)
    return out


def classify(ds: Dataset, problem: Problem, tr: Trajectory, b: int, gmm: geometry.Selection | None = None,
             tol: Tolerances = Tolerances()) -> Limit:
    """The limit of start b of `tr` (a run on copies of `ds`): `classify_all` for one start."""
    sub = Trajectory(tr.steps, tr.p[:, b:b + 1], tr.value[:, b:b + 1], tr.log_grad_norm[:, b:b + 1],
                     tr.log_unsat[:, b:b + 1], tr.selected[b:b + 1], tr.final[b:b + 1], [tr.status[b]])
    return classify_all([ds], Problem(problem.K[b:b + 1], problem.gamma[b:b + 1], problem.loss), sub, tol)[0]


def run_to_limit(ds: Dataset, problem: Problem, rule: UpdateRule, starts, steps: int, max_factor: int = 4,
                 tol: Tolerances = Tolerances(), extend_on: tuple[str, ...] = ("undecided", "other")
                 ) -> tuple[Trajectory, list[Limit]]:
    """Run every start (problem holds one copy of `ds` per start) for `steps`, classify, and
    extend to `max_factor * steps` when a start's kind is in `extend_on`. Keep 'other' in it:
    a failure must persist over the longer horizon; dropping 'undecided' saves time when only
    failures matter (a search for counterexamples)."""
    tr = run(problem, rule, starts, steps)
    limits = classify_all([ds] * problem.batch, problem, tr, tol)
    if max_factor > 1 and any(l.kind in extend_on for l in limits):
        tr = extend(problem, rule, tr, (max_factor - 1) * steps)
        limits = classify_all([ds] * problem.batch, problem, tr, tol)
    return tr, limits


@dataclass
class Descent:
    """One instance's share of a batched run (`descend`): the group's trajectory `tr`, the rows
    `cols` of its starts in it, and (when classified) each start's `Limit`."""

    tr: Trajectory
    cols: list[int]
    limits: list[Limit] | None = None

    def p(self, rows) -> np.ndarray:
        """Its starts' iterates at the recorded `rows` (len(rows), starts, d)."""
        return self.tr.p[rows][:, self.cols].cpu().numpy()

    @property
    def status(self) -> list[str]:
        return [self.tr.status[b] for b in self.cols]


def descend(insts, rules: list[tuple[str, float, int]], classify=lambda inst: True,
            tol: Tolerances = Tolerances()) -> list[Descent]:
    """Run every instance's starts (params 'starts', a list of points, and 'loss') with its rule,
    rules[k] = ('gd', eta, steps) (fixed-step GD, `run_gd`) or ('ngd', eta, steps) (normalized GD on
    the fused kernel), all instances of one shape, loss, rule and horizon in one batch, and name
    each start's limit (`classify_all`) where `classify(inst)`. An instance's results do not depend
    on the others in its batch (each row is its own problem)."""
    from attnsvm.dynamics.rules import NormalizedGD

    groups: dict[tuple, list[int]] = {}
    for k, inst in enumerate(insts):
        ds = inst.dataset
        kind, eta, steps = rules[k]
        groups.setdefault((ds.n, ds.T, ds.d, inst.params["loss"], kind, steps, eta if kind == "ngd" else None),
                          []).append(k)
    out: list[Descent | None] = [None] * len(insts)
    for (_, _, _, loss, kind, steps, _), ks in groups.items():
        rows, datasets, p0, etas = [], [], [], []
        for k in ks:
            starts = np.asarray(insts[k].params["starts"], dtype=np.float64)
            rows.append(list(range(len(datasets), len(datasets) + len(starts))))
            datasets += [insts[k].dataset] * len(starts)
            p0.append(starts)
            etas += [rules[k][1]] * len(starts)
        problem = Problem.from_datasets(datasets, loss)
        if kind == "gd":
            tr = run_gd(problem, np.array(etas), np.concatenate(p0), steps)
        else:
            tr = run(problem, NormalizedGD(etas[0]), np.concatenate(p0), steps)
        lims = classify_all(datasets, problem, tr, tol) if classify(insts[ks[0]]) else None
        for k, cols in zip(ks, rows):
            out[k] = Descent(tr, cols, [lims[b] for b in cols] if lims else None)
    return out
