"""Lemma 1's two gradient-descent sequences (docs/statements.md#lemma1), batched: GD on p with
the keys X_i, and GD on W with the logits X_i W u, for many instances of different shapes,
losses and heads at once; and their instance space.

Both sequences are run with torch autograd on the risk itself (L(p) with logits X_i p, L(W) with
logits X_i W u), not with the closed-form gradients the other results use, so a check built on
them shares no gradient code with what it could confirm. Instances are grouped by loss and head
and padded to one shape: padded tokens are masked out of the softmax (logit -inf), padded inputs
weigh 0 in the mean, padded coordinates are 0 in X, u, p, W and the head's weights, so every
padded entry stays exactly 0 and each instance's iterates are its own. The padding is fixed
(`PAD`, the largest shape of the space) and does not depend on the batch, so an instance's run is
the same alone or in any batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from attnsvm.attention.heads import MLPHead
from attnsvm.attention.losses import get_loss
from attnsvm.claims.claim import Instance
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import gaussian_datasets
from attnsvm.dynamics import intra_op_threads

PAD = (3, 4, 3)         # (n, T, d) every instance of `starts` fits; a larger one is padded to its own shape
WIDTH = 3               # hidden units of the MLP head


def head_of(inst) -> MLPHead | None:
    """The instance's MLP head (seeded by params['head_seed']), or None for the linear head h(x) = v^T x."""
    if inst.params["head"] == "linear":
        return None
    return MLPHead.random(inst.dataset.d, WIDTH, np.random.default_rng(inst.params["head_seed"]))


@dataclass
class Runs:
    """Per instance: the largest relative gaps over the horizon, ||W_t - p_t u^T/||u||^2||_F / max(1, ||W_t||_F)
    (`gap_W`) and ||W_t u - p_t|| / max(1, ||p_t||) (`gap_Wu`); the largest growth of a perturbation
    injected at any step, max over s <= t of ||Phi(t, s)||_F (at least 1), Phi(t, s) = J_{t-1} ... J_s
    the product of the Jacobians J_r = I - eta Hess L(p_r) of GD on p along its run (`amplification`:
    how much a rounding difference between the two sequences, made at any step, can grow: first
    order in the perturbation, so it does not saturate at the size of the trajectory as a finite
    twin run from a perturbed start does; inf where the products overflow); and the first step at
    which an iterate was not finite (None if none)."""

    gap_W: list[float]
    gap_Wu: list[float]
    amplification: list[float]
    non_finite: list[int | None]


def _padded(insts: list[Instance], shape: tuple[int, int, int]) -> dict:
    N, T, D = shape
    B = len(insts)
    X = np.zeros((B, N, T, D))
    tok = np.zeros((B, N, T), dtype=bool)
    w = np.zeros((B, N))
    Y = np.ones((B, N))
    v = np.zeros((B, D))
    W1, b1, w2 = np.zeros((B, WIDTH, D)), np.zeros((B, WIDTH)), np.zeros((B, WIDTH))
    u, p0, W0 = np.zeros((B, D)), np.zeros((B, D)), np.zeros((B, D, D))
    for k, inst in enumerate(insts):
        ds, P = inst.dataset, inst.params
        n, t, d = ds.n, ds.T, ds.d
        X[k, :n, :t, :d] = ds.X
        tok[k, :n, :t] = True
        tok[k, n:, 0] = True                 # a padded input sees one zero token: finite, and weighs 0
        w[k, :n] = 1.0 / n
        Y[k, :n] = ds.Y
        v[k, :d] = ds.v
        head = head_of(inst)
        if head is not None:
            W1[k, :, :d], b1[k], w2[k] = head.W1, head.b1, head.w2
        u[k, :d], p0[k, :d] = P["u"], P["p0"]
        W0[k, :d, :d] = P["W0"]
    t = lambda a: torch.as_tensor(a, dtype=torch.float64)
    return {"X": t(X), "tok": torch.as_tensor(tok), "w": t(w), "Y": t(Y), "v": t(v), "W1": t(W1), "b1": t(b1),
            "w2": t(w2), "u": t(u), "p0": t(p0), "W0": t(W0)}


