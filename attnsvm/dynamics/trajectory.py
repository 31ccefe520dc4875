"""Batched runs of an update rule on a `Problem`, recorded sparsely (`Trajectory`). Fixed-step
GD whose step underflows is reported `stalled`."""

from __future__ import annotations

import contextlib
import inspect
import math
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import torch

from attnsvm.attention import model
from attnsvm.attention.gradients import STATS
from attnsvm.dynamics.problem import Problem
from attnsvm.dynamics.rules import (
    GD,
    BlockNormalizedGD,
    Identity,
    NormalizedGD,
    Parameterisation,
    PerInstance,
    Polyak,
    UpdateRule,
)

UNDERFLOW = math.log(np.finfo(np.float64).tiny)   # about -708


@dataclass
class Trajectory:
    """Sparse record of a batched run: rows at `steps` (iterations 0, 1, 2, 4, ... and last).

    p (R,B,d), value (R,B), log_grad_norm (R,B), log_unsat (R,B,n); `final` is p at the end;
    `status[b]` is 'ok'; 'stalled' (p did not move in the last step because the gradient fell
    below float64's range: fixed-step GD at deep saturation); 'stationary' (p did not move in
    the last step at a gradient above that range: a finite stationary point to float precision,
    e.g. a gradient below the rounding bound of its evaluation, `gradients.Keys.bound`); or
    'non-finite'. (A stateless rule that stops moving stays stopped, so the last step tells.)
    With a non-identity parameterisation, p is the problem's p (e.g. vec(K Q^T)),
    log_grad_norm is the gradient norm in theta, and `theta` holds the final theta."""

    steps: list[int]
    p: torch.Tensor
    value: torch.Tensor
    log_grad_norm: torch.Tensor
    log_unsat: torch.Tensor
    selected: torch.Tensor
    final: torch.Tensor
    status: list[str] = field(default_factory=list)
    theta: torch.Tensor | None = None

    def corr(self, q: torch.Tensor) -> torch.Tensor:
        """corr(p_t, q) per recorded step and instance; q (d,) or (B,d)."""
        q = q if q.dim() == 2 else q[None].expand(self.p.shape[1], -1)
        num = (self.p * q[None]).sum(-1)
        return num / (self.p.norm(dim=-1) * q.norm(dim=-1)[None]).clamp_min(1e-300)


def record_schedule(steps: int, every: int | None = None) -> list[int]:
    """0, 1, 2, 4, 8, ... (or every `every`) and the last step."""
    if every:
        s = set(range(0, steps + 1, every))
    else:
        s = {0} | {2 ** k for k in range(int(math.log2(max(steps, 1))) + 1)}
    s.add(steps)
    return sorted(x for x in s if x <= steps)


SMALL = 2 ** 16   # problems with fewer key entries than this run on one intra-op thread


