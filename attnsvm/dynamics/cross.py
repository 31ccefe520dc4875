"""Cross- and self-attention with a trained key-query matrix (paper B, "Transformers as SVMs";
docs/statements.md#notation).

`f(X, z) = v^T X^T S(X W z)`, self-attention when `z_i = x_i1`. The logits are linear in W:

    a_it = x_it^T W z_i = <vec(x_it z_i^T), vec(W)>        (vec row-major, W = p.reshape(d, d))

so the W-parameterised risk is the linear-head risk of `attnsvm.dynamics` with p = vec(W) and
keys `vec(x_it z_i^T)` (`w_problem`), and every core rule (GD, NormalizedGD, Polyak) runs it
batched with the log-domain, cancellation-free gradient. The (K, Q)-parameterisation
`W = K Q^T` (K, Q in R^{d x m}) is a `dynamics.Parameterisation` (`KQ`): with G = grad_W L,
`grad_K = G Q`, `grad_Q = G^T K`; its norm is computed in the log domain, so normalized GD
and Polyak keep their direction when ||G|| underflows.

Typical use::

    prob = cross.w_problem(datasets)                    # B datasets of one shape
    tr = dynamics.run(prob, dynamics.NormalizedGD(0.1), np.zeros(d * d), 2000)
    W = cross.to_matrix(tr.final)                       # (B, d, d)
    kq = cross.KQ(d, m)
    tr = dynamics.run(prob, dynamics.NormalizedGD(0.1), kq.pack(K0, Q0), 2000, param=kq)
    K, Q = kq.unpack(tr.theta)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from attnsvm import status as st
from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.attention.gradients import Grad
from attnsvm.attention.losses import Loss, get_loss
from attnsvm.dynamics.problem import Problem, default_device


def w_keys(X, Z) -> torch.Tensor:
    """Keys of the W-parameterisation: vec(x_it z_i^T), shape (..., n, T, d*d); X (..., n, T, d),
    Z (..., n, d)."""
    X, Z = model.t(X), model.t(Z)
    return torch.einsum("...ntd,...ne->...ntde", X, Z).flatten(-2)


def w_problem_from_arrays(X, Z, gamma, loss: Loss | str = "logistic", device=None) -> Problem:
    """W-parameterised risk for B instances from arrays: X (B,n,T,d), Z (B,n,d) queries,
    gamma (B,n,T) scores Y_i v^T x_it. p = vec(W) row-major."""
    device = device or default_device()
    return Problem(w_keys(X, Z).to(device), model.t(gamma, device), get_loss(loss))


def w_problem(datasets: Sequence[Dataset], loss: Loss | str = "logistic", device=None) -> Problem:
    """W-parameterised cross-attention risk of datasets of one shape; queries are each dataset's
    z, else z_i = x_i1 (self-attention, `model.queries`); scores Y_i v^T x_it (Definition 1)."""
    X = np.stack([ds.X for ds in datasets])
    Z = np.stack([model.queries(ds) for ds in datasets])
    g = np.stack([model.scores(ds) for ds in datasets])
    return w_problem_from_arrays(X, Z, g, loss, device)


def to_matrix(p) -> torch.Tensor:
    """vec(W) (..., d*d) -> W (..., d, d), row-major."""
    p = model.t(p)
    d = math.isqrt(p.shape[-1])
    return p.reshape(*p.shape[:-1], d, d)


@dataclass(frozen=True)
class KQ:
    """The (K, Q)-parameterisation W = K Q^T, K, Q in R^{d x m} (paper B). theta (B, 2 d m) is
    vec(K) followed by vec(Q) (row-major); p = vec(K Q^T)."""

    d: int
    m: int

    @property
    def blocks(self) -> tuple[int, int]:
        """The sizes of K's and Q's coordinates in theta (for `dynamics.BlockNormalizedGD`)."""
        return (self.d * self.m, self.d * self.m)

    def pack(self, K, Q) -> torch.Tensor:
        """theta from K, Q of shape (d, m) or (B, d, m)."""
        K, Q = model.t(K), model.t(Q)
        return torch.cat([K.flatten(-2), Q.flatten(-2)], -1)

    def unpack(self, theta) -> tuple[torch.Tensor, torch.Tensor]:
        theta = model.t(theta)
        dm = self.d * self.m
        shape = (*theta.shape[:-1], self.d, self.m)
        return theta[..., :dm].reshape(shape), theta[..., dm:].reshape(shape)

    def to_p(self, theta: torch.Tensor) -> torch.Tensor:
        K, Q = self.unpack(theta)
        return (K @ Q.transpose(-1, -2)).flatten(-2)

    def pullback(self, g: Grad, theta: torch.Tensor) -> Grad:
        """grad_K = G Q, grad_Q = G^T K with G = exp(log_norm) * direction; the direction is
        normalised and the norm kept as a logarithm: log||grad_theta|| = log||G|| + log||(D Q, D^T K)||
        with D = G / ||G||."""
        K, Q = self.unpack(theta)
        D = to_matrix(g.direction)
        flat = torch.cat([(D @ Q).flatten(-2), (D.transpose(-1, -2) @ K).flatten(-2)], -1)
        norm = flat.norm(dim=-1)
        ok = norm > 0
        safe = torch.where(ok, norm, torch.ones_like(norm))
        direction = torch.where(ok[:, None], flat / safe[:, None], torch.zeros_like(flat))
        log_norm = torch.where(ok, g.log_norm + torch.log(safe), torch.full_like(norm, float("-inf")))
        return replace(g, direction=direction, log_norm=log_norm)

    def random(self, rng: np.random.Generator, scale: float = 1.0, batch: int | None = None) -> torch.Tensor:
        """theta with K, Q entries N(0, scale^2 / m) (so ||K Q^T|| is O(scale^2))."""
        shape = (2 * self.d * self.m,) if batch is None else (batch, 2 * self.d * self.m)
        return model.t(rng.normal(scale=scale / math.sqrt(self.m), size=shape))


def smoothness(datasets: Sequence[Dataset], loss: Loss | str = "logistic") -> np.ndarray:
    """Lemma 6's smoothness constant (our reconstruction, docs/statements.md#lemma6) for the W-parameterised risk,
    one per dataset: L = (1/n) sum_i (M0 ||v||^2 ||X_i||^2 ||K_i||^2 + 3 M1 ||v|| ||X_i|| ||K_i||^2)
    with spectral norms and K_i the (T, d*d) key matrix of rows vec(x_it z_i^T), so
    ||K_i|| = ||X_i|| ||z_i|| (Lemma 6's ||W|| ||X_i|| with keys X_i W). Constants (M0, M1)
    from the loss on the margin interval [min gamma, max gamma] (`smoothness.margin_interval`)."""
    from attnsvm.dynamics.smoothness import margin_interval

    loss = get_loss(loss)
    out = []
    for ds in datasets:
        M0, M1 = loss.constants(*margin_interval(ds))
        Xn = np.linalg.norm(ds.X, ord=2, axis=(1, 2))
        Kn = Xn * np.linalg.norm(model.queries(ds), axis=-1)
        vn = np.linalg.norm(ds.v)
        out.append(float(np.mean(M0 * vn ** 2 * Xn ** 2 * Kn ** 2 + 3 * M1 * vn * Xn * Kn ** 2)))
    return np.array(out)


def log_unselected_mass(problem: Problem, p, alpha) -> torch.Tensor:
    """log(1 - s_{i,alpha_i}(p)) per instance and input (B, n): the softmax mass off the selected
    tokens alpha ((B, n) or (n,)), as a log-sum-exp over the other tokens (no cancellation at
    saturation). Its decay measures attention sparsification (docs/statements.md#rates-sparsity)."""
    p = model.t(p, problem.K.device)
    a = torch.einsum("bntd,bd->bnt", problem.K, p)
    alpha = torch.as_tensor(np.asarray(alpha), device=a.device).long().expand(a.shape[:2])
    is_sel = torch.nn.functional.one_hot(alpha, a.shape[-1]).bool()
    return torch.logsumexp(a.masked_fill(is_sel, float("-inf")), -1) - torch.logsumexp(a, -1)


def train(datasets: Sequence[Dataset], rule, steps: int, param: str = "W", m: int | None = None,
          init_scale: float = 0.1, seed: int = 0, starts: int = 1, every: int | None = None,
          loss: Loss | str = "logistic"):
    """Train W (param='W') or (K, Q) (param='KQ', width m, default d) on each dataset from
    `starts` seeded random inits (entries N(0, init_scale^2), K and Q N(0, init_scale^2 / m));
    one batched `dynamics.run` of len(datasets) * starts instances, dataset-major. Returns the
    Trajectory (its p is vec(W) = vec(K Q^T))."""
    from attnsvm import dynamics

    d = datasets[0].d
    batch = [ds for ds in datasets for _ in range(starts)]
    rng = np.random.default_rng(seed)
    prob = w_problem(batch, loss)
    if param == "W":
        return dynamics.run(prob, rule, rng.normal(scale=init_scale, size=(len(batch), d * d)), steps, every)
    if param == "KQ":
        kq = KQ(d, m or d)
        return dynamics.run(prob, rule, kq.random(rng, init_scale, len(batch)), steps, every, param=kq)
    raise ValueError(f"param must be 'W' or 'KQ', got {param!r}")


def initial_points(d: int, param: str, m: int | None, init_scale: float, seed: int, starts: int) -> np.ndarray:
    """The `starts` seeded inits of one dataset that `train([ds], ...)` draws: W entries
    N(0, init_scale^2), or theta = (K, Q) with entries N(0, init_scale^2 / m)."""
    rng = np.random.default_rng(seed)
    if param == "W":
        return rng.normal(scale=init_scale, size=(starts, d * d))
    if param == "KQ":
        return KQ(d, m or d).random(rng, init_scale, starts).numpy()
    raise ValueError(f"param must be 'W' or 'KQ', got {param!r}")


def kq_normalized_gd(problem: Problem, kq: KQ, theta0, steps: int, eta: float, every: int | None = None):
    """`dynamics.run(problem, NormalizedGD(eta), theta0, steps, every, param=kq)` with its unrecorded
    steps in numpy on the fused kernel's gradient direction: normalized GD in theta = (K, Q) needs
    only the direction of grad_W L (grad_K = G Q, grad_Q = G^T K, then normalised), so each step is
    one kernel pass and two small matrix products (about 4x fewer microseconds per step than the
    torch loop for the small batches of a check). Recorded steps, the final point and the status
    rule are `dynamics.run`'s; where the kernel does not run (a GPU, a custom loss) it is
    `dynamics.run` itself."""
    from attnsvm import dynamics
    from attnsvm.dynamics.trajectory import kernel_run

    fused = problem.fused if problem.K.device.type == "cpu" else None
    if fused is None or not fused.loss_code:
        return dynamics.run(problem, dynamics.NormalizedGD(eta), theta0, steps, every, param=kq)
    d, m = kq.d, kq.m

    def factors(theta):
        return theta[:, : d * m].reshape(-1, d, m), theta[:, d * m:].reshape(-1, d, m)

    def to_p(theta):
        K, Q = factors(theta)
        return (K @ Q.transpose(0, 2, 1)).reshape(-1, d * d)

    def update(theta, D, log_norm, rate):
        K, Q = factors(theta)
        D = D.reshape(-1, d, d)
        flat = np.concatenate([(D @ Q).reshape(len(D), -1), (D.transpose(0, 2, 1) @ K).reshape(len(D), -1)], -1)
        norm = np.linalg.norm(flat, axis=-1)
        ok = norm > 0
        safe = np.where(ok, norm, 1.0)
        with np.errstate(divide="ignore"):
            lg = np.where(ok, log_norm + np.log(safe), -np.inf)
        return theta - eta * np.where(ok[:, None], flat / safe[:, None], 0.0), lg

    return kernel_run(problem, theta0, steps, every, update, to_p)


def train_each(datasets: Sequence[Dataset], rule, steps: int, param: str = "W", m: int | None = None,
               init_scale: float = 0.1, seeds: Sequence[int] = (0,), starts: int = 1, every: int | None = None,
               loss: Loss | str = "logistic"):
    """`train` with one seed per dataset: dataset k's starts are the ones `train([ds_k], ..., seed=seeds[k])`
    draws, so a dataset's run does not depend on the others in the batch (one batched run of
    len(datasets) * starts instances, dataset-major; normalized GD in (K, Q) by `kq_normalized_gd`)."""
    from attnsvm import dynamics

    d = datasets[0].d
    batch = [ds for ds in datasets for _ in range(starts)]
    p0 = np.concatenate([initial_points(d, param, m, init_scale, s, starts) for s in seeds])
    prob = w_problem(batch, loss)
    if param == "W":
        return dynamics.run(prob, rule, p0, steps, every)
    if type(rule) is dynamics.NormalizedGD and isinstance(rule.eta, (int, float)):
        return kq_normalized_gd(prob, KQ(d, m or d), p0, steps, float(rule.eta), every)
    return dynamics.run(prob, rule, p0, steps, every, param=KQ(d, m or d))


def margin_normalized(w, problem) -> np.ndarray | None:
    """W / min_j <A_j, vec W> for a margin problem `svm.w_svm_problem(ds, alpha)`: the point of
    W's ray meeting the constraints with margin exactly 1 (None if W does not separate alpha).
    Comparing its norm with the SVM optimum's measures how far W's direction is from optimal."""
    w = np.ravel(np.asarray(w, dtype=np.float64))
    m = float((problem.A @ w).min())
    return (w / m).reshape(problem.shape) if m > 0 else None


def first_step_at_least(steps: Sequence[int], values, level: float) -> int | None:
    """The first recorded step whose value is >= level (e.g. corr >= 0.99), else None."""
    for s, v in zip(steps, np.asarray(values, dtype=np.float64)):
        if v >= level:
            return int(s)
    return None


def alignment_curves(datasets: Sequence[Dataset], tr, target, alpha) -> dict:
    """For a W-parameterised run `tr` on `datasets` (one per batch row): at every recorded step,
    gap = 1 - corr(W_t, target) and off_mass = mean_i (1 - s_{i,alpha_i}(W_t)) (log domain, exact
    at saturation): the directional convergence and attention sparsification of paper C.
    Arrays of shape (recorded steps, B)."""
    prob = w_problem(datasets)
    gap = (1 - tr.corr(model.t(target))).numpy()
    off = np.stack([log_unselected_mass(prob, tr.p[r], alpha).exp().mean(-1).numpy() for r in range(len(tr.steps))])
    return {"gap": gap, "off_mass": off}


@dataclass(frozen=True)
class HeadProblem:
    """The W-parameterised cross-attention risk with any differentiable head h (e.g. an MLP,
    Appendix D): L(W) = mean_i loss(Y_i h(X_i^T S(X_i W z_i))), batched over B instances that
    share the head. `grad` has the `dynamics.Problem` interface; it is the closed form of
    `model.grad_W_cross` (chain rule through S'), not log-domain: trusted while the softmax mass
    that matters (inside the selected sets) is not saturated, which is the regime of heads that
    select several tokens. X (B,n,T,d), Z (B,n,d), Y (B,n); `mask` (B,n,T) bool drops tokens
    (logit -inf), e.g. to restrict attention to selected sets."""

    X: torch.Tensor
    Z: torch.Tensor
    Y: torch.Tensor
    head: object
    loss: Loss
    mask: torch.Tensor | None = None

    @classmethod
    def from_datasets(cls, datasets: Sequence[Dataset], head, loss: Loss | str = "logistic", mask=None, device=None):
        device = device or default_device()
        X = model.t(np.stack([ds.X for ds in datasets]), device)
        Z = model.t(np.stack([model.queries(ds) for ds in datasets]), device)
        Y = model.t(np.stack([ds.Y for ds in datasets]), device)
        m = None if mask is None else torch.as_tensor(np.asarray(mask), device=device).bool()
        return cls(X, Z, Y, head, get_loss(loss), m)

    @property
    def K(self) -> torch.Tensor:        # for dynamics.run: device and size
        return self.X

    @property
    def batch(self) -> int:
        return self.X.shape[0]

    def logits(self, p: torch.Tensor) -> torch.Tensor:
        a = torch.einsum("bntd,bde,bne->bnt", self.X, to_matrix(p), self.Z)
        return a if self.mask is None else a.masked_fill(~self.mask, float("-inf"))

    def grad(self, p: torch.Tensor) -> Grad:
        """Value and gradient; the gradient in the cancellation-free form of attnsvm.attention.gradients,
        sum_i loss'_i sum_t s_it (g_it - f_i)(k_it - k_i,ref) with g_it - f_i = sum_u s_iu (g_it - g_iu)
        and each weight kept as sign and logarithm, so the direction survives saturation."""
        a = self.logits(p)
        log_s = torch.log_softmax(a, -1)
        s = log_s.exp()
        xi = torch.einsum("bnt,bntd->bnd", s, self.X)
        out = self.head(xi)
        value = self.loss.value(self.Y * out).mean(-1)
        lp = self.loss.deriv(self.Y * out)                                   # (B,n)
        g = self.Y[..., None] * torch.einsum("bntd,bnd->bnt", self.X, self.head.grad(xi))   # effective scores
        c = torch.einsum("bnu,bntu->bnt", s, g[..., :, None] - g[..., None, :])             # g_t - f, pairwise
        ref = a.argmax(-1)
        is_ref = torch.nn.functional.one_hot(ref, a.shape[-1]).bool()
        log_w = (log_s + c.abs().log() + lp.abs().log()[..., None]).masked_fill(is_ref | (c == 0), float("-inf"))
        M = log_w.flatten(1).amax(-1)
        finite = torch.isfinite(M)
        Msafe = torch.where(finite, M, torch.zeros_like(M))
        w = torch.sign(c) * torch.sign(lp)[..., None] * (log_w - Msafe[:, None, None]).exp()
        x_ref = torch.gather(self.X, 2, ref[..., None, None].expand(-1, -1, 1, self.X.shape[-1]))
        G = torch.einsum("bnt,bntd,bne->bde", w, self.X - x_ref, self.Z).flatten(-2)
        norm = G.norm(dim=-1)
        ok = finite & (norm > 0)
        safe = torch.where(ok, norm, torch.ones_like(norm))
        direction = torch.where(ok[:, None], G / safe[:, None], torch.zeros_like(G))
        log_norm = torch.where(ok, Msafe + safe.log() - math.log(self.X.shape[1]), torch.full_like(norm, float("-inf")))
        log_unsat = torch.logsumexp(a.masked_fill(is_ref, float("-inf")), -1) - torch.logsumexp(a, -1)
        return Grad(value, direction, log_norm, ref, log_unsat)


def mlp_normalized_gd(datasets: Sequence[Dataset], heads: Sequence, eta: float, steps: int,
                      rows: Sequence[int], pad: tuple[int, int] | None = None) -> tuple[np.ndarray, list[str]]:
    """Normalized GD on W (from 0) of the logistic cross-attention risk with one MLP head per dataset
    (`heads.MLPHead`, a common width), datasets of one d, in numpy: each step is `HeadProblem.grad`'s
    cancellation-free direction (weights loss'_i s_it (g_it - f_i) kept as sign and logarithm, taken
    against the max-logit token: sum_i (sum_t w_it (x_it - x_i,ref)) z_i^T) without torch's
    per-operation overhead (a few microseconds per operation instead of tens, for the small batches
    of a check). Inputs and tokens are padded to `pad` = (n, T) (default the largest): a padded token
    has logit -inf, a padded input one token at 0 and no gradient term (the normalisation does not
    see the mean's 1/n). Pass a fixed `pad` to make an instance's run the same in any batch (every
    operation acts on each instance's own rows; the small products are numpy's per-matrix matmul
    and einsum). Returns (W at each step of `rows`, (len(rows), B,
    d*d); per instance 'ok', 'stationary' (a zero direction) or 'non-finite')."""
    from scipy.special import expit

    n, T = pad or (max(ds.n for ds in datasets), max(ds.T for ds in datasets))
    B, d = len(datasets), datasets[0].d
    X, Z, Y = np.zeros((B, n, T, d)), np.zeros((B, n, d)), np.zeros((B, n))
    bias = np.full((B, n, T), -np.inf)                                  # logit offsets: 0 on live tokens
    bias[:, :, 0] = 0.0
    real = np.zeros((B, n))                                             # 1 on real inputs
    for b, ds in enumerate(datasets):
        X[b, :ds.n, :ds.T], Z[b, :ds.n], Y[b, :ds.n] = ds.X, model.queries(ds), ds.Y
        bias[b, :ds.n, :ds.T] = 0.0
        real[b, :ds.n] = 1.0
    W1 = np.stack([h.W1 for h in heads])                                 # (B, width, d)
    W1T = np.ascontiguousarray(W1.transpose(0, 2, 1))
    b1 = np.stack([h.b1 for h in heads])[:, None, :]                     # (B, 1, width)
    w2 = np.stack([h.w2 for h in heads])[:, None, :]                     # (B, 1, width)
    W = np.zeros((B, d, d))
    want = {r: k for k, r in enumerate(rows)}
    out = np.zeros((len(rows), B, d * d))
    zero = np.zeros(B, dtype=bool)
    idx = np.arange(T)
    for k in range(steps + 1):
        if k in want:
            out[want[k]] = W.reshape(B, -1)
        if k == steps:
            break
        a = np.einsum("bntd,bnd->bnt", X, Z @ W.transpose(0, 2, 1)) + bias   # x_it^T W z_i
        ref = a.argmax(-1)
        z = a - a.max(-1, keepdims=True)
        e = np.exp(z)
        se = e.sum(-1, keepdims=True)
        s = e / se
        pre = np.tanh(np.einsum("bnt,bntd->bnd", s, X) @ W1T + b1)
        lp = -expit(-Y * (pre * w2).sum(-1)) * real                    # logistic loss' at Y h(xi); 0 on padding
        g = Y[..., None] * np.einsum("bntd,bnd->bnt", X, ((1 - pre * pre) * w2) @ W1)   # effective scores
        c = np.einsum("bnu,bntu->bnt", s, g[..., :, None] - g[..., None, :])           # g_t - f, pairwise
        is_ref = idx == ref[..., None]
        with np.errstate(divide="ignore"):
            log_w = np.where(is_ref, -np.inf, z - np.log(se) + np.log(np.abs(c)) + np.log(np.abs(lp))[..., None])
        M = log_w.reshape(B, -1).max(-1)
        fin = np.isfinite(M)
        w = np.sign(c) * np.sign(lp)[..., None] * np.exp(log_w - np.where(fin, M, 0.0)[:, None, None])
        x_ref = np.einsum("bnt,bntd->bnd", is_ref.astype(np.float64), X)
        G = np.einsum("bnt,bntd->bnd", w, X - x_ref[:, :, None, :]).transpose(0, 2, 1) @ Z
        norm = np.sqrt(np.einsum("bde,bde->b", G, G))
        ok = fin & (norm > 0)
        zero |= ~ok
        W = W - eta * np.where(ok, 1.0 / np.where(ok, norm, 1.0), 0.0)[:, None, None] * G
    status = [st.NON_FINITE if not np.isfinite(W[b]).all() else st.STATIONARY if zero[b] else st.OK for b in range(B)]
    return out, status


def softmax_of(ds: Dataset, w, mask: np.ndarray | None = None) -> np.ndarray:
    """s_it = softmax_t(x_it^T W z_i) (n, T) at W = w (flat or (d, d)); tokens off `mask` (n, T) get 0."""
    a = np.einsum("ntd,de,ne->nt", ds.X, np.asarray(w, dtype=np.float64).reshape(ds.d, ds.d), model.queries(ds))
    if mask is not None:
        a = np.where(mask, a, -np.inf)
    a = a - a.max(-1, keepdims=True)
    e = np.exp(a)
    return e / e.sum(-1, keepdims=True)


def masked_risk(ds: Dataset, head, mask: np.ndarray, w) -> tuple[float, np.ndarray]:
    """The logistic risk with an MLP head and attention restricted to `mask` (n, T), L(W) = mean_i
    log(1 + exp(-Y_i h(X_i^T s_i))), and its gradient in vec(W) (numpy, closed form: within the
    sets the softmax is not saturated, so the textbook S'(a) form is exact enough)."""
    from scipy.special import expit

    s = softmax_of(ds, w, mask)
    xi = np.einsum("nt,ntd->nd", s, ds.X)
    pre = np.tanh(xi @ head.W1.T + head.b1)
    m = ds.Y * (pre @ head.w2)
    value = float(np.mean(np.logaddexp(0.0, -m)))
    lp = -expit(-m)
    g = ds.Y[:, None] * np.einsum("ntd,nd->nt", ds.X, ((1 - pre ** 2) * head.w2) @ head.W1)
    c = s * (g - (s * g).sum(-1, keepdims=True))
    G = np.einsum("n,nt,ntd,ne->de", lp, c, ds.X, model.queries(ds)) / ds.n
    return value, G.reshape(-1)


def generalized_w_svm(ds: Dataset, sets: Sequence[Sequence[int]]):
    """The generalized SVM of nonlinear heads (docs/statements.md#tfsvm-mlp; TF-as-SVM Section 6), for
    selected sets O_i:  W^mm = argmin ||W||_F  s.t.  (x_io - x_it)^T W z_i >= 1 (o in O_i, t not in
    O_i),  (x_io - x_io')^T W z_i = 0 (o, o' in O_i). The equalities span S_fin, the subspace of
    the finite component; the problem is solved in an orthonormal basis N of S_fin's orthogonal
    complement (W = N c, ||W|| = ||c||) with `svm.solve`. Returns (SVMResult over c, N, E) with
    E the equality rows; W^mm = N c."""
    from scipy.linalg import null_space

    from attnsvm.svm.generalized import set_rows
    from attnsvm.svm.margin import MarginProblem, solve

    K = np.einsum("ntd,ne->ntde", ds.X, model.queries(ds))        # keys vec(x_it z_i^T)
    rows, tags, E = set_rows(K, sets)
    D = ds.d * ds.d
    N = null_space(E) if len(E) else np.eye(D)
    A = rows @ N
    return solve(MarginProblem(A, tuple(tags), None, None, f"Gen-SVM(sets={[sorted(o) for o in sets]})")), N, E
