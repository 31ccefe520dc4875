"""Regularization paths (paper A: Theorems 1 and 4; Section 3: Theorems 5 and 6).

    p(R) = argmin L(p)  s.t.  ||p|| <= R  [and p in cone_mu(q), ||p|| >= R0 (Theorem 4)]
    (v, p)(r, R) = argmin L(v, p)  s.t.  ||v|| <= r, ||p|| <= R                 (Section 3)
    (K, Q)(R) = argmin L(K Q^T)  s.t.  ||K||_F^2 + ||Q||_F^2 <= 2R     (Transformers as SVMs, `kq_path`)

for linear-head problems (`dynamics.Problem`), batched over instances.

Solver (`descend`): projected descent along the log-domain unit gradient
(`attnsvm.attention.gradients`), one block of variables at a time, with a step length per instance
and block that doubles on success and halves on failure. At large R softmax saturates,
L(p) - L_selected ~ e^{-R} sits far below float64's resolution of L, so trial points are
compared by `risk_split` (the risk of the selected tokens plus a cancellation-free
excess, `losses.increment`), never by the rounded value.

Convergence is first-order stationarity, scale-free: with d the unit gradient of a block
and P the projection onto its region,

    residual = ||x - P(x - tau R d)|| / (tau R)          (tau = TAU)

which on the sphere ||p|| = R is the sine of the angle between -grad L and p. A solve is
'converged' when every block's residual is <= tol (or, strictly inside the region, when
||grad|| <= gtol); 'resolution' when the residual is above tol but no trial point is lower
at float64's resolution (the risk's relative precision is about eps R ||k_t - k_tau||; the
residual says how far from stationary the point may still be); 'underflow' when a gradient
left float64's range (log||grad|| < -700: trial points are then incomparable); else 'not
converged'. Callers must treat 'underflow' and 'not converged' as INCONCLUSIVE and decide
what residual they accept for 'resolution'.

Steps: each iteration tries, per block, a Newton step (Riemannian on the sphere where the
ball is active) on log(excess) where the excess is positive (the risk is exponential in its
tails, where plain Newton gains only a factor e per step) and, where Newton fails and every
GRADIENT_EVERY iterations, a projected step along the unit gradient (length adapted by
Barzilai-Borwein, halved on failure); the lower trial is kept if it lowers the risk.

Global optimality is NOT certified (the problems are non-convex): every radius is solved
from several starts (the previous radius' solution rescaled, plus the caller's candidate
directions, e.g. every feasible p_mm(alpha)) and the lowest risk wins; `Path.found`
counts the distinct converged local solutions.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import torch

from attnsvm import status as st
from attnsvm.attention import losses
from attnsvm.attention.gradients import Keys, linear_head_grad
from attnsvm.dynamics.problem import Problem
from attnsvm.dynamics.trajectory import intra_op_threads
from attnsvm.numerics import DIV_FLOOR, LOG_FLUSH

TAU = 1e-4
UNDERFLOW_LOG = LOG_FLUSH   # a gradient norm below e^-700: trial points are incomparable
MIN_STEP = 1e-13          # step lengths stay above MIN_STEP * R (below it x + step == x in float64)
RESOLUTION_FAILS = 45     # consecutive failed trials (step halved from R to MIN_STEP * R): 'resolution'
GRADIENT_EVERY = 4        # a gradient trial at least every few iterations, even where Newton succeeds


# ---- regions -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Region:
    """{x : min_radius <= ||x|| <= radius, corr(x, axis) >= cos} per instance (B rows).

    `axis`/`cos` (optional) give a circular cone (cone_mu(q) with cos = 1 - mu,
    docs/statements.md#definition2); `min_radius` (default 0) Theorem 4's norm lower bound R0."""

    radius: torch.Tensor
    axis: torch.Tensor | None = None
    cos: torch.Tensor | None = None
    min_radius: torch.Tensor | None = None

    def project(self, x: torch.Tensor) -> torch.Tensor:
        """Projection onto the cone (closed form) then radial clamping into [min_radius, radius];
        exact for the ball and the ball-cone intersection (both convex, centred at the apex)."""
        if self.axis is not None:
            x = project_cone(x, self.axis, self.cos)
        norm = _norm(x, keepdim=True)
        target = norm.clamp(max=self.radius[:, None]) if self.min_radius is None else \
            norm.clamp(min=self.min_radius[:, None], max=self.radius[:, None])
        if bool((norm > 0).all()):
            return x / norm * target
        # a zero row has no direction: the cone's axis (or e_1) scaled to the target norm
        safe = torch.where(norm > 0, norm, torch.ones_like(norm))
        fallback = self.axis if self.axis is not None else torch.nn.functional.one_hot(
            torch.zeros(x.shape[0], dtype=torch.long, device=x.device), x.shape[-1]).to(x.dtype)
        unit = torch.where(norm > 0, x / safe, fallback / _norm(fallback, keepdim=True))
        return unit * target

    def on_boundary(self, x: torch.Tensor, rel: float = 1e-9) -> torch.Tensor:
        return _norm(x) >= self.radius * (1 - rel)

    def rows(self, index: torch.Tensor) -> Region:
        pick = lambda a: None if a is None else a[index]
        return Region(self.radius[index], pick(self.axis), pick(self.cos), pick(self.min_radius))


def _norm(x: torch.Tensor, keepdim: bool = False) -> torch.Tensor:
    """Euclidean norm over the last dimension (torch.linalg directly: no Python dispatch)."""
    return torch.linalg.vector_norm(x, dim=-1, keepdim=keepdim)


def project_cone(x: torch.Tensor, axis: torch.Tensor, cos: torch.Tensor) -> torch.Tensor:
    """Euclidean projection onto {x : <x, q> >= cos ||x|| ||q||} (0 < cos < 1), rows batched."""
    q = axis / _norm(axis, keepdim=True)
    a = (x * q).sum(-1, keepdim=True)
    w = x - a * q
    b = _norm(w, keepdim=True)
    c = cos[:, None]
    s = torch.sqrt((1 - c * c).clamp_min(0))
    inside = a * s >= b * c                              # angle(x, q) <= arccos(cos)
    polar = a * c + b * s <= 0                           # projection is the apex
    wu = torch.where(b > 0, w / torch.where(b > 0, b, torch.ones_like(b)), torch.zeros_like(w))
    edge = c * q + s * wu                                # unit ray of the boundary nearest x
    onto = (a * c + b * s) * edge
    return torch.where(inside, x, torch.where(polar, torch.zeros_like(x), onto))


# ---- precise risk --------------------------------------------------------------------------

def risk_split(K: torch.Tensor, gamma: torch.Tensor, p: torch.Tensor, loss) -> tuple[torch.Tensor, torch.Tensor]:
    """L(p) = base + excess, batched (B,). Per input, with ref_i the max-logit token and
    c_i = sum_t s_it (gamma_{i,ref_i} - gamma_it) = gamma_ref - Y_i f(X_i) (no cancellation):
    base_i = loss(gamma_ref), excess_i = loss(gamma_ref - c_i) - loss(gamma_ref) (`losses.increment`)
    where |excess_i| <= |base_i| / 2 or base_i = 0 (the saturated regime, where L_i - base_i is far
    below L_i's resolution; with base_i = 0, e.g. the correlation loss at gamma_ref = 0, an input's
    whole risk is its excess and must not be rounded into the other inputs' bases), else base_i =
    loss(Y_i f(X_i)) directly and excess_i = 0 (a good mixture whose risk is far below
    loss(gamma_ref): splitting would cancel). Two points are compared by
    (base_a - base_b) + (excess_a - excess_b)."""
    a = _logits(K, p)
    base, excess, _ = _risk_parts(a, torch.softmax(a, dim=-1), gamma, loss)
    return base, excess


def _mm(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """Batched matrix product A (..., i, k) @ B (..., k, j) as a broadcast product summed over k:
    no BLAS, whose batched kernels choose their code by the batch's size and layout, so a row's
    product does not depend on the rows beside it."""
    return (A[..., :, :, None] * B[..., None, :, :]).sum(-2)


def _logits(K: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """a_it = k_it^T p (B, n, T) for keys K (B, n, T, d) and p (B, d)."""
    return (K @ p[:, None, :, None])[..., 0]


def _risk_parts(a: torch.Tensor, s: torch.Tensor, gamma: torch.Tensor, loss):
    """`risk_split`'s (base, excess) and the margins f_i = <s_i, gamma_i>, from logits a and softmax s."""
    ref = a.argmax(-1, keepdim=True)
    g_ref = torch.gather(gamma, -1, ref)
    c = (s * (g_ref - gamma)).sum(-1)
    g_ref = g_ref.squeeze(-1)
    base, inc = loss.value(g_ref), losses.increment(loss, g_ref, c)
    split = (inc.abs() <= base.abs() / 2) | (base == 0)      # base 0: base + excess cannot cancel
    f = (s * gamma).sum(-1)
    direct = loss.value(f)
    return torch.where(split, base, direct).mean(-1), torch.where(split, inc, torch.zeros_like(inc)).mean(-1), f


@dataclass(frozen=True)
class Evaluation:
    """Risk (base + excess, see `risk_split`) and, per block, unit gradient, log-norm and
    (optional, for Newton steps) the block's Hessian divided by the gradient norm; `aux`: per-row
    by-products an objective can reuse for the Hessian at the same point (`Objective.hessians`)."""

    base: torch.Tensor
    excess: torch.Tensor
    directions: tuple[torch.Tensor, ...]
    log_norms: tuple[torch.Tensor, ...]
    hessians: tuple[torch.Tensor | None, ...] = ()
    underflow: torch.Tensor | None = None
    aux: tuple[torch.Tensor, ...] = ()

    def __post_init__(self):
        if self.underflow is None:      # default: a gradient norm below float64's range
            lns = torch.stack(list(self.log_norms))
            object.__setattr__(self, "underflow", (torch.isfinite(lns) & (lns < UNDERFLOW_LOG)).any(0))

    def where(self, mask: torch.Tensor, other: Evaluation) -> Evaluation:
        m1, m2 = mask[:, None], mask[:, None, None]
        return Evaluation(torch.where(mask, self.base, other.base), torch.where(mask, self.excess, other.excess),
                          tuple(torch.where(m1, a, b) for a, b in zip(self.directions, other.directions)),
                          tuple(torch.where(mask, a, b) for a, b in zip(self.log_norms, other.log_norms)),
                          tuple(None if a is None else torch.where(m2, a, b)
                                for a, b in zip(self.hessians, other.hessians)),
                          torch.where(mask, self.underflow, other.underflow),
                          tuple(torch.where(mask.view(-1, *[1] * (a.dim() - 1)), a, b)
                                for a, b in zip(self.aux, other.aux)))

    def take(self, idx) -> Evaluation:
        return Evaluation(self.base[idx], self.excess[idx], tuple(d[idx] for d in self.directions),
                          tuple(l[idx] for l in self.log_norms),
                          tuple(None if h is None else h[idx] for h in self.hessians),
                          self.underflow[idx], tuple(a[idx] for a in self.aux))

    def put(self, index: torch.Tensor, other: Evaluation) -> Evaluation:
        """This evaluation with rows `index` replaced by `other`'s rows (in order)."""
        put = lambda a, b: a.index_copy(0, index, b)
        return Evaluation(put(self.base, other.base), put(self.excess, other.excess),
                          tuple(put(a, b) for a, b in zip(self.directions, other.directions)),
                          tuple(put(a, b) for a, b in zip(self.log_norms, other.log_norms)),
                          tuple(None if a is None or b is None else put(a, b)
                                for a, b in zip(self.hessians, other.hessians)),
                          put(self.underflow, other.underflow), tuple(put(a, b) for a, b in zip(self.aux, other.aux)))

    def below(self, other: Evaluation) -> torch.Tensor:
        """Strictly lower risk than `other`, compared without cancellation."""
        return (self.base - other.base) + (self.excess - other.excess) < 0


ALL, VALUE, HESSIAN = "all", "value", "hessian"     # what an objective evaluates


class Objective:
    """A batched objective x -> `Evaluation` over B rows (one per instance and start), defined by
    per-row data (tensors with a leading dimension B) and shared arguments: `evaluate(*data,
    *args, x, mode)`, mode ALL (risk, gradients and each block's Hessian), VALUE (no Hessians),
    HESSIAN (the blocks' Hessians only, a tuple) or (HESSIAN, j) (block j's, the others may be
    None). `rows(index)` is
    the same objective on a subset of the rows, so the solver can drop the rows that have
    finished (`descend`), and `stacked(r)` on its rows repeated r times (several trial points
    per row in one evaluation); a row's evaluation depends on its own data only."""

    def __init__(self, evaluate: Callable, data: tuple, *args):
        self.evaluate, self.data, self.args = evaluate, tuple(data), args

    def __call__(self, x: tuple[torch.Tensor, ...], mode: str | tuple = ALL) -> Evaluation:
        return self.evaluate(*self.data, *self.args, x, mode)

    def hessians(self, x: tuple[torch.Tensor, ...], block: int | None = None,
                 at: Evaluation | None = None) -> tuple[torch.Tensor | None, ...]:
        """Every block's Hessian at x, or only block `block`'s (the others None) where the
        objective can compute one alone; `at`: the evaluation at x, whose by-products (`aux`) the
        objective may reuse."""
        return self.evaluate(*self.data, *self.args, x,
                             HESSIAN if block is None and at is None else (HESSIAN, block, at))

    def rows(self, index: torch.Tensor) -> Objective:
        return Objective(self.evaluate, tuple(a.index_select(0, index) for a in self.data), *self.args)

    def stacked(self, r: int) -> Objective:
        return Objective(self.evaluate, tuple(torch.cat([a] * r) for a in self.data), *self.args)


def _hessians_only(mode) -> bool:
    return mode == HESSIAN or isinstance(mode, tuple) and mode[0] == HESSIAN


def _hessian_blocks(mode) -> int | None:
    """Which blocks' Hessians a mode asks for: None (none), -1 (every block) or block j ((HESSIAN, j[, at]))."""
    return None if mode == VALUE else -1 if not isinstance(mode, tuple) or mode[1] is None else mode[1]


def _at(mode) -> Evaluation | None:
    """The evaluation at the same point a Hessian-only mode may carry ((HESSIAN, j, at))."""
    return mode[2] if isinstance(mode, tuple) and len(mode) > 2 else None


def second_derivative(loss, u: torch.Tensor) -> torch.Tensor:
    """loss''(u): closed form for the library losses, else autograd through `loss.deriv`
    (0 for a linear loss)."""
    if loss is losses.logistic:
        return torch.sigmoid(u) * torch.sigmoid(-u)
    if loss is losses.exponential:
        return torch.exp(-u)
    if loss is losses.correlation:
        return torch.zeros_like(u)
    if isinstance(loss, RowLoss):
        return loss.second(u)
    with torch.enable_grad():
        x = u.detach().clone().requires_grad_(True)
        out = loss.deriv(x)
        if not out.requires_grad:
            return torch.zeros_like(u)
        (g,) = torch.autograd.grad(out.sum(), x)
    return g


def scaled_hessian(K: torch.Tensor, gamma: torch.Tensor, p: torch.Tensor, loss) -> torch.Tensor:
    """Hessian of the linear-head risk divided by its gradient norm, (B, d, d), in the log
    domain (finite however saturated the softmax is). Per input, with c_t = gamma_t - f,
    dk_t = k_t - k_ref and m = sum_t s_t dk_t:

        grad f = sum_t s_t c_t dk_t,   hess f = sum_t s_t c_t dk_t dk_t^T - grad f m^T - m grad f^T,
        hess L = (1/n) sum_i (loss''_i grad f_i grad f_i^T + loss'_i hess f_i)."""
    B, n, T, d = K.shape
    a = _logits(K, p)
    log_s = torch.log_softmax(a, dim=-1)
    s = log_s.exp()
    f = (s * gamma).sum(-1)
    # sum_u s_u (gamma_t - gamma_u)
    c = ((gamma[..., :, None] - gamma[..., None, :]) @ s[..., :, None])[..., 0]
    ref = a.argmax(-1)
    dk = K - torch.gather(K, 2, ref[..., None, None].expand(-1, -1, 1, d))
    lp, lpp = loss.deriv(f), second_derivative(loss, f)
    log_w = (log_s + torch.log(c.abs()) + torch.log(lp.abs())[..., None]).masked_fill((c == 0) | (lp == 0)[..., None],
                                                                                        float("-inf"))
    M = log_w.flatten(1).max(-1).values
    M = torch.where(torch.isfinite(M), M, torch.zeros_like(M))
    w = torch.sign(c) * torch.sign(lp)[..., None] * torch.exp(log_w - M[:, None, None])       # loss'_i s_t c_t / e^M
    G = (w[..., None, :] @ dk)[..., 0, :]                                                    # loss'_i grad f_i / e^M
    m = (s[..., None, :] @ dk)[..., 0, :]
    dkf = dk.reshape(B, n * T, d)
    Gt = G.transpose(1, 2)
    curv = torch.exp(torch.log(lpp.abs()) - 2 * torch.log(lp.abs()) + M[:, None]).nan_to_num(0.0) * torch.sign(lpp)
    H = _mm((dkf * w.reshape(B, n * T, 1)).transpose(1, 2), dkf) - _mm(Gt, m) - _mm(m.transpose(1, 2), G) \
        + _mm(Gt * curv[:, None, :], G)
    norm = _norm(G.sum(1)).clamp_min(DIV_FLOOR)
    return H / norm[:, None, None]


def _underflow(log_norm: torch.Tensor, lp: torch.Tensor) -> torch.Tensor:
    """The gradient is not trustworthy: its norm is below float64's range, or some loss'_i
    underflowed to 0 (every library loss has loss' < 0). An exactly zero gradient otherwise
    is a genuine stationary point."""
    return (torch.isfinite(log_norm) & (log_norm < UNDERFLOW_LOG)) | (lp == 0).any(-1)


def row_losses(ids: torch.Tensor, table: Sequence) -> losses.Loss:
    """One loss per row: row b uses table[ids[b]] (the rows of a batch may use different losses).
    Each loss present is evaluated on every row and the row's own is selected, so a row's
    value does not depend on the others'. A table of one loss is that loss."""
    table = [losses.get_loss(l) for l in table]
    if len(table) == 1:
        return table[0]
    present = sorted(set(ids.tolist()))

    def select(fns, u, *rest):
        out = fns[present[0]](u, *rest)
        pick = ids.view(-1, *([1] * (u.dim() - 1)))
        for j in present[1:]:
            out = torch.where(pick == j, fns[j](u, *rest), out)
        return out

    return RowLoss("per-row(" + ",".join(l.name for l in table) + ")",
                   value=lambda u: select([l.value for l in table], u),
                   deriv=lambda u: select([l.deriv for l in table], u),
                   increment=lambda u, c: select([lambda u, c, l=l: losses.increment(l, u, c) for l in table], u, c),
                   second=lambda u: select([lambda u, l=l: second_derivative(l, u) for l in table], u))


@dataclass(frozen=True)
class RowLoss(losses.Loss):
    """A loss chosen per row (`row_losses`), with its second derivative per row."""

    second: Callable | None = None


def _table(loss, B: int, like: torch.Tensor) -> tuple[torch.Tensor, tuple]:
    """(ids (B,), table) for one loss or one loss per instance."""
    if isinstance(loss, (str, losses.Loss)):
        return torch.zeros(B, dtype=torch.long, device=like.device), (losses.get_loss(loss),)
    names = [l if isinstance(l, str) else l.name for l in loss]
    if len(names) != B:
        raise ValueError(f"one loss per instance expected ({B}), got {len(names)}")
    order = list(dict.fromkeys(names))
    table = tuple(losses.get_loss(next(l for l in loss if (l if isinstance(l, str) else l.name) == nm)) for nm in order)
    return torch.tensor([order.index(nm) for nm in names], dtype=torch.long, device=like.device), table


def _linear_head(K, gamma, ids, KbT, bound, table, x, mode) -> Evaluation:
    loss = row_losses(ids, table)
    (p,) = x
    if _hessians_only(mode):
        return (scaled_hessian(K, gamma, p, loss),)
    g = linear_head_grad(Keys(KbT, bound), gamma, p, loss, stats=False)
    a = _logits(K, p)
    base, excess, f = _risk_parts(a, torch.softmax(a, dim=-1), gamma, loss)
    H = (scaled_hessian(K, gamma, p, loss),) if mode != VALUE else (None,)
    return Evaluation(base, excess, (g.direction,), (g.log_norm,), H, _underflow(g.log_norm, loss.deriv(f)))


def _head_data(K: torch.Tensor, gamma: torch.Tensor, loss) -> tuple:
    """Per-row data of a linear-head objective: keys, scores, loss ids and the gradient's key layout."""
    ids, table = _table(loss, K.shape[0], K)
    keys = Keys.of(K)
    return (K, gamma, ids, keys.KbT, keys.bound), table


def linear_head_objective(K: torch.Tensor, gamma: torch.Tensor, loss) -> Objective:
    """L(p) of a linear-head problem (keys K (B,n,T,d), scores gamma (B,n,T)): one block p.
    `loss`: one loss, or one per instance (see `row_losses`)."""
    data, table = _head_data(K, gamma, loss)
    return Objective(_linear_head, data, table)


def _joint(X, Y, K, KbT, bound, loss, x, mode) -> Evaluation:
    v, p = x
    n = X.shape[1]
    only, blocks = _hessians_only(mode), _hessian_blocks(mode)
    gamma = Y[..., None] * (X * v[:, None, None, :]).sum(-1)                    # Y_i x_it^T v
    if only and blocks == 1:
        return (None, scaled_hessian(K, gamma, p, loss))
    a = _logits(K, p)
    s = torch.softmax(a, dim=-1)
    feat = (s[..., None] * X).sum(-2)                                          # X_i^T s_i
    u = Y * (feat * v[:, None, :]).sum(-1)
    lp = loss.deriv(u)
    gv = ((lp * Y)[..., None] * feat).sum(1) / n
    nv = _norm(gv)
    safe = torch.where(nv > 0, nv, torch.ones_like(nv))
    hv = hp = None
    if blocks is not None and blocks != 1:
        hv = (second_derivative(loss, u)[..., None, None] * feat[..., :, None] * feat[..., None, :]).sum(1) / n \
            / safe[:, None, None]
    if blocks is not None and blocks != 0:
        hp = scaled_hessian(K, gamma, p, loss)
    if only:
        return hv, hp
    gp = linear_head_grad(Keys(KbT, bound), gamma, p, loss, stats=False)
    base, excess, _ = _risk_parts(a, s, gamma, loss)
    dv = torch.where(nv[:, None] > 0, gv / safe[:, None], torch.zeros_like(gv))
    log_nv = torch.log(nv)
    return Evaluation(base, excess, (dv, gp.direction), (log_nv, gp.log_norm), (hv, hp),
                      _underflow(torch.minimum(log_nv, gp.log_norm), lp))


def joint_objective(X: torch.Tensor, Y: torch.Tensor, K: torch.Tensor, loss) -> Objective:
    """L(v, p) = mean_i loss(Y_i v^T X_i^T S(K_i p)) (Section 3), blocks (v, p):
    grad_v = (1/n) sum_i loss'_i Y_i X_i^T s_i; grad_p as for the linear head with
    scores gamma_i = Y_i X_i v. X, K (B,n,T,d), Y (B,n)."""
    keys = Keys.of(K)
    return Objective(_joint, (X, Y, K, keys.KbT, keys.bound), loss)


# ---- the solver ----------------------------------------------------------------------------

SETTLED = (st.CONVERGED, st.RESOLUTION)


@dataclass
class Solve:
    """Result of `descend` for B rows: x (blocks), evaluation, per-row residual (max over
    blocks), status ('converged' | 'resolution' | 'not converged' | 'underflow'; see the
    module docstring) and iterations used."""

    x: tuple[torch.Tensor, ...]
    evaluation: Evaluation
    residual: torch.Tensor
    status: list[str]
    iterations: int

    @property
    def converged(self) -> torch.Tensor:
        return torch.tensor([s in SETTLED for s in self.status], device=self.residual.device)


def residuals(x, ev: Evaluation, regions: Sequence[Region], gtol: float) -> torch.Tensor:
    """Max over blocks of the scale-free projected-gradient residual (0 at an interior point
    whose gradient is below gtol)."""
    out = []
    for xb, d, ln, reg in zip(x, ev.directions, ev.log_norms, regions):
        scale = TAU * reg.radius
        r = _norm(xb - reg.project(xb - scale[:, None] * d)) / scale
        interior_flat = ~reg.on_boundary(xb) & (ln <= torch.log(torch.tensor(gtol, dtype=xb.dtype)))
        out.append(torch.where(interior_flat & ~ev.underflow, torch.zeros_like(r), r))
    return torch.stack(out).amax(0)


def descend(objective: Objective | Callable, regions: Sequence[Region], x0: Sequence[torch.Tensor], iters: int = 2000,
            tol: float = 1e-6, gtol: float = 1e-12, step0: float = 0.25, skip: torch.Tensor | None = None) -> Solve:
    """Minimise `objective` over the product of `regions` from x0 (one (B, d_j) tensor per
    block) by projected unit-gradient steps, block by block; see the module docstring.

    Every row is solved as if alone: its steps, trials and stopping depend on its own data only
    (an instance's path is bitwise the same in any batch). Rows that have finished leave the
    batch when the objective can be restricted to a subset of rows (`Objective.rows`), so a
    batch costs the sum of its rows' iterations, not B times the slowest. `skip` (B,) marks rows
    with no start: never evaluated, returned with infinite risk and status 'not converged'."""
    with intra_op_threads(1):
        return _descend(objective, regions, x0, iters, tol, gtol, step0, skip)


def _status(under: bool, residual: float, stuck: bool, tol: float) -> str:
    return st.UNDERFLOW if under else st.CONVERGED if residual <= tol else st.RESOLUTION if stuck else st.NOT_CONVERGED


PAD = 16    # live rows are padded to a multiple of this (two AVX-512 vectors of float64), see `_padded`


def _padded(positions: torch.Tensor) -> torch.Tensor:
    """`positions` followed by copies of its first entry up to a multiple of PAD. torch's CPU
    kernels run whole vectors and finish a tensor's tail in scalar code, whose exp, log,
    sigmoid (and fused multiply-adds) can differ from the vector code in the last bit; with a
    multiple of PAD rows no row is ever in a tail, so a row's arithmetic does not depend on
    where it sits in the batch. The copies are solved like their original and discarded."""
    extra = -len(positions) % PAD
    return torch.cat([positions, positions[:1].expand(extra)]) if extra and len(positions) else positions


def _descend(objective, regions, x0, iters, tol, gtol, step0, skip) -> Solve:
    N, device = x0[0].shape[0], x0[0].device
    if not isinstance(objective, Objective):
        raise TypeError("descend needs an Objective (attnsvm.dynamics.regpath.Objective)")
    live = torch.arange(N, device=device)       # the rows still being solved (ids into the batch)
    if skip is not None:
        live = live[~skip]
    rows = _padded(live)                        # live rows and their copies (the state's rows)
    regs = [reg.rows(rows) for reg in regions]
    obj = objective.rows(rows)
    x = [reg.project(xb[rows]) for reg, xb in zip(regs, x0)]
    ev = obj(tuple(x))
    steps = [step0 * reg.radius.clone() for reg in regs]
    fails = torch.zeros(len(rows), dtype=torch.long, device=device)
    # the answer, filled as rows finish (rows never started keep these values)
    out_x = [torch.zeros_like(xb) for xb in x0]
    out_ev = _blank(ev, N, device)
    out_res = torch.full((N,), float("inf"), dtype=x0[0].dtype, device=device)
    out_status = [st.NOT_CONVERGED] * N

    def finish(mask: torch.Tensor, res: torch.Tensor) -> None:
        nonlocal out_ev
        mask = mask[:len(live)]                 # the copies are not answers
        ids = live[mask]
        for j, xb in enumerate(x):
            out_x[j][ids] = xb[:len(live)][mask]
        out_ev = out_ev.put(ids, ev.take(torch.arange(len(live), device=device)[mask]))
        out_res[ids] = res[:len(live)][mask]
        for r, u, q, f in zip(ids.tolist(), ev.underflow[:len(live)][mask].tolist(), res[:len(live)][mask].tolist(),
                              (fails[:len(live)][mask] >= RESOLUTION_FAILS).tolist()):
            out_status[r] = _status(u, q, f, tol)

    nb = len(regs)
    obj2 = obj.stacked(2)                       # both trial points of every row in one evaluation
    k = 0
    for k in range(1, iters + 1):
        res = residuals(x, ev, regs, gtol)
        done = (res <= tol) | ev.underflow | (fails >= RESOLUTION_FAILS)
        if bool(done[:len(live)].all()):
            finish(done, res)
            live = live[:0]
            break
        if bool(done[:len(live)].any()):
            finish(done, res)
            keep = _padded((~done[:len(live)]).nonzero().squeeze(-1))     # positions in the state
            live = live[~done[:len(live)]]
            x, ev = [xb[keep] for xb in x], ev.take(keep)
            steps, fails = [sj[keep] for sj in steps], fails[keep]
            regs, obj = [reg.rows(keep) for reg in regs], obj.rows(keep)
            obj2 = obj.stacked(2)
        L = len(fails)
        progress = torch.zeros(L, dtype=torch.bool, device=device)
        for j, reg in enumerate(regs):
            nxt = (j + 1) % nb
            H = ev.hessians[j] if j < len(ev.hessians) else None
            if H is not None:
                # Newton on log(excess) where excess > 0 (the risk is exponential in the tails):
                # hess log E / ||grad|| = H/||grad|| - d d^T ||grad|| / E
                ratio = torch.exp(ev.log_norms[j] - torch.log(ev.excess.clamp_min(DIV_FLOOR)))
                ratio = torch.where(ev.excess > 0, ratio, torch.zeros_like(ratio)).nan_to_num(0.0, posinf=0.0)
                H = H - ratio[:, None, None] * ev.directions[j][:, :, None] * ev.directions[j][:, None, :]
                trial, valid = newton_trial(x[j], ev.directions[j], H, reg)
            else:
                trial, valid = x[j], torch.zeros(L, dtype=torch.bool, device=device)
            # and a gradient trial, evaluated with the Newton trial in one batch; it is used where Newton
            # failed (and periodically everywhere: in exponential tails Newton gains only a constant factor
            # per step), the lower of the two kept. Decided per row: a row's steps do not depend on the others.
            gt = reg.project(x[j] - steps[j][:, None] * ev.directions[j])
            both = obj2(tuple(torch.cat([trial, gt]) if i == j else torch.cat([xb, xb]) for i, xb in enumerate(x)),
                        VALUE)
            et, eg = both.take(slice(0, L)), both.take(slice(L, 2 * L))
            ok = et.below(ev) & valid
            need = ~ok if H is not None and k % GRADIENT_EVERY else torch.ones_like(ok)
            gok = eg.below(ev) & need
            bb = torch.minimum(torch.maximum(_bb_length(x[j], gt, ev, eg, j, steps[j]), steps[j] / 10), 10 * steps[j])
            steps[j] = torch.where(need, torch.where(gok, bb, torch.where(ok, steps[j], steps[j] / 2)), steps[j])
            use_g = gok & (~ok | eg.below(et))
            trial = torch.where(use_g[:, None], gt, trial)
            et, ok = eg.where(use_g, et), ok | use_g
            steps[j] = torch.minimum(torch.maximum(steps[j], MIN_STEP * reg.radius), 2 * reg.radius)
            x[j] = torch.where(ok[:, None], trial, x[j])
            # the Hessian the next Newton trial needs: the next block's, at the updated point
            ev = et.where(ok, ev)
            ev = replace(ev, hessians=obj.hessians(tuple(x), nxt, ev))
            progress |= ok
        fails = torch.where(progress, torch.zeros_like(fails), fails + 1)
    if len(live):
        res = residuals(x, ev, regs, gtol)
        finish(torch.ones(len(res), dtype=torch.bool, device=device), res)
    return Solve(tuple(out_x), out_ev, out_res, out_status, k)


def _blank(ev: Evaluation, N: int, device) -> Evaluation:
    """An evaluation of N rows with infinite risk (rows with no start), shaped like `ev`'s rows (no
    Hessians: a finished solve reports risks and gradients)."""
    full = lambda a, v: torch.full((N, *a.shape[1:]), v, dtype=a.dtype, device=device)
    return Evaluation(full(ev.base, float("inf")), full(ev.excess, 0.0), tuple(full(d, 0.0) for d in ev.directions),
                      tuple(full(l, float("-inf")) for l in ev.log_norms),
                      tuple(None for _ in ev.hessians), full(ev.underflow, False), tuple(full(a, 0.0) for a in ev.aux))


def newton_trial(x: torch.Tensor, d: torch.Tensor, H: torch.Tensor,
                 region: Region) -> tuple[torch.Tensor, torch.Tensor]:
    """A Newton trial point and whether it is defined (positive-definite model), rows batched.
    d: unit gradient, H: Hessian / ||grad|| (so the step is scale-free). Where the ball is
    active (on its boundary, gradient pointing outwards) the step is Riemannian on the sphere:
    (P H P - (<u, d>/R) P) xi = -P d, retracted by rescaling to radius R; elsewhere plain
    Newton. The result is projected onto the region (cone, if any)."""
    R = region.radius
    u = x / _norm(x, keepdim=True).clamp_min(DIV_FLOOR)
    ud = (u * d).sum(-1)
    sphere = region.on_boundary(x) & (ud < 0)
    eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device).expand_as(H)
    uu = u[:, :, None] * u[:, None, :]
    P = eye - uu
    # P H P = H - u (H u)^T - (H u) u^T + (u^T H u) u u^T (H symmetric), without matrix products
    Hu = (H * u[:, None, :]).sum(-1)
    uHu = (Hu * u).sum(-1)
    PHP = H - u[:, :, None] * Hu[:, None, :] - Hu[:, :, None] * u[:, None, :] + uHu[:, None, None] * uu
    A_sph = PHP - (ud / R)[:, None, None] * P + uu
    A = torch.where(sphere[:, None, None], A_sph, H)
    rhs = torch.where(sphere[:, None], -(d - ud[:, None] * u), -d)
    A = (A + A.transpose(1, 2)) / 2
    valid = positive_definite(A)
    safe = torch.where(valid[:, None, None], A, eye)
    xi = torch.linalg.solve(safe, rhs[..., None])[..., 0]
    step = x + xi
    step = torch.where(sphere[:, None], step / _norm(step, keepdim=True).clamp_min(DIV_FLOOR) * R[:, None], step)
    ok = valid & torch.isfinite(step).all(-1)
    return region.project(torch.where(ok[:, None], step, x)), ok


PD_MARGIN = 1e-12     # a Newton model counts as positive definite when its least eigenvalue exceeds this x its norm


def positive_definite(A: torch.Tensor) -> torch.Tensor:
    """Per row: the symmetric A is positive definite with lambda_min(A) > PD_MARGIN ||A||_F (the
    Newton model is usable), decided by a Cholesky factorisation of A - PD_MARGIN ||A||_F I, an
    eighth of the cost of A's eigenvalues at the (K, Q) problems' 18 x 18. ||A||_F >= |lambda| for
    every eigenvalue, so this is at most sqrt(dim) x stricter than the eigenvalue test it replaces
    (lambda_min > PD_MARGIN max |lambda|); the two agreed on all 335,000 Newton models of sampled
    theorem1, theorem5 and tfsvm-regpath-kq batches, and the step is still solved by LU, so the
    paths are bitwise those of the eigenvalue test."""
    top = A.abs().amax((-2, -1))                       # at unit scale first: ||A||_F^2 may underflow
    ok = (top > 0) & torch.isfinite(top)
    unit = A / torch.where(ok, top, torch.ones_like(top))[:, None, None]
    shift = PD_MARGIN * torch.linalg.matrix_norm(unit)
    _, info = torch.linalg.cholesky_ex(unit - shift[:, None, None]
                                       * torch.eye(A.shape[-1], dtype=A.dtype, device=A.device))
    return ok & (info == 0)


def _bb_length(x, new, ev, et, j, fallback):
    """Next step length (along the unit gradient) after a move x -> new: the Barzilai-Borwein
    step <s, s>/<s, y> times ||grad||, with both gradients scaled by a common exp(-c) so that
    nothing underflows; twice the last length when <s, y> <= 0. The caller keeps it within a
    factor 10 of the last length (the risk is exponential, not quadratic, far from a minimum)."""
    la, lb = ev.log_norms[j], et.log_norms[j]
    c = torch.maximum(la, lb)
    c = torch.where(torch.isfinite(c), c, torch.zeros_like(c))
    ga = torch.exp(la - c)[:, None] * ev.directions[j]
    gb = torch.exp(lb - c)[:, None] * et.directions[j]
    s_ = new - x
    sy = (s_ * (gb - ga)).sum(-1)
    bb = (s_ * s_).sum(-1) / torch.where(sy > 0, sy, torch.ones_like(sy)) * torch.exp(lb - c)
    return torch.where((sy > 0) & torch.isfinite(bb), bb, 2 * fallback)


# ---- paths ---------------------------------------------------------------------------------

@dataclass
class Path:
    """A regularization path on a grid of radii (G, B) (or (G, B, 2) for `joint_path`) for B instances.

    x[j]: block j's solutions (G, B, d_j) (block 0 = p for `path`; (v, p) for `joint_path`);
    base/excess (G, B): the risk (see `risk_split`); residual (G, B); status[g][b];
    found (G, B): distinct converged local solutions among the starts (a hint of
    non-convexity; 1 means every converged start agreed)."""

    radii: torch.Tensor
    x: tuple[torch.Tensor, ...]
    base: torch.Tensor
    excess: torch.Tensor
    residual: torch.Tensor
    status: list[list[str]]
    found: torch.Tensor
    iterations: list[int] = field(default_factory=list)

    @property
    def p(self) -> torch.Tensor:
        return self.x[-1]

    def corr(self, q: torch.Tensor, block: int = -1) -> torch.Tensor:
        """corr(x(R), q) (G, B) for q (d,) or (B, d)."""
        x = self.x[block]
        q = q if q.dim() == 2 else q[None].expand(x.shape[1], -1)
        return (x * q[None]).sum(-1) / (_norm(x) * _norm(q)[None]).clamp_min(DIV_FLOOR)

    def converged(self) -> torch.Tensor:
        return torch.tensor([[s in SETTLED for s in row] for row in self.status])


def _best(ev: Evaluation, B: int, S: int) -> torch.Tensor:
    """Index (B,) of the lowest-risk start among S per instance (rows ordered b*S + s)."""
    base, excess = ev.base.view(B, S), ev.excess.view(B, S)
    rel = (base - base.min(-1, keepdim=True).values) + excess
    return torch.where(torch.isfinite(rel), rel, torch.full_like(rel, float("inf"))).argmin(-1)


def _distinct(xs: torch.Tensor, ok: torch.Tensor, rel: float = 1e-4) -> torch.Tensor:
    """Per row of xs (R, S, d): how many distinct converged solutions among its S (greedy: a
    solution is new when farther than rel max(1, ||r||) from every earlier new one r)."""
    R, S = ok.shape
    dist = _norm(xs[:, :, None] - xs[:, None])                   # (R, S, S)
    scale = rel * _norm(xs).clamp_min(1.0)                        # (R, S)
    new = torch.zeros(R, S, dtype=torch.bool, device=xs.device)
    for a in range(S):
        far = ok[:, a].clone()
        for r in range(a):
            far &= ~new[:, r] | (dist[:, a, r] > scale[:, r])
        new[:, a] = far
    return new.sum(-1)


def _solve_grid(objective_for: Callable[[torch.Tensor], Objective],
                regions_for: Callable[[torch.Tensor, torch.Tensor], list[Region]],
                starts: Sequence[torch.Tensor], radii: torch.Tensor, iters: int, tol: float,
                valid: torch.Tensor | None = None) -> Path:
    """Shared solver of `path`, `joint_path` and `kq_path`. radii (G, B, m) (per instance, one
    column per block); starts[j] (B, S, d_j) unit directions, `valid` (B, S) the starts that
    exist (an instance may have fewer than S). Pass 1 solves every radius from every start in
    one batch; pass 2 restarts each radius from its two neighbours' best solutions, rescaled (a
    warm start along the grid). At each radius the lowest risk found wins, converged or not: a
    lower point that has not converged leaves the radius unsettled (its status), never a
    higher converged one standing in for the minimum. Each instance's rows are solved as if
    alone (`descend`)."""
    B, S = starts[0].shape[:2]
    G = radii.shape[0]
    device = starts[0].device
    # rows ordered (b, g, s)
    inst = torch.arange(B, device=device).repeat_interleave(G * S)
    grid = torch.arange(G, device=device).repeat_interleave(S).repeat(B)
    skip = None if valid is None else ~valid[:, None, :].expand(B, G, S).reshape(-1)
    regions = regions_for(radii[grid, inst], inst)
    x0 = [s_[:, None].expand(B, G, S, -1).reshape(B * G * S, -1) * reg.radius[:, None]
          for s_, reg in zip(starts, regions)]
    sol = descend(objective_for(inst), regions, x0, iters=iters, tol=tol, skip=skip)
    pick = (torch.arange(B * G, device=device) * S + _best(sol.evaluation, B * G, S))
    ok = sol.converged.view(B * G, S)
    found = _distinct(sol.x[-1].view(B * G, S, -1), ok).view(B, G)
    best = [xb[pick] for xb in sol.x]                                   # (B*G, d_j), rows (b, g)
    ev, res, status = sol.evaluation, sol.residual[pick], [sol.status[i] for i in pick.tolist()]
    ev = Evaluation(ev.base[pick], ev.excess[pick], tuple(d[pick] for d in ev.directions),
                    tuple(l[pick] for l in ev.log_norms))
    iterations = [sol.iterations]
    if G > 1:
        # both neighbours' warm starts in one batch: rows (neighbour, b, g)
        inst2 = torch.arange(B, device=device).repeat_interleave(G)
        g2 = torch.arange(G, device=device).repeat(B)
        nb = [torch.where(g2 > 0, g2 - 1, g2 + 1), torch.where(g2 < G - 1, g2 + 1, g2 - 1)]
        src = torch.cat([inst2 * G + g_nb for g_nb in nb])
        rows2, i2 = torch.cat([g2, g2]), torch.cat([inst2, inst2])
        regs2 = regions_for(radii[rows2, i2], i2)
        x0 = [b[src] / _norm(b[src], keepdim=True).clamp_min(DIV_FLOOR) * reg.radius[:, None]
              for b, reg in zip(best, regs2)]
        both = descend(objective_for(i2), regs2, x0, iters=iters, tol=tol)
        iterations.append(both.iterations)
        for half in (slice(0, B * G), slice(B * G, 2 * B * G)):
            t2 = Solve(tuple(xb[half] for xb in both.x), both.evaluation.take(half), both.residual[half],
                       both.status[half], both.iterations)
            better = t2.evaluation.below(ev)    # the lowest risk found wins; unconverged, its radius is unsettled
            best = [torch.where(better[:, None], a, b) for a, b in zip(t2.x, best)]
            ev = t2.evaluation.where(better, ev)
            res = torch.where(better, t2.residual, res)
            status = [s2 if bt else s1 for s1, s2, bt in zip(status, t2.status, better.tolist())]
    return Path(radii[:, :, 0] if radii.shape[-1] == 1 else radii,
                tuple(b.view(B, G, -1).transpose(0, 1) for b in best),
                ev.base.view(B, G).T, ev.excess.view(B, G).T, res.view(B, G).T,
                [[status[b * G + g] for b in range(B)] for g in range(G)], found.T, iterations)


def _unit_starts(starts, B: int, d: int, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Unit start directions (B, S, d) from (S, d) (shared) or (B, S, d), and which exist: a
    row of NaNs is no start (instances with fewer starts than others in one batch); None when
    every start exists."""
    s = torch.as_tensor(starts, dtype=like.dtype, device=like.device)
    s = s[None].expand(B, -1, -1) if s.dim() == 2 else s
    if s.dim() != 3 or s.shape[0] != B or s.shape[-1] != d:
        raise ValueError(f"starts must be (S, {d}) or ({B}, S, {d}), got {tuple(s.shape)}")
    valid = torch.isfinite(s).all(-1)
    if bool(valid.all()):
        return s / _norm(s, keepdim=True).clamp_min(DIV_FLOOR), None
    if not bool(valid.any(-1).all()):
        raise ValueError("every instance needs at least one start")
    s = torch.where(valid[..., None], s, torch.ones_like(s))
    return s / _norm(s, keepdim=True).clamp_min(DIV_FLOOR), valid


def _radii(radii, B: int, m: int, like: torch.Tensor) -> torch.Tensor:
    """Radii (G, B, m) from (G,) / (G, m) (shared by the instances) or (G, B) / (G, B, m)."""
    R = torch.as_tensor(radii, dtype=like.dtype, device=like.device)
    if m == 1 and R.dim() == 1 or m > 1 and R.dim() == 2:
        R = R.reshape(R.shape[0], 1, m).expand(-1, B, -1)
    R = R.reshape(R.shape[0], B, m)
    return R


def _per_instance(value, B: int, like: torch.Tensor) -> torch.Tensor:
    v = torch.as_tensor(value, dtype=like.dtype, device=like.device)
    return v.expand(B).clone() if v.dim() == 0 else v.reshape(B)


def path(problem: Problem, radii, starts, cone: tuple | None = None, min_radius=0.0,
         iters: int = 2000, tol: float = 1e-6, loss=None) -> Path:
    """p(R) = argmin_{p in region(R)} L(p) for each R in `radii` (increasing), region(R) =
    {min_radius <= ||p|| <= R} [intersected with cone_mu(q) when cone = (q (B,d) or (d,), mu)].

    `radii` (G,) shared, or (G, B) one column per instance (e.g. multiples of each p_mm's norm);
    `min_radius` and the cone's `mu` a number or one per instance (B,). `starts` (S, d) or
    (B, S, d): start directions (nonzero; a row of NaNs: no start), scaled to each radius;
    neighbouring radii's solutions are added as warm starts. `loss`: one per instance (default:
    the problem's). Returns a `Path` (block 0 = p)."""
    B, d = problem.batch, problem.dim
    S, valid = _unit_starts(starts, B, d, problem.K)
    axis = cos = None
    if cone is not None:
        q, mu = cone
        axis = torch.as_tensor(q, dtype=problem.K.dtype, device=problem.K.device)
        axis = axis[None].expand(B, -1) if axis.dim() == 1 else axis
        cos = 1.0 - _per_instance(mu, B, problem.K)
    lo = _per_instance(min_radius, B, problem.K)
    bounded = bool((lo > 0).any())

    def regions_for(R, index):
        return [Region(R[:, 0], None if axis is None else axis[index], None if cos is None else cos[index],
                       lo[index] if bounded else None)]

    data, table = _head_data(problem.K, problem.gamma, problem.loss if loss is None else loss)

    def objective_for(index):
        return Objective(_linear_head, tuple(a[index] for a in data), table)

    return _solve_grid(objective_for, regions_for, [S], _radii(radii, B, 1, problem.K), iters, tol, valid)


def joint_path(X, Y, K, radii: Sequence[tuple[float, float]], v_starts, p_starts, loss="logistic",
               iters: int = 3000, tol: float = 1e-6) -> Path:
    """(v, p)(r, R) = argmin L(v, p) s.t. ||v|| <= r, ||p|| <= R (Section 3) for each (r, R) in
    `radii` ((G, 2) shared or (G, B, 2) per instance); X, K (B,n,T,d), Y (B,n); v_starts, p_starts
    (S, d) or (B, S, d), paired start by start (NaN rows: no start). Returns a `Path` with blocks
    (v, p) and radii (G, B, 2)."""
    X, K, Y = (torch.as_tensor(a, dtype=torch.float64) for a in (X, K, Y))
    B, d = X.shape[0], X.shape[-1]
    loss = losses.get_loss(loss)
    (sv, valid_v), (sp_, valid_p) = _unit_starts(v_starts, B, d, X), _unit_starts(p_starts, B, d, X)
    if sv.shape[1] != sp_.shape[1]:
        raise ValueError("v_starts and p_starts must pair up (same number of starts)")
    valid = valid_v if valid_p is None else valid_p if valid_v is None else valid_v & valid_p
    R = _radii(radii, B, 2, X)

    def regions_for(rR, index):
        return [Region(rR[:, 0]), Region(rR[:, 1])]

    whole = joint_objective(X, Y, K, loss)

    def objective_for(index):
        return whole.rows(index)

    return _solve_grid(objective_for, regions_for, [sv, sp_], R, iters, tol, valid)



@functools.lru_cache(maxsize=16)
def _skew_basis(m: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """The generators e_i e_j^T - e_j e_i^T (i < j) of the m x m skew matrices, (m(m-1)/2, m, m)."""
    pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
    S = torch.zeros(len(pairs), m, m, dtype=dtype, device=device)
    for k, (i, j) in enumerate(pairs):
        S[k, i, j], S[k, j, i] = 1.0, -1.0
    return S


def kq_scaled_hessian(Hp: torch.Tensor, direction: torch.Tensor, theta: torch.Tensor, kq) -> torch.Tensor:
    """Hessian in theta = (vec K, vec Q) of L(K Q^T) divided by ||grad_theta L||, from Hp = Hessian
    in p = vec(K Q^T) divided by ||grad_p L|| (`scaled_hessian`) and the unit p-gradient D:
    hess_theta = J^T hess_p J + ||grad_p|| C(D), with J = d vec(K Q^T) / d theta and
    C(D) = d^2 <D, K Q^T> / d theta^2 (blocks d^2/dK_ab dQ_cb' = D_ac delta_bb'); the norm ratio
    ||grad_theta|| / ||grad_p|| = ||(D Q, D^T K)||_F. J is never formed: with dW_ac/dK_AB =
    delta_aA Q_cB and dW_ac/dQ_CB = K_aB delta_cC and h[a,c,a',c'] = Hp[(a,c),(a',c')], its blocks
    are contractions over one index each, (J^T Hp J)_KK = Q^T h[A,:,A',:] Q,
    (J^T Hp J)_KQ[(A,B),(C',B')] = sum_{c,a'} Q_cB h[A,c,a',C'] K_a'B' and
    (J^T Hp J)_QQ = K^T h[:,C,:,C'] K (broadcast products, as `_mm`: no BLAS)."""
    d, m = kq.d, kq.m
    K, Q = kq.unpack(theta)
    B = theta.shape[0]
    h = Hp.reshape(B, d, d, d, d)
    hQ = (h[..., None] * Q[:, None, None, None, :, :]).sum(-2)                  # [a, c, a', B']
    hK = (h[..., None] * K[:, None, None, :, None, :]).sum(-3)                  # [a, c, c', B']
    KK = (Q[:, None, :, :, None, None] * hQ[:, :, :, None, :, :]).sum(2)         # [A, B, A', B']
    KQ = (Q[:, None, :, :, None, None] * hK[:, :, :, None, :, :]).sum(2)         # [A, B, C', B']
    QQ = (K[:, :, None, :, None, None] * hK[:, :, :, None, :, :]).sum(1)         # [C, B, C', B']
    D = direction.reshape(B, d, d)
    Im = torch.eye(m, dtype=theta.dtype, device=theta.device)
    KQ = (KQ + D[:, :, None, :, None] * Im[:, None, :]).reshape(B, d * m, d * m)   # + C(D)_KQ = D_AC' delta_BB'
    H = torch.cat([torch.cat([KK.reshape(B, d * m, d * m), KQ], -1),
                   torch.cat([KQ.transpose(1, 2), QQ.reshape(B, d * m, d * m)], -1)], 1)
    DQ = (D[..., None] * Q[:, None, :, :]).sum(2)                                # D Q
    DK = (D[..., None] * K[:, :, None, :]).sum(1)                                # D^T K
    ratio = _norm(torch.cat([DQ.flatten(1), DK.flatten(1)], -1)).clamp_min(DIV_FLOOR)
    H = H / ratio[:, None, None]
    if m < 2:
        return H
    # L and ||theta|| are invariant under (K, Q) -> (K O, Q O), O orthogonal: H is singular along the orbit's
    # tangents (K S, Q S), S skew, where the gradient has no component. A multiple of the projector onto them
    # makes the Newton model positive definite there without changing its step elsewhere.
    S = _skew_basis(m, theta.dtype, theta.device)
    KS = (K[:, None, :, :, None] * S[None, :, None, :, :]).sum(-2)               # (B, P, d, m)
    QS = (Q[:, None, :, :, None] * S[None, :, None, :, :]).sum(-2)
    V = torch.cat([KS.flatten(2), QS.flatten(2)], -1).transpose(1, 2)           # (B, 2dm, P)
    U, sv, _ = torch.linalg.svd(V, full_matrices=False)
    U = U * (sv > 1e-10 * sv.amax(-1, keepdim=True).clamp_min(DIV_FLOOR))[:, None, :]
    scale = torch.linalg.matrix_norm(H).clamp_min(DIV_FLOOR)          # Frobenius: any positive multiple does
    return H + scale[:, None, None] * _mm(U, U.transpose(1, 2))


def _kq(K, gamma, ids, KbT, bound, table, kq, x, mode) -> Evaluation:
    loss = row_losses(ids, table)
    (theta,) = x
    p = kq.to_p(theta)
    at = _at(mode)
    if _hessians_only(mode) and at is not None and at.aux:             # the p-gradient's direction at x
        return (kq_scaled_hessian(scaled_hessian(K, gamma, p, loss), at.aux[0], theta, kq),)
    gp = linear_head_grad(Keys(KbT, bound), gamma, p, loss, stats=False)
    H = (kq_scaled_hessian(scaled_hessian(K, gamma, p, loss), gp.direction, theta, kq),) if mode != VALUE else (None,)
    if _hessians_only(mode):
        return H
    g = kq.pullback(gp, theta)
    a = _logits(K, p)
    base, excess, f = _risk_parts(a, torch.softmax(a, dim=-1), gamma, loss)
    return Evaluation(base, excess, (g.direction,), (g.log_norm,), H, _underflow(g.log_norm, loss.deriv(f)),
                      (gp.direction,))


def kq_objective(K: torch.Tensor, gamma: torch.Tensor, loss, kq) -> Objective:
    """L(K Q^T) of a W-parameterised linear-head problem (keys vec(x_it z_i^T), `dynamics.cross`)
    as a function of theta = (vec K, vec Q) (`cross.KQ`), one block; gradient by the chain rule
    (`KQ.pullback`, log domain), Hessian by `kq_scaled_hessian` (for the Newton trials)."""
    data, table = _head_data(K, gamma, loss)
    return Objective(_kq, data, table, kq)


def kq_path(problem: Problem, kq, radii: Sequence[float], starts, iters: int = 2000, tol: float = 1e-6,
            loss=None) -> Path:
    """The (K, Q) regularization path (Transformers as SVMs, Section 3): for each R in `radii`,
    (K, Q)(R) = argmin L(K Q^T) s.t. ||K||_F^2 + ||Q||_F^2 <= 2R, i.e. theta in the ball of radius
    sqrt(2R). `problem`: a W-parameterised problem (`cross.w_problem`); `kq`: `cross.KQ(d, m)`;
    `radii` (G,) or (G, B); `starts` (S, 2dm) or (B, S, 2dm) theta directions (NaN rows: no start).
    Returns a `Path` whose block is theta (`kq.to_p(path.p)` is vec(K Q^T))."""
    B = problem.batch
    S, valid = _unit_starts(starts, B, 2 * kq.d * kq.m, problem.K)

    def regions_for(R, index):
        return [Region(torch.sqrt(2 * R[:, 0]))]

    data, table = _head_data(problem.K, problem.gamma, problem.loss if loss is None else loss)

    def objective_for(index):
        return Objective(_kq, tuple(a[index] for a in data), table, kq)

    return _solve_grid(objective_for, regions_for, [S], _radii(radii, B, 1, problem.K), iters, tol, valid)

# ---- measuring convergence along a path -----------------------------------------------------

def settled(path: Path, index: int = 0, max_residual: float = 1e-3) -> list[bool]:
    """Per radius: the solve converged, or stopped at float64's resolution with a residual
    (sine of the angle between -grad L and the normal cone) at most `max_residual`."""
    return [s[index] == st.CONVERGED or (s[index] == st.RESOLUTION and float(path.residual[g, index]) <= max_residual)
            for g, s in enumerate(path.status)]
