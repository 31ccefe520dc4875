"""Gradient dynamics as composable update rules (optax style: `init` / `update`), batched.

A `Problem` is a batch of B linear-head instances with the same shape (keys K (B,n,T,d),
scores gamma (B,n,T)); `run` advances all B together with one rule. Rules see the
log-domain `Grad` (attnsvm.gradients), so normalized GD and Polyak keep the right direction
when the gradient underflows; fixed-step GD whose step underflows is reported `stalled`.
Runs on CUDA when present, else CPU, in float64.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any, ClassVar, Protocol, Sequence

import numpy as np
import torch

from . import model
from .data import Dataset
from .fused import FusedGrad
from .gradients import STATS, Grad, Keys, linear_head_grad
from .losses import Loss, get_loss


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@dataclass(frozen=True)
class Problem:
    """B instances of the linear-head risk L(p) = mean_i loss(<S(K_i p), gamma_i>).
    `fused_kernel`: take unrecorded steps' gradients on the fused kernel where it runs
    (attnsvm.fused); False keeps every gradient on the eager torch path."""

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
    def from_datasets(cls, datasets: Sequence[Dataset], loss: Loss | str = "logistic", device=None) -> "Problem":
        """p-parameterisation: keys X_i W, scores Y_i X_i v."""
        device = device or default_device()
        K = torch.stack([model.t(model.keys(ds), device) for ds in datasets])
        g = torch.stack([model.t(model.scores(ds), device) for ds in datasets])
        return cls(K, g, get_loss(loss))

    @classmethod
    def from_arrays(cls, K, gamma, loss: Loss | str = "logistic", device=None) -> "Problem":
        device = device or default_device()
        return cls(model.t(K, device), model.t(gamma, device), get_loss(loss))

    @cached_property
    def keys(self) -> Keys:
        """K laid out for the gradient's mat-vecs, built on first use."""
        return Keys.of(self.K)

    @cached_property
    def fused(self) -> FusedGrad | None:
        """The fused kernel of the gradient without statistics, where it runs (attnsvm.fused)."""
        return FusedGrad.of(self.K, self.gamma, self.loss) if self.fused_kernel else None

    def grad(self, p: torch.Tensor, stats: bool = True) -> Grad:
        if not stats and self.fused is not None:
            return self.fused(p)
        return linear_head_grad(self.keys, self.gamma, p, self.loss, stats)


class UpdateRule(Protocol):
    """`needs`: the statistics of `Grad` (gradients.STATS) that `update` reads; `run` computes
    them on every step only for rules that need them (a rule without `needs` gets all)."""

    needs: frozenset[str]

    def init(self, p: torch.Tensor) -> Any: ...
    def update(self, g: Grad, state: Any, p: torch.Tensor) -> tuple[torch.Tensor, Any]: ...


class Parameterisation(Protocol):
    """How trained coordinates theta (B, D) map to the problem's p (B, d), e.g. W = K Q^T
    (attnsvm.cross.KQ). `pullback` turns the log-domain gradient in p into the one in theta
    (chain rule), again as a `Grad`, so every update rule applies unchanged."""

    def to_p(self, theta: torch.Tensor) -> torch.Tensor: ...
    def pullback(self, g: Grad, theta: torch.Tensor) -> Grad: ...


@dataclass(frozen=True)
class Identity:
    """theta = p: the default parameterisation of `run`."""

    def to_p(self, theta):
        return theta

    def pullback(self, g: Grad, theta):
        return g


def _per_instance(x, like: torch.Tensor) -> float | torch.Tensor:
    """x for each instance of the batch `like` (B, ...): a number stays a float, else a (B,) tensor."""
    if isinstance(x, (int, float)):
        return float(x)
    return torch.as_tensor(x, dtype=like.dtype, device=like.device).expand(like.shape[0])


def _rows(x: float | torch.Tensor) -> float | torch.Tensor:
    """A per-instance factor (float or (B,)) that scales the rows of a (B, D) array."""
    return x if isinstance(x, float) else x[:, None]


@dataclass(frozen=True)
class GD:
    """p <- p - eta grad L(p). `eta` is a float or one value per instance (e.g. 1/L_p, Lemma 6)."""

    eta: float | Sequence[float] | torch.Tensor
    needs: ClassVar[frozenset] = frozenset()

    def init(self, p):
        return None

    def update(self, g: Grad, state, p):
        return g.direction * _rows(-_per_instance(self.eta, p) * torch.exp(g.log_norm)), state


@dataclass(frozen=True)
class NormalizedGD:
    """p <- p - eta grad L(p) / ||grad L(p)|| (SPEC.md C)."""

    eta: float | Sequence[float] | torch.Tensor
    needs: ClassVar[frozenset] = frozenset()

    def init(self, p):
        return None

    def update(self, g: Grad, state, p):
        return g.direction * _rows(-_per_instance(self.eta, p)), state