@contextlib.contextmanager
def intra_op_threads(n: int):
    """Temporarily set torch's intra-op thread count (process-wide; restored on exit). Tiny
    tensors only pay threading overhead: on 2 busy cores one gradient of a (1,2,3,9) problem
    took 16 ms with 2 threads and 0.8 ms with 1."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


ROWS = 16   # a batch is padded to a multiple of this many instances (see `run`)
PADDABLE = (GD, NormalizedGD, BlockNormalizedGD, Polyak)     # library rules whose parameters `run` pads


def run(problem: Problem, rule: UpdateRule, p0, steps: int, every: int | None = None,
        param: Parameterisation = Identity()) -> Trajectory:
    """Advance all instances `steps` times with `rule` from p0 ((D,) or (B,D)); p0 and the
    rule live in `param`'s coordinates theta (p itself by default). Small problems (fewer
    than `SMALL` key entries, on CPU) run single-threaded.

    An instance's run does not depend on the rest of its batch, bitwise: torch's CPU kernels
    send the elements past the last multiple of the vector width through scalar code whose exp
    and log differ from the vector code's in the last bit (Polyak, which reads the risk at every
    step, then drifts apart), so a batch of `Problem` under a library rule is padded to a
    multiple of ROWS instances (copies of its last one), dropped again from the trajectory."""
    small = problem.K.device.type == "cpu" and problem.K.numel() < SMALL
    with intra_op_threads(1 if small else torch.get_num_threads()):
        B = problem.batch
        extra = -B % ROWS if type(problem) is Problem else 0
        padded_rule = _padded_rule(rule, B, extra) if extra else None
        if padded_rule is None:
            return _run(problem, rule, p0, steps, every, param)
        theta = model.t(p0, problem.K.device)
        theta = theta[None].expand(B, -1) if theta.dim() == 1 else theta
        padded = Problem(_pad(problem.K, extra), _pad(problem.gamma, extra), problem.loss, problem.fused_kernel)
        tr = _run(padded, padded_rule, _pad(theta, extra), steps, every, param)
        return Trajectory(tr.steps, tr.p[:, :B], tr.value[:, :B], tr.log_grad_norm[:, :B], tr.log_unsat[:, :B],
                          tr.selected[:B], tr.final[:B], tr.status[:B], None if tr.theta is None else tr.theta[:B])


def _pad(x: torch.Tensor, extra: int) -> torch.Tensor:
    """x (B, ...) with `extra` copies of its last row appended."""
    return torch.cat([x, x[-1:].expand(extra, *x.shape[1:])])


def _padded_rule(rule: UpdateRule, B: int, extra: int) -> UpdateRule | None:
    """The library rule for a batch padded by `extra` instances (its per-instance parameters, a
    sequence or tensor of length B, or PerInstance's rules, get copies of their last entry), or
    None for a rule of another kind: that one runs unpadded (its batch-independence is its own)."""
    from dataclasses import fields, replace

    if isinstance(rule, PerInstance):
        rules = [_padded_rule(r, 1, 0) for r in rule.rules]
        return None if None in rules else PerInstance(tuple(rules) + (rules[-1],) * extra)
    if type(rule) not in PADDABLE:
        return None
    changes = {}
    for f in fields(rule):
        v = getattr(rule, f.name)
        if isinstance(v, torch.Tensor) and v.dim() == 1 and v.shape[0] == B:
            changes[f.name] = _pad(v, extra)
        elif isinstance(v, (list, tuple, np.ndarray)) and len(v) == B:
            changes[f.name] = np.concatenate([np.asarray(v, dtype=np.float64),
                                              np.repeat(np.asarray(v[-1:], np.float64), extra)])
    return replace(rule, **changes) if changes else rule


def kernel_run(problem: Problem, theta0, steps: int, every: int | None, update, to_p=None, rate=None) -> Trajectory:
    """The second loop: an update written in numpy over the fused kernel's gradient direction (no
    torch round trip per step; recorded steps take the statistics from `Problem.grad`), for rules
    cheaper in numpy than as torch `UpdateRule`s (fixed-step GD, normalized GD in (K, Q)).
    `update(theta, direction, log_norm, rate) -> (new theta, log of the gradient norm in theta)`,
    `rate` (B,) a per-instance parameter (e.g. the step); `to_p(theta)` maps trained coordinates to
    the problem's p (default: theta is p). Recorded steps, final point and status rule are `run`'s,
    and so is the padding to a multiple of ROWS instances (an instance's run does not depend on
    its batch). The problem's kernel must run (`problem.fused`, a library loss, CPU): callers fall
    back to `run`."""
    B = problem.batch
    extra = -B % ROWS
    rate = np.zeros(B) if rate is None else np.broadcast_to(np.asarray(rate, dtype=np.float64), (B,))
    theta = np.array(np.broadcast_to(np.asarray(theta0, dtype=np.float64).reshape(-1, np.shape(theta0)[-1]),
                                     (B, np.shape(theta0)[-1])))
    if extra:
        problem = Problem(_pad(problem.K, extra), _pad(problem.gamma, extra), problem.loss, problem.fused_kernel)
        theta = np.concatenate([theta, np.repeat(theta[-1:], extra, axis=0)])
        rate = np.concatenate([rate, np.repeat(rate[-1:], extra)])
    tr = _kernel_run(problem, theta, steps, every, update, to_p, rate)
    return Trajectory(tr.steps, tr.p[:, :B], tr.value[:, :B], tr.log_grad_norm[:, :B], tr.log_unsat[:, :B],
                      tr.selected[:B], tr.final[:B], tr.status[:B], None if tr.theta is None else tr.theta[:B])


def _kernel_run(problem: Problem, theta: np.ndarray, steps: int, every: int | None, update, to_p, rate) -> Trajectory:
    fused, B = problem.fused, problem.batch
    keep, ws = record_schedule(steps, every), fused.workspace()
    keep_set = set(keep)
    rows: dict[str, list] = {k: [] for k in ("p", "value", "log_grad_norm", "log_unsat")}
    stopped = stalled = np.zeros(B, dtype=bool)
    selected = None
    for k in range(steps + 1):
        p = theta if to_p is None else to_p(theta)
        if k in keep_set:
            g = problem.grad(torch.from_numpy(p))
            rows["p"].append(torch.from_numpy(p.copy()))
            rows["value"].append(g.value)
            rows["log_unsat"].append(g.log_unsat)
            D, log_norm, selected = g.direction.numpy(), g.log_norm.numpy(), g.selected
        else:
            D, log_norm, _ = fused.arrays(p, ws)
        new, lg = update(theta, D, log_norm, rate)
        if k in keep_set:
            rows["log_grad_norm"].append(torch.from_numpy(np.array(lg)))
        if k == steps:
            break
        if k == steps - 1:
            stopped = (new == theta).all(-1)
            stalled = stopped & (lg < UNDERFLOW)
        theta = new
    finite = np.isfinite(theta).all(-1)
    status = ["non-finite" if not f else "stalled" if s else "stationary" if st else "ok"
              for f, s, st in zip(finite.tolist(), stalled.tolist(), stopped.tolist())]
    return Trajectory(keep, torch.stack(rows["p"]), torch.stack(rows["value"]), torch.stack(rows["log_grad_norm"]),
                      torch.stack(rows["log_unsat"]), selected, torch.from_numpy(p), status,
                      None if to_p is None else torch.from_numpy(theta))


def _light_grad(problem: Problem, rule: UpdateRule):
    """The gradient for steps that are not recorded: without the statistics (gradients.STATS)
    when the rule does not read them and the problem can skip them (`grad(p, stats=False)`)."""
    if getattr(rule, "needs", STATS) or "stats" not in inspect.signature(problem.grad).parameters:
        return problem.grad
    return partial(problem.grad, stats=False)


def _fused_normalized_gd(problem: Problem, rule: UpdateRule, param: Parameterisation):
    """The fused kernel's own loop for the unrecorded steps of normalized GD with one step size
    on p itself under a library loss (`FusedGrad.normalized_gd`: the same update and status rule
    as this loop, without a Python round trip through torch per step), or None where it does not
    apply."""
    if type(rule) is not NormalizedGD or not isinstance(rule.eta, (int, float)) or \
            not isinstance(param, Identity) or not isinstance(problem, Problem) \
            or type(problem).grad is not Problem.grad \
            or problem.K.device.type != "cpu" or problem.fused is None or not problem.fused.loss_code:
        return None
    return partial(problem.fused.normalized_gd, lr=float(rule.eta))


def _run(problem: Problem, rule: UpdateRule, p0, steps: int, every: int | None, param: Parameterisation) -> Trajectory:
    theta = model.t(p0, problem.K.device)
    theta = theta[None].expand(problem.batch, -1).clone() if theta.dim() == 1 else theta.clone()
    keep = record_schedule(steps, every)
    rows: dict[str, list] = {k: [] for k in ("p", "value", "log_grad_norm", "log_unsat")}
    state = rule.init(theta)
    stalled = torch.zeros(problem.batch, dtype=torch.bool, device=theta.device)
    stopped = torch.zeros_like(stalled)
    keep_set, g = set(keep), None
    light = _light_grad(problem, rule)
    fused_ngd = _fused_normalized_gd(problem, rule, param)
    k = 0
    while k <= steps:
        p = param.to_p(theta)
        g = param.pullback(problem.grad(p) if k in keep_set else light(p), theta)
        if k in keep_set:
            rows["p"].append(p.clone())
            rows["value"].append(g.value)
            rows["log_grad_norm"].append(g.log_norm)
            rows["log_unsat"].append(g.log_unsat)
        if k == steps:
            break
        delta, state = rule.update(g, state, theta)
        new = theta + delta
        if k == steps - 1:      # status from the last step only: this row test costs as much as a step
            stopped = (new == theta).all(-1)
            stalled = stopped & (g.log_norm < UNDERFLOW)      # gradient below float64 range
        theta, k = new, k + 1
        span = min((s for s in keep if s >= k), default=steps) - k      # unrecorded steps up to the next row
        if fused_ngd is not None and span > 1:
            end = fused_ngd(theta.numpy(), span)
            theta = torch.from_numpy(end.p)
            if k + span == steps:
                status = torch.tensor([x in ("stalled", "stationary") for x in end.status])
                stopped, stalled = status, torch.tensor([x == "stalled" for x in end.status])
            k += span
    finite = torch.isfinite(theta).all(-1)
    status = ["non-finite" if not f else "stalled" if s else "stationary" if st else "ok"
              for f, s, st in zip(finite.tolist(), stalled.tolist(), stopped.tolist())]
    return Trajectory(keep, torch.stack(rows["p"]), torch.stack(rows["value"]), torch.stack(rows["log_grad_norm"]),
                      torch.stack(rows["log_unsat"]), g.selected, p, status, theta)
