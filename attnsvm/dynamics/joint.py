"""Joint training of the key-query matrix W and the linear decoder v of self-attention (paper C,
"jointly training W and the linear decoder"): L(W, v) = mean_i loss(Y_i v^T X_i^T S(X_i W z_i)),
trained in theta = (vec W, v) by any `dynamics` rule (`dynamics.run(JointProblem, rule, theta0, H)`),
and rates-joint's proxy: its Gaussian-like data (`gaussian_like`), targets and batched runs (`race`).

The W-block is the linear-head gradient of `cross.w_problem` with the current scores
gamma_it = Y_i v^T x_it (log domain, exact at saturation); the v-block is
grad_v = (1/n) sum_i loss'_i Y_i X_i^T s_i; the two are joined in the log domain."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.attention.gradients import Grad, Keys, linear_head_grad
from attnsvm.attention.losses import Loss, get_loss
from attnsvm.dynamics.cross import w_keys
from attnsvm.dynamics.problem import default_device


@dataclass(frozen=True)
class JointProblem:
    """B instances; X (B,n,T,d), Z (B,n,d) queries, Y (B,n). theta (B, d*d + d) = (vec W, v),
    W row-major. `K` are the W-keys vec(x_it z_i^T) (for `dynamics.run`: device, size)."""

    X: torch.Tensor
    Z: torch.Tensor
    Y: torch.Tensor
    loss: Loss

    @classmethod
    def from_datasets(cls, datasets: Sequence[Dataset], loss: Loss | str = "logistic", device=None) -> JointProblem:
        device = device or default_device()
        X = model.t(np.stack([ds.X for ds in datasets]), device)
        Z = model.t(np.stack([model.queries(ds) for ds in datasets]), device)
        Y = model.t(np.stack([ds.Y for ds in datasets]), device)
        return cls(X, Z, Y, get_loss(loss))

    @cached_property
    def K(self) -> torch.Tensor:
        return w_keys(self.X, self.Z)

    @cached_property
    def keys(self) -> Keys:
        return Keys.of(self.K)

    @property
    def batch(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[-1]

    def split(self, theta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(vec W, v) of theta."""
        return theta[..., : self.d * self.d], theta[..., self.d * self.d:]

    def margins(self, theta: torch.Tensor) -> torch.Tensor:
        """Y_i v^T X_i^T S(X_i W z_i), (B, n)."""
        w, v = self.split(theta)
        s = torch.softmax(torch.einsum("bntd,bd->bnt", self.K, w), -1)
        return self.Y * torch.einsum("bnt,bntd,bd->bn", s, self.X, v)

    def grad(self, theta: torch.Tensor, stats: bool = True) -> Grad:
        """The joint gradient; `stats=False` leaves out the W-block's statistics (value,
        log_unsat, log_excess: `gradients.STATS`), which normalized GD's unrecorded steps do not read."""
        w, v = self.split(theta)
        gamma = self.Y[..., None] * torch.einsum("bntd,bd->bnt", self.X, v)
        gw = linear_head_grad(self.keys, gamma, w, self.loss, stats)
        s = torch.softmax(torch.einsum("bntd,bd->bnt", self.K, w), -1)
        feat = torch.einsum("bnt,bntd->bnd", s, self.X)
        lp = self.loss.deriv(self.Y * torch.einsum("bnd,bd->bn", feat, v))
        gv = torch.einsum("bn,bnd->bd", lp * self.Y, feat) / self.X.shape[1]
        nv = gv.norm(dim=-1)
        M = torch.maximum(gw.log_norm, nv.log())
        Ms = torch.where(torch.isfinite(M), M, torch.zeros_like(M))
        vec = torch.cat([gw.direction * torch.exp(gw.log_norm - Ms)[:, None], gv * torch.exp(-Ms)[:, None]], -1)
        n = vec.norm(dim=-1)
        direction = vec / torch.where(n > 0, n, math.inf)[:, None]
        return Grad(gw.value, direction, Ms + n.log(), gw.selected, gw.log_unsat)


# ---- paper C's joint-training proxy (rates-joint) ------------------------------------------------

def gaussian_like(seed: int, n: int, T: int, d: int, sigma: float, flipped: int = 0) -> Dataset:
    """x_i1 = Y_i e_1 (the label token, also the query), x_it ~ N(0, sigma^2 I) with first coordinate 0
    for t > 1; the first `flipped` inputs carry the wrong sign, x_i1 = -Y_i e_1 (docs/statements.md#rates-joint)."""
    rng = np.random.default_rng(seed)
    X = sigma * rng.normal(size=(n, T, d))
    X[:, :, 0] = 0.0
    Y = rng.choice([-1.0, 1.0], n)
    X[:, 0, :] = 0.0
    X[:, 0, 0] = Y * np.where(np.arange(n) < flipped, -1.0, 1.0)
    e1 = np.eye(d)[0]
    return Dataset.from_arrays(X, Y, e1, name=f"gaussian-like-seed{seed}")


def gaussian_like_datasets(n=(2, 4), T=(2, 3), d=(2, 4), sigmas=(0.1, 0.25), flipped=0):
    """A `Space` of `gaussian_like` datasets from a drawn seed (exhaustive scopes fix the seed: sizes only)."""
    from attnsvm.claims import strategies as S
    from attnsvm.claims.spaces import Space

    def generate(c):
        nn, TT, dd = c.integer(*n, "size"), c.integer(*T, "size"), c.integer(*d, "size")
        sigma = c.sampled_from(list(sigmas))
        return gaussian_like(c.integer(0, 2**31 - 1, "seed"), nn, TT, dd, sigma, S._choose(c, flipped))
    return Space(generate, f"Gaussian-like datasets n in {list(n)}, T in {list(T)}, d in {list(d)}, sigma in "
                           f"{list(sigmas)}, flipped {flipped}")


