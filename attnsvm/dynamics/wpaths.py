"""Regularization paths of the W- and (K, Q)-parameterisations of Transformers as SVMs
(docs/statements.md#tfsvm-regpath-w, #tfsvm-regpath-kq): their start directions and the limit
the (K, Q) path is claimed to reach. The paths themselves are `dynamics.paths.linear_paths`
(with `cross.w_problem`) and `dynamics.paths.kq_paths`; the W-SVM machinery is `svm.wlift`.

- `dataset`: the Gaussian datasets of these checks, one object per arguments (memos shared);
- `lmm_starts`: every W-LMM direction (exact selections, T^n <= 64; robust non-LMMs screened in float), as
  flattened W matrices;
- `balanced`: the balanced rank-m factorisation theta = (vec K, vec Q) of a W's truncated SVD,
  the (K, Q) start of a W direction;
- `kq_target`: the (K, Q) path's claimed limit for width m: the nuclear-norm W-SVM (m >= d, Clarabel's
  SDP, `wlift.nuclear_w_svm`) or the rank-<= m nuclear SVM (m < d, multi-start SLSQP: best found,
  not certified), with the Frobenius W_mm(opt) (`wlift.fro_w_svm`) and their correlation, memoized
  on the dataset.
- `theorem_cone`: for a locally optimal alpha, the cones in which the local path's theorem can hold
  (mu below `mu_star`, where a higher-scoring token could take the least margin) and the norm R_mu
  beyond which the lower-scoring tokens outweigh in the whole cone (`ConeGeometry.r_mu`);
  `mass_balance`: which tokens a point's softmax mass favours (higher- or lower-scoring ones).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import torch
from scipy.optimize import nnls
from scipy.special import logsumexp

from attnsvm.attention import model
from attnsvm.attention.losses import get_loss
from attnsvm.svm import geometry, wlift


@functools.lru_cache(maxsize=4096)
def dataset(seed: int, n: int, T: int, d: int, cross_queries: bool):
    """`strategies.gaussian_dataset(seed, n, T, d, cross_queries=...)`, one object per arguments in a
    process: a search meets the same datasets many times (duplicates, mutants), and everything
    exact derived from one (its W-selections, targets) is memoized on it."""
    from attnsvm.claims.strategies import gaussian_dataset

    return gaussian_dataset(seed, n, T, d, cross_queries=cross_queries)


def lmm_starts(ds) -> list[np.ndarray]:
    """Every W-LMM direction (exact, T^n <= 64) as a flattened W (`wlift.w_lmms_screened`: the
    candidates the float W-SVM shows robustly not locally optimal skip their exact solve; on 300
    Gaussian datasets the same 658 directions, bitwise, at a third of the cost)."""
    return [wlift.w_matrix(ds, s.p_mm).ravel() for s in wlift.w_lmms_screened(ds, limit=64)]


def balanced(W: np.ndarray, m: int) -> np.ndarray:
    """theta = (vec K, vec Q) of the balanced rank-m factorisation of W's truncated SVD."""
    U, s, Vt = np.linalg.svd(W)
    r = np.sqrt(s[:m])
    return np.concatenate([(U[:, :m] * r).ravel(), (Vt[:m].T * r).ravel()])


def kq_target(ds, m: int, seed: int) -> dict:
    """The limit the (K, Q) path of width m is claimed to reach, for opt: {'ok', 'status', 'W_mm' (the
    Frobenius W-SVM), 'W' (the target), 'value' (its nuclear norm), 'nuclear_value',
    'corr_W_mm_target', 'rank_binds' (value / nuclear value - 1)}."""
    def compute():
        opt = model.optimal_tokens(ds).tolist()
        fro, nuc = wlift.fro_w_svm(ds, opt), wlift.nuclear_w_svm(ds, opt)
        out = {"ok": fro.ok and nuc.ok, "status": {"fro": fro.status, "nuclear": nuc.status}}
        if not out["ok"]:
            return out
        W_nuc = nuc.x.reshape(ds.d, ds.d)
        v_nuc = float(np.linalg.norm(W_nuc, "nuc"))
        if m >= ds.d:
            W, value = W_nuc, v_nuc
        else:
            value, W = wlift.rank_constrained_svm(ds, opt, m, seed=seed)
            if W is None:
                return {**out, "ok": False, "status": {**out["status"], "rank_constrained": "no feasible start"}}
        return {**out, "W_mm": fro.x, "W": W, "value": value, "nuclear_value": v_nuc,
                "corr_W_mm_target": geometry.corr(fro.x, W), "rank_binds": value / v_nuc - 1}
    return ds.memo(("kq_target", int(m), int(seed)), compute)