def _risks(b: dict, logits: torch.Tensor, loss, mlp: bool) -> torch.Tensor:
    """sum over the batch of each instance's risk (1/n) sum_i loss(Y_i h(X_i^T S(logits_i)))."""
    s = torch.softmax(logits.masked_fill(~b["tok"], -math.inf), dim=-1)
    xi = torch.einsum("bnt,bntd->bnd", s, b["X"])
    if mlp:
        hidden = torch.tanh(torch.einsum("bnd,bkd->bnk", xi, b["W1"]) + b["b1"][:, None, :])
        f = torch.einsum("bnk,bk->bn", hidden, b["w2"])
    else:
        f = torch.einsum("bnd,bd->bn", xi, b["v"])
    return (b["w"] * loss.value(b["Y"] * f)).sum()


def _group_runs(insts: list[Instance], shape, steps: int) -> list[tuple[float, float, float, int | None]]:
    """Both sequences of one group, stacked along the batch so that one softmax, head and loss
    serve both (the logits of each are its own: X_i p, (X_i W) u), and the Jacobians of GD on p
    (the Hessian of the risk by double backward, one row per coordinate): every product
    Phi(t, s) = J_{t-1} ... J_s, s <= t, is carried along, restricted to the instance's own
    coordinates (padded ones are 0 in it)."""
    b = _padded(insts, shape)
    b2 = {k: torch.cat([v, v]) for k, v in b.items() if k in ("X", "tok", "w", "Y", "v", "W1", "b1", "w2")}
    P0 = insts[0].params
    loss, mlp = get_loss(P0["loss"]), P0["head"] != "linear"
    eta = torch.tensor([inst.params["eta"] for inst in insts], dtype=torch.float64)
    eta_W = torch.tensor([inst.params["eta_W"] for inst in insts], dtype=torch.float64)
    u, p, W = b["u"], b["p0"], b["W0"]
    uu = (u * u).sum(-1)
    D = shape[2]
    own = (torch.arange(D) < torch.tensor([inst.dataset.d for inst in insts])[:, None]).double()
    eye = torch.diag_embed(own)                                 # the identity on the instance's own coordinates
    phis = eye[:, None]                                         # Phi(t, s) for s = 0..t, (B, t + 1, D, D)
    worst_W = torch.zeros(len(insts), dtype=torch.float64)
    worst_Wu = torch.zeros(len(insts), dtype=torch.float64)
    amp = torch.ones(len(insts), dtype=torch.float64)
    bad: list[int | None] = [None] * len(insts)
    for t in range(steps + 1):
        lifted = p[:, :, None] * u[:, None, :] / uu[:, None, None]
        gap = (W - lifted).flatten(1).norm(dim=-1) / W.flatten(1).norm(dim=-1).clamp(min=1.0)
        Wu = torch.einsum("bde,be->bd", W, u)
        gap_u = (Wu - p).norm(dim=-1) / p.norm(dim=-1).clamp(min=1.0)
        worst_W, worst_Wu = torch.fmax(worst_W, gap), torch.fmax(worst_Wu, gap_u)
        grown = phis.flatten(2).norm(dim=-1).amax(dim=-1)
        amp = torch.where(torch.isfinite(phis).flatten(1).all(-1), torch.fmax(amp, grown), math.inf)  # overflow: inf
        finite = torch.isfinite(W).flatten(1).all(-1) & torch.isfinite(p).all(-1)
        for k in torch.nonzero(~finite).flatten().tolist():
            if bad[k] is None:
                bad[k] = t
        if t == steps:
            break
        pp, WW = (x.detach().requires_grad_(True) for x in (p, W))
        keys_W = torch.einsum("bntd,bde->bnte", b["X"], WW)                 # K_i = X_i W, then the logits K_i u
        logits = torch.cat([torch.einsum("bntd,bd->bnt", b["X"], pp), torch.einsum("bnte,be->bnt", keys_W, u)])
        gp, gW = torch.autograd.grad(_risks(b2, logits, loss, mlp), (pp, WW), create_graph=True)
        hess = torch.stack([torch.autograd.grad(gp[:, j].sum(), pp, retain_graph=j < D - 1)[0] for j in range(D)], 1)
        jac = eye - eta[:, None, None] * (own[:, :, None] * hess * own[:, None, :])
        phis = torch.cat([torch.einsum("bde,bsef->bsdf", jac, phis), eye[:, None]], dim=1)
        p = (pp - eta[:, None] * gp).detach()
        W = (WW - eta_W[:, None, None] * gW).detach()
    return [(float(a), float(c), float(m), k)
            for a, c, m, k in zip(worst_W.tolist(), worst_Wu.tolist(), amp.tolist(), bad)]