def targets(ds: Dataset):
    """(W_mm for the label tokens alpha = (0, ..., 0), the label SVM v_mm on them), solved once per dataset."""
    from attnsvm.svm import w_svm
    from attnsvm.svm.margin import label_svm

    return ds.memo("joint.targets", lambda: (w_svm(ds, [0] * ds.n), label_svm(ds.X[:, 0], ds.Y)))


PAD = 4     # joint runs are computed in dimension max(d, PAD): fewer shapes per batch, the same run


@dataclass
class JointRun:
    """One instance's joint run, recorded at `steps`: W's (R, d*d), risk `value` (R,), the
    decoder's final normalized margin min_i Y_i v^T X_i^T s_i / ||v||, and `status`."""

    steps: np.ndarray
    W: np.ndarray
    value: np.ndarray
    decoder_margin: float
    status: str


def decoder_margin(X: np.ndarray, Y: np.ndarray, W: np.ndarray, v: np.ndarray) -> float:
    """min_i Y_i v^T X_i^T S(X_i W z_i) / ||v|| (z_i = x_i1) for one instance."""
    from scipy.special import softmax

    s = softmax(np.einsum("ntd,de,ne->nt", X, W, X[:, 0, :]), axis=-1)
    return float((Y * np.einsum("nt,ntd,d->n", s, X, v)).min() / np.linalg.norm(v))


def race(insts, budget, records: int) -> list[JointRun]:
    """Each instance's joint run (params rule 'ngd' or 'gd', eta, steps, init_scale, seed: theta_0 ~
    N(0, init_scale^2) in dimension d^2 + d) for steps x horizon iterations, recorded every
    H // records. Instances sharing n, T, horizon, rule and step run as one batch (rows rounded up
    to a multiple of trajectory.ROWS, as `dynamics.run` pads a `Problem`'s), in dimension
    D = max(d, PAD) with tokens zero-padded: the padded coordinates of W and v carry no gradient
    and stay 0, so an instance's run does not depend on the rest of its batch."""
    from attnsvm import dynamics
    from attnsvm.dynamics.trajectory import ROWS

    groups: dict[tuple, list[int]] = {}
    for k, inst in enumerate(insts):
        ds, p = inst.dataset, inst.params
        H = max(1, int(p["steps"] * budget.horizon))
        groups.setdefault((ds.n, ds.T, max(ds.d, PAD), H, p["rule"], float(p["eta"])), []).append(k)
    out: list = [None] * len(insts)
    for (n, T, D, H, rule, eta), ks in groups.items():
        rows = ks + [ks[0]] * (-len(ks) % ROWS)    # padded: no row in a vector kernel's scalar tail
        dss = [insts[k].dataset for k in rows]
        X = np.zeros((len(rows), n, T, D))
        theta0 = np.zeros((len(rows), D * D + D))
        for j, (k, ds) in enumerate(zip(rows, dss)):
            X[j, ..., :ds.d] = ds.X
            t0 = np.random.default_rng(insts[k].params["seed"]).normal(scale=insts[k].params["init_scale"],
                                                                       size=ds.d * ds.d + ds.d)
            W0 = np.zeros((D, D))
            W0[:ds.d, :ds.d] = t0[:ds.d * ds.d].reshape(ds.d, ds.d)
            theta0[j, :D * D], theta0[j, D * D:D * D + ds.d] = W0.ravel(), t0[ds.d * ds.d:]
        prob = JointProblem(model.t(X), model.t(X[:, :, 0, :]), model.t(np.stack([ds.Y for ds in dss])),
                            get_loss("logistic"))
        step = dynamics.NormalizedGD(eta) if rule == "ngd" else dynamics.GD(eta)
        with torch.inference_mode():        # no autograd here: less overhead per step, the same numbers
            tr = dynamics.run(prob, step, theta0, H, every=max(1, H // records))
        theta = tr.p.numpy()                                                # (R, B, D*D + D)
        for j, (k, ds) in enumerate(zip(ks, dss)):     # per instance, on its own arrays: batch-independent
            th = np.ascontiguousarray(theta[:, j])
            W = th[:, :D * D].reshape(-1, D, D)
            out[k] = JointRun(np.asarray(tr.steps), W[:, :ds.d, :ds.d].reshape(len(tr.steps), -1),
                              tr.value[:, j].numpy(), decoder_margin(X[j], ds.Y, W[-1], th[-1, D * D:]), tr.status[j])
    return out


def instances(rule: str = "ngd", flipped=0):
    """rates-joint's instances: `gaussian_like_datasets` (the first `flipped` inputs' label tokens
    carry the wrong sign) and a joint run's settings: `rule` 'ngd' (eta 0.5) or 'gd' (eta 1), 200 x
    horizon steps from theta_0 of scale 0.05 or 0.1 (`start_near_zero`: from scale 0.3 a decoder drawn against the
    label can lock onto label-correlated noise tokens, NOTES.md), a drawn seed."""
    from attnsvm.claims import strategies as S

    eta = 0.5 if rule == "ngd" else 1.0
    return S.instances(gaussian_like_datasets(flipped=flipped), rule=S.just(rule), eta=S.just(eta),
                       steps=S.just(200), init_scale=S.sampled_from([0.05, 0.1]), seed=S.seeds())