# ---- the local path's cone (docs/statements.md#tfsvm-regpath-w) ----------------------------------

def _lifted_keys(ds) -> np.ndarray:
    """Float keys vec(x_it z_i^T) (n, T, d*d), row-major as `dynamics.cross.w_keys`."""
    return np.einsum("itd,ie->itde", np.asarray(ds.X, dtype=np.float64),
                     np.asarray(model.queries(ds), dtype=np.float64)).reshape(ds.n, ds.T, -1)


def _weights(ds, alpha, loss) -> np.ndarray:
    """|loss'(gamma_{i,alpha_i})| per input: the weight of input i's mixing in the first-order risk."""
    g = model.scores(ds)
    u = torch.tensor([float(g[i, a]) for i, a in enumerate(alpha)], dtype=torch.float64)
    return (-get_loss(loss).deriv(u)).numpy()


@dataclass(frozen=True)
class ConeGeometry:
    """Where the local path's theorem can hold for a locally optimal alpha (rows: the tokens t != alpha_i,
    `dk` = k_{i,alpha_i} - k_it (lifted keys), `weight` = |loss'(gamma_{i,alpha_i})| |gamma_{i,alpha_i} - gamma_it|).

    At a large norm R the risk minus alpha's (the excess) is, to first order and bounded below by convexity,
    sum_i |loss'| sum_t s_it (gamma_{i,alpha_i} - gamma_it): the token of least margin m_t(u) = dk_t . u dominates.
    In a direction u where a HIGHER-scoring token has the least margin the excess is negative for large R, so a
    cone containing such a u (cone_mu(W_mm) with mu >= `mu_star`) cannot have a path converging to W_mm, whatever
    R0 is; for mu < mu_star every direction of the cone has a lower-scoring token of least margin, by at least
    delta(mu) > 0, and the excess is positive beyond `r_mu(mu)`, where the path goes to the max-margin direction
    of the lower-scoring rows, W_mm itself (its SVM-neighbours all score lower). `mu_star` = 1 - cos of the angle
    from W_mm to the nearest such u (a projection onto a polyhedral cone per higher-scoring token, by NNLS);
    0 when a higher-scoring token is an SVM-neighbour (alpha not locally optimal: no cone is narrow enough);
    1 when no token scores higher than its input's alpha. `token` is (i, t) of the token attaining mu_star."""

    mu_star: float
    token: tuple[int, int] | None
    axis: np.ndarray
    lower: np.ndarray
    lower_weight: np.ndarray
    higher: np.ndarray
    higher_weight: np.ndarray
    T: int

    def r_mu(self, mu: float) -> float:
        """A norm (Frobenius, as ||W||) beyond which every W in cone_mu(W_mm) has a positive excess (the
        lower-scoring tokens outweigh: no mixing pays), or inf where this bound gives none (mu too close to
        mu_star, or a margin can reach 0 in the cone). With c = 1 - mu, s = sqrt(1 - c^2), a linear form v . u
        over the unit vectors of the cone is at least c (v . q) - s ||v - (v . q) q||; delta = min over higher h,
        max over lower l of that bound for v = dk_h - dk_l; every margin is positive in the cone, so s_{i,alpha_i}
        >= 1/T and the excess is positive once R delta > log(T sum_h w_h / min_l w_l)."""
        if not len(self.higher):
            return 0.0
        if not len(self.lower) or self.mu_star <= 0 or mu >= self.mu_star:
            return math.inf
        c = 1.0 - mu
        s = math.sqrt(max(0.0, 1.0 - c * c))

        def low(v):
            a = v @ self.axis
            return c * a - s * np.linalg.norm(v - a[..., None] * self.axis, axis=-1)

        if (low(np.concatenate([self.lower, self.higher])) <= 0).any():
            return math.inf
        delta = min(float(low(h - self.lower).max()) for h in self.higher)
        if delta <= 0:
            return math.inf
        return max(0.0, math.log(self.T * float(self.higher_weight.sum()) / float(self.lower_weight.min()))) / delta