@dataclass(frozen=True)
class BlockNormalizedGD:
    """theta_k <- theta_k - eta grad_k L / ||grad_k L|| on each block k of consecutive coordinates
    (`sizes`, in order): normalized GD per parameter tensor, e.g. K and Q separately
    (`cross.KQ.blocks`), as the Transformers-as-SVMs code normalises each factor's gradient. A
    block whose gradient is 0 does not move. Exact from `Grad.direction` (scale-free)."""

    eta: float | Sequence[float] | torch.Tensor
    sizes: tuple[int, ...]
    needs: ClassVar[frozenset] = frozenset()

    def init(self, p):
        if sum(self.sizes) != p.shape[-1]:
            raise ValueError(f"blocks {self.sizes} do not add up to the {p.shape[-1]} coordinates")

    def update(self, g: Grad, state, p):
        blocks = g.direction.split(list(self.sizes), dim=-1)
        norms = [x.norm(dim=-1, keepdim=True) for x in blocks]
        unit = torch.cat([x / torch.where(n > 0, n, math.inf) for x, n in zip(blocks, norms)], -1)
        return unit * _rows(-_per_instance(self.eta, p)), state


@dataclass(frozen=True)
class Polyak:
    """p <- p - ((L(p) - f_star) / ||grad L||^2) grad L(p) (SPEC.md C), step length computed
    in the log domain as exp(log(L - f_star) - log||grad L||), capped at `max_step`.
    f_star="infimum" uses L_inf = mean_i loss(max_t gamma_it), the risk's infimum when the
    max-score tokens are separable (for a fixed head it is not 0), with log(L - L_inf) from
    `Grad.log_excess`, exact at any saturation."""

    f_star: float | Sequence[float] | torch.Tensor | str = 0.0
    max_step: float = 1e6
    needs: ClassVar[frozenset] = frozenset({"value", "log_excess"})

    def init(self, p):
        return None

    def update(self, g: Grad, state, p):
        if isinstance(self.f_star, str):
            if self.f_star != "infimum" or g.log_excess is None:
                raise ValueError(f"f_star={self.f_star!r}: only 'infimum' (with Grad.log_excess) is known")
            log_gap = g.log_excess
        else:
            log_gap = torch.log((g.value - _per_instance(self.f_star, p)).clamp_min(0))
        length = torch.exp(log_gap - g.log_norm).nan_to_num(0.0).clamp(max=self.max_step)
        return -length[:, None] * g.direction, state


@dataclass(frozen=True)
class PerInstance:
    """Instance b of the batch follows rules[b]: e.g. GD, NormalizedGD and Polyak side by side
    on copies of one problem, in one batched run."""

    rules: tuple

    @property
    def needs(self) -> frozenset:
        return frozenset().union(*(getattr(r, "needs", STATS) for r in self.rules))

    def init(self, p):
        if len(self.rules) != p.shape[0]:
            raise ValueError(f"PerInstance has {len(self.rules)} rules for a batch of {p.shape[0]}")
        return tuple(r.init(p[b:b + 1]) for b, r in enumerate(self.rules))

    def update(self, g: Grad, state, p):
        out = [r.update(g.take(slice(b, b + 1)), s, p[b:b + 1]) for b, (r, s) in enumerate(zip(self.rules, state))]
        return torch.cat([d for d, _ in out]), tuple(s for _, s in out)


UNDERFLOW = math.log(np.finfo(np.float64).tiny)   # about -708

RULES = {"gd": GD, "ngd": NormalizedGD, "polyak": Polyak}


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


def run(problem: Problem, rule: UpdateRule, p0, steps: int, every: int | None = None,
        param: Parameterisation = Identity()) -> Trajectory:
    """Advance all instances `steps` times with `rule` from p0 ((D,) or (B,D)); p0 and the
    rule live in `param`'s coordinates theta (p itself by default). Small problems (fewer
    than `SMALL` key entries, on CPU) run single-threaded."""
    small = problem.K.device.type == "cpu" and problem.K.numel() < SMALL
    with intra_op_threads(1 if small else torch.get_num_threads()):
        return _run(problem, rule, p0, steps, every, param)


def _light_grad(problem: Problem, rule: UpdateRule):
    """The gradient for steps that are not recorded: without the statistics (gradients.STATS)
    when the rule does not read them and the problem can skip them (`grad(p, stats=False)`)."""
    if getattr(rule, "needs", STATS) or "stats" not in inspect.signature(problem.grad).parameters:
        return problem.grad
    return partial(problem.grad, stats=False)


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
    for k in range(steps + 1):
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
        theta = new
    finite = torch.isfinite(theta).all(-1)
    status = ["non-finite" if not f else "stalled" if s else "stationary" if st else "ok"
              for f, s, st in zip(finite.tolist(), stalled.tolist(), stopped.tolist())]
    return Trajectory(keep, torch.stack(rows["p"]), torch.stack(rows["value"]), torch.stack(rows["log_grad_norm"]),
                      torch.stack(rows["log_unsat"]), g.selected, p, status, theta)