def runs(insts: list[Instance], steps: int) -> Runs:
    """Both sequences for `steps` steps from each instance's (p0, W0), grouped by loss, head and
    padded shape; results in the instances' order."""
    groups: dict[tuple, list[int]] = {}
    for k, inst in enumerate(insts):
        dims = (inst.dataset.n, inst.dataset.T, inst.dataset.d)
        shape = PAD if all(a <= b for a, b in zip(dims, PAD)) else dims
        groups.setdefault((inst.params["loss"], inst.params["head"], shape), []).append(k)
    out: list = [None] * len(insts)
    with intra_op_threads(1):                   # small tensors: threads only add overhead
        for (_, _, shape), ks in groups.items():
            for k, res in zip(ks, _group_runs([insts[k] for k in ks], shape, steps)):
                out[k] = res
    return Runs(*(list(col) for col in zip(*out)))


def starts(rank_one: bool = True, scaled: bool = True) -> Space:
    """Lemma 1's instances: a Gaussian dataset (n 1..3, T 2..4, d 1..3), integer u != 0 and p_0 in
    [-3, 3]^d, W_0 = p_0 u^T/||u||^2 (with `rank_one` False: plus N (I - u u^T/||u||^2), N integer in
    [-2, 2], so W_0 u = p_0 still), a step eta, the W step eta/||u||^2 (with `scaled` False: eta
    times 1, 1/2 or 2), a loss of Assumption A and a head (linear, or a seeded MLP)."""
    datasets = gaussian_datasets(n=(1, 3), T=(2, 4), d=(1, 3))

    def generate(c) -> Instance:
        ds = datasets.generate(c)
        k = ds.d
        u = np.array([c.integer(-3, 3, "entry") for _ in range(k)], float)
        if not u.any():
            c.reject()
        p0 = np.array([c.integer(-3, 3, "entry") for _ in range(k)], float)
        W0 = np.outer(p0, u) / (u @ u)
        if not rank_one:
            N = np.array([c.integer(-2, 2, "entry") for _ in range(k * k)], float).reshape(k, k)
            W0 = W0 + N @ (np.eye(k) - np.outer(u, u) / (u @ u))
        eta = c.sampled_from([0.5, 1.0, 2.0])
        eta_W = eta * c.sampled_from([1.0, 0.5, 2.0]) if not scaled else float(eta / (u @ u))
        return Instance(ds, {"u": u.tolist(), "p0": p0.tolist(), "W0": W0.tolist(), "eta": eta, "eta_W": eta_W,
                             "loss": c.sampled_from(["logistic", "exponential", "correlation"]),
                             "head": c.sampled_from(["linear", "mlp"]), "head_seed": c.integer(0, 1000, "seed")})

    what = ("" if rank_one else "; W_0 = p_0 u^T/||u||^2 + N (I - u u^T/||u||^2)") + \
           ("" if scaled else "; W step eta x (1, 1/2 or 2)")
    return Space(generate, "Gaussian datasets n 1..3, T 2..4, d 1..3; integer u, p_0 in [-3, 3]; steps, losses, heads"
                 + what)