def theorem_cone(ds, alpha, loss) -> ConeGeometry:
    """`ConeGeometry` of alpha's W-SVM on ds with `loss` (memoized on the dataset). Scores are compared exactly
    (a token scoring as alpha's adds nothing to the excess and is neither lower nor higher)."""
    alpha = tuple(int(a) for a in alpha)

    def compute():
        sel = wlift.w_select(ds, alpha)
        q = wlift.w_matrix(ds, sel.p_mm).ravel()
        q = q / np.linalg.norm(q)
        K, g, gf, w = _lifted_keys(ds), model.exact_scores(ds), model.scores(ds), _weights(ds, alpha, loss)
        rows = {"lower": ([], [], []), "higher": ([], [], [])}
        for i, a in enumerate(alpha):
            for t in range(ds.T):
                if t != a and g[i, t] != g[i, a]:
                    dk, wt, at = rows["lower" if g[i, t] < g[i, a] else "higher"]
                    dk.append(K[i, a] - K[i, t])
                    wt.append(w[i] * abs(float(gf[i, a] - gf[i, t])))
                    at.append((i, t))
        (lo, lw, _), (hi, hw, ht) = rows["lower"], rows["higher"]
        lo, hi = np.array(lo).reshape(-1, q.size), np.array(hi).reshape(-1, q.size)
        mu_star, token = 1.0, None
        if any(g[i, t] > g[i, a] for i, a in enumerate(alpha) for t in sel.neighbors[i]) or (len(hi) and not len(lo)):
            mu_star = 0.0
            token = next(((i, t) for i, a in enumerate(alpha) for t in sel.neighbors[i] if g[i, t] > g[i, a]),
                         ht[0] if ht else None)
        else:
            for h, at in zip(hi, ht):
                C = lo - h                                   # C u >= 0: every lower-scoring margin >= h's
                lam, _ = nnls(C.T, -q)
                m = 1.0 - float(np.linalg.norm(q + C.T @ lam))   # the projection of q onto {C u >= 0}
                if m < mu_star:
                    mu_star, token = max(m, 0.0), at
        return ConeGeometry(mu_star, token, q, lo, np.array(lw), hi, np.array(hw), ds.T)

    return ds.memo(("theorem_cone", alpha, get_loss(loss).name), compute)


def mass_balance(ds, alpha, W, loss) -> float:
    """log(sum over higher-scoring tokens of |loss'(gamma_{i,alpha_i})| |gamma_it - gamma_{i,alpha_i}| s_it(W))
    minus the same sum over the lower-scoring tokens, in the log domain (no underflow at any norm): positive
    where mixing in higher-scoring tokens outweighs (the first-order excess is negative: the risk is pulled
    away from alpha's selection), negative where the lower-scoring ones do (the theorem's regime)."""
    K, g, gf = _lifted_keys(ds), model.exact_scores(ds), model.scores(ds)
    logits = K @ np.asarray(W, dtype=np.float64).ravel()
    logs = logits - logsumexp(logits, axis=1, keepdims=True)
    w = _weights(ds, alpha, loss)
    terms = {True: [], False: []}
    for i, a in enumerate(alpha):
        for t in range(ds.T):
            weight = w[i] * abs(float(gf[i, t] - gf[i, a]))
            if t != a and g[i, t] != g[i, a] and weight > 0:
                terms[bool(g[i, t] > g[i, a])].append(logs[i, t] + math.log(weight))
    side = {k: float(logsumexp(v)) if v else -math.inf for k, v in terms.items()}
    return side[True] - side[False] if math.isfinite(side[True]) or math.isfinite(side[False]) else 0.0
