"""Searching for stationary points of the W-parameterised risk with a linear head
(docs/statements.md#tfsvm-landscape), batched: many instances, each from several starts, in
one vectorised minimisation (numpy, analytic gradient).

A stationary point is sought as a minimiser of the scale-free ratio

    rho(W) = ||grad L(W)||_F / U(W),   U(W) = (1/n) sum_i |loss'_i| ||z_i|| sum_t |c_it| ||x_it - xbar_i||,

grad L(W) = (1/n) sum_i loss'_i sum_t c_it x_it z_i^T, c_it = s_it (gamma_it - f_i), f_i = sum_t s_it
gamma_it, xbar_i the softmax mean (s_i = softmax_t(x_it^T W z_i)). U bounds ||grad L|| by the
triangle inequality (sum_t c_it = 0 lets each term be taken about xbar_i), so rho lies in
[0, 1] and vanishes exactly at a stationary point whose terms do not all vanish.

- `log_ratio`: log rho and its gradient in W (hand-written reverse mode, pinned against
  autograd in the tests), rows batched;
- `lbfgs`: a batched L-BFGS with a backtracking (Armijo) line search, every row minimised on
  its own (its iterates never read another row: a row's result does not depend on its batch);
- `search`: min rho over the box |W_jk| <= bound, from seeded starts, for a batch of datasets
  (W = bound tanh(u), minimised in u: the box without active-set logic).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.special import expit

from attnsvm.attention import model
from attnsvm.numerics import DIV_FLOOR

LOSS_CODES = {"logistic": 0, "exponential": 1, "correlation": 2}    # the library losses (attention.losses)


def loss_derivatives(code: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(loss'(u), loss''(u)) of the library loss `code` (LOSS_CODES), elementwise; code (P,), u (P, ...)."""
    code = code.reshape(code.shape + (1,) * (u.ndim - code.ndim))
    sig = expit(-u)
    lp = np.where(code == 0, -sig, np.where(code == 1, -np.exp(-u), -1.0))
    lpp = np.where(code == 0, sig * expit(u), np.where(code == 1, np.exp(-u), 0.0))
    return lp, lpp


def log_ratio(X: np.ndarray, Z: np.ndarray, g: np.ndarray, code: np.ndarray, W: np.ndarray, live: np.ndarray,
              n: np.ndarray):
    """log rho(W), its gradient in W, rho and ||grad L(W)||_F for P rows: X (P, n, T, d) tokens,
    Z (P, n, d) queries, g (P, n, T) scores Y_i v^T x_it, code (P,) loss codes, W (P, d, d), live
    (P, n, T) the real tokens (others get logit -inf), n (P,) the real inputs (a padded input has
    zero tokens and query and one live token: no term). Every reduction runs along one row's own
    axes (a row's numbers do not depend on the others)."""
    P = X.shape[0]
    WZ = (W[:, None, :, :] * Z[:, :, None, :]).sum(-1)                     # (P, n, d): W z_i
    a = np.where(live, (X * WZ[:, :, None, :]).sum(-1), -np.inf)           # (P, n, T) logits
    e = np.exp(a - a.max(-1, keepdims=True))
    s = e / e.sum(-1, keepdims=True)
    f = (s * g).sum(-1)                                                    # (P, n)
    dev = g - f[..., None]
    c = s * dev
    lp, lpp = loss_derivatives(code, f)
    M = (c[..., None] * X).sum(-2)                                         # (P, n, d)
    G = ((lp[..., None] * M)[:, :, :, None] * Z[:, :, None, :]).sum(1) / n[:, None, None]   # (P, d, d): grad L
    xbar = (s[..., None] * X).sum(-2)
    Dv = X - xbar[:, :, None, :]
    r = np.sqrt((Dv * Dv).sum(-1))                                         # (P, n, T)
    zn = np.sqrt((Z * Z).sum(-1))                                          # (P, n)
    ac = np.abs(c)
    inner = (ac * r).sum(-1)                                               # (P, n)
    wt = np.abs(lp) * zn
    U = np.maximum((wt * inner).sum(-1) / n, DIV_FLOOR)
    gn = np.sqrt((G * G).reshape(P, -1).sum(-1))
    F = np.log(np.maximum(gn, DIV_FLOOR)) - np.log(U)
    # reverse mode: d log||G|| = <G, dG>/||G||^2, d(-log U) = -dU/U, both through a = logits
    gs = np.maximum(gn, DIV_FLOOR)[:, None, None]
    Gh = G / gs / gs
    q = (X * (Gh[:, None, :, :] * Z[:, :, None, :]).sum(-1)[:, :, None, :]).sum(-1)   # x_it^T Gh z_i
    cbar = lp[..., None] * q / n[:, None, None]
    fbar = lpp * (c * q).sum(-1) / n[:, None]
    kU = 1.0 / (n * U)
    cbar = cbar - kU[:, None, None] * wt[..., None] * np.sign(c) * r
    fbar = fbar - kU[:, None] * np.sign(lp) * lpp * zn * inner
    unit = Dv / np.where(r > 0, r, 1.0)[..., None]
    xbb = kU[:, None, None] * wt[..., None] * (ac[..., None] * unit).sum(-2)          # d(-log U)/d xbar_i
    sbar = (X * xbb[:, :, None, :]).sum(-1) + cbar * dev
    fbar = fbar - (cbar * s).sum(-1)
    sbar = sbar + fbar[..., None] * g
    abar = s * (sbar - (s * sbar).sum(-1, keepdims=True))
    dW = ((abar[..., None] * X).sum(-2)[:, :, :, None] * Z[:, :, None, :]).sum(1)
    return F, dW, gn / U, gn


def lbfgs(fg: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]], x0: np.ndarray, maxiter: int,
          memory: int = 8, ftol: float = 1e-15, gtol: float = 1e-12, c1: float = 1e-4, backtracks: int = 40):
    """Minimise every row of x0 (P, D) on its own: L-BFGS (two-loop recursion over the row's last
    `memory` pairs of positive curvature) with a backtracking Armijo search from the unit step
    (the first iteration's at most 1/||g||; each cut to the minimiser of the quadratic through
    f(0), f'(0), f(t), within [t/10, t/2]). fg(x, rows) -> (f (k,), g (k, D)) at points x (k, D)
    of the problems `rows`. The rows advance asynchronously: each call of fg evaluates one trial
    point of every row still running (a new iteration's first trial or its next backtrack), so a
    row's long line search does not hold the others. A row stops after `maxiter` iterations, when
    a step no longer lowers f by ftol relatively (scipy's L-BFGS-B rule) or its slope is below
    that, when its largest gradient entry is below gtol, or when its line search fails (after
    `backtracks` cuts). Every row's iterates read only its own numbers. Returns (x, f, iterations)."""
    P, D = x0.shape
    x = x0.astype(np.float64).copy()
    f, g = fg(x, np.arange(P))
    S, Y = np.zeros((P, memory, D)), np.zeros((P, memory, D))
    inv = np.zeros((P, memory))
    gamma = np.ones(P)
    pairs = np.zeros(P, dtype=int)                                         # pairs stored (slot j: the j-th newest)
    iters = np.zeros(P, dtype=int)
    cuts = np.zeros(P, dtype=int)
    step, slope, t = np.zeros((P, D)), np.zeros(P), np.zeros(P)
    searching = np.zeros(P, dtype=bool)
    active = np.isfinite(f) & np.isfinite(g).all(-1) & (np.abs(g).max(-1) > gtol) & (maxiter > 0)
    while True:
        rows = np.flatnonzero(active & ~searching)                         # new iterations: a direction each
        if rows.size:
            gr, Sr, Yr, ir = g[rows], S[rows], Y[rows], inv[rows]
            q, alphas = gr.copy(), []
            for j in range(min(memory, int(pairs[rows].max()))):           # newest pair first (age j)
                a_j = ir[:, j] * (Sr[:, j] * q).sum(-1)
                q = q - a_j[:, None] * Yr[:, j]
                alphas.append(a_j)
            r = gamma[rows, None] * q
            for j in reversed(range(len(alphas))):
                b_j = ir[:, j] * (Yr[:, j] * r).sum(-1)
                r = r + Sr[:, j] * (alphas[j] - b_j)[:, None]
            st, sl = -r, (gr * -r).sum(-1)
            bad = ~(sl < 0)                                                # not a descent direction: steepest descent
            st[bad] = -gr[bad]
            sl[bad] = -(gr[bad] * gr[bad]).sum(-1)
            step[rows], slope[rows] = st, sl
            t[rows] = np.where(iters[rows] == 0, np.minimum(1.0, 1.0 / np.sqrt(-sl)), 1.0)
            cuts[rows] = 0
            searching[rows] = True
            flat = -sl <= ftol * np.maximum(np.abs(f[rows]), 1.0)          # no decrease left above rounding: done
            active[rows[flat]] = False
        rows = np.flatnonzero(active & searching)
        if rows.size == 0:
            break
        xt = x[rows] + t[rows, None] * step[rows]
        ft, gt = fg(xt, rows)
        ok = np.isfinite(ft) & np.isfinite(gt).all(-1) & (ft <= f[rows] + c1 * t[rows] * slope[rows])
        # rejected: cut the step (or give up after `backtracks` cuts)
        no = rows[~ok]
        curv = ft[~ok] - f[no] - slope[no] * t[no]
        guess = np.where(np.isfinite(curv) & (curv > 0), -slope[no] * t[no] ** 2 / (2 * np.where(curv > 0, curv, 1.0)),
                         0.1 * t[no])
        t[no] = np.clip(guess, 0.1 * t[no], 0.5 * t[no])
        cuts[no] += 1
        active[no[cuts[no] > backtracks]] = False
        # accepted: a step, a curvature pair where y^T s > 0, the stopping rules
        yes = rows[ok]
        if yes.size:
            s_k = xt[ok] - x[yes]
            y_k = gt[ok] - g[yes]
            sy, yy = (s_k * y_k).sum(-1), (y_k * y_k).sum(-1)
            keep = sy > 1e-10 * np.sqrt((s_k * s_k).sum(-1) * yy)
            kr = yes[keep]                                                 # history by age: the new pair first
            S[kr, 1:], Y[kr, 1:], inv[kr, 1:] = S[kr, :-1], Y[kr, :-1], inv[kr, :-1]
            S[kr, 0], Y[kr, 0], inv[kr, 0] = s_k[keep], y_k[keep], 1.0 / sy[keep]
            gamma[kr] = sy[keep] / yy[keep]
            pairs[kr] += 1
            f_old = f[yes]
            x[yes], f[yes], g[yes] = xt[ok], ft[ok], gt[ok]
            iters[yes] += 1
            searching[yes] = False
            stalled = (f_old - f[yes]) <= ftol * np.maximum(np.maximum(np.abs(f_old), np.abs(f[yes])), 1.0)
            active[yes[stalled | (np.abs(g[yes]).max(-1) <= gtol) | (iters[yes] >= maxiter)]] = False
    return x, f, iters


PAD = (3, 3, 4)          # (n, T, d) every smaller dataset is padded to (larger ones: to their own size)


def padded(ds, pad=PAD) -> tuple:
    """The padded shape of `ds`: at least `pad` in each of n, T, d (depends on `ds` alone)."""
    return max(ds.n, pad[0]), max(ds.T, pad[1]), max(ds.d, pad[2])


def arrays(datasets: Sequence, shape: tuple) -> tuple:
    """X (B, n, T, d), Z (B, n, d), scores (B, n, T), live tokens (B, n, T) and input counts (B,) of
    datasets zero-padded to `shape` = (n, T, d): a padded token is dead, a padded input has one
    live token at 0 and a zero query."""
    B, (n, T, d) = len(datasets), shape
    X, Z, g = np.zeros((B, n, T, d)), np.zeros((B, n, d)), np.zeros((B, n, T))
    live = np.zeros((B, n, T), dtype=bool)
    live[:, :, 0] = True
    for b, ds in enumerate(datasets):
        X[b, :ds.n, :ds.T, :ds.d] = ds.X
        Z[b, :ds.n, :ds.d] = model.queries(ds)
        g[b, :ds.n, :ds.T] = model.scores(ds)
        live[b, :ds.n, :ds.T] = True
    return X, Z, g, live, np.array([float(ds.n) for ds in datasets])


def box_bound(ds, logit_cap: float) -> float:
    """The box |W_jk| <= bound keeping the logits of `ds` at most about logit_cap."""
    scale = float(np.abs(ds.X).max() * np.abs(model.queries(ds)).max() * ds.d) or 1.0
    return logit_cap / scale


def starts(seed: int, count: int, D: int) -> np.ndarray:
    """`count` seeded starts in the unit box (count, D): uniform, scaled from 0.1 to 0.9 of the box."""
    rng = np.random.default_rng(seed)
    return np.stack([rng.uniform(-1, 1, D) * (0.1 + 0.8 * k / max(1, count - 1)) for k in range(count)])


def search(datasets: Sequence, losses: Sequence[str], seeds: Sequence[int], count: int, logit_cap: float,
           maxiter: int, pad=PAD) -> list[dict]:
    """min rho over the box |W_jk| <= bound (`box_bound`) from `count` seeded starts per dataset
    (`starts`), minimised together (`lbfgs` on log rho in u, W = bound tanh(u)), each dataset padded
    to `padded(ds, pad)` (a fixed shape: its numbers do not depend on the other datasets). Per
    dataset: the best start's rho, ||grad L||, W, ||W||_F, whether W sits on the box's edge (within
    1e-6 of it), and the iterations of each start."""
    groups: dict[tuple, list[int]] = {}
    for k, ds in enumerate(datasets):
        groups.setdefault(padded(ds, pad), []).append(k)
    out: list = [None] * len(datasets)
    for shape, ks in groups.items():
        for k, found in zip(ks, _search([datasets[k] for k in ks], [losses[k] for k in ks], [seeds[k] for k in ks],
                                        count, logit_cap, maxiter, shape)):
            out[k] = found
    return out


def _search(datasets, losses, seeds, count, logit_cap, maxiter, shape) -> list[dict]:
    B, dp = len(datasets), shape[2]
    X, Z, g, live, n = arrays(datasets, shape)
    code = np.array([LOSS_CODES[name] for name in losses])
    bound = np.array([box_bound(ds, logit_cap) for ds in datasets])
    rep = np.repeat(np.arange(B), count)                       # problem p is dataset rep[p]
    Xp, Zp, gp, cp, bp, lv, npp = X[rep], Z[rep], g[rep], code[rep], bound[rep], live[rep], n[rep]
    u0 = np.zeros((B * count, dp, dp))
    for b, (ds, seed) in enumerate(zip(datasets, seeds)):
        u0[b * count:(b + 1) * count, :ds.d, :ds.d] = np.arctanh(starts(int(seed), count, ds.d * ds.d)).reshape(
            count, ds.d, ds.d)

    def fg(u, rows):
        th = np.tanh(u)
        W = (bp[rows, None] * th).reshape(-1, dp, dp)
        F, dW, _, _ = log_ratio(Xp[rows], Zp[rows], gp[rows], cp[rows], W, lv[rows], npp[rows])
        return F, dW.reshape(len(rows), -1) * bp[rows, None] * (1 - th * th)

    u, _, iters = lbfgs(fg, u0.reshape(B * count, -1), maxiter)
    W = (bp[:, None] * np.tanh(u)).reshape(-1, dp, dp)
    _, _, rho, gn = log_ratio(Xp, Zp, gp, cp, W, lv, npp)
    out = []
    for b, ds in enumerate(datasets):
        ps = range(b * count, (b + 1) * count)
        best = min(ps, key=lambda p: (rho[p], p))
        w = W[best, :ds.d, :ds.d]
        out.append({"rho": float(rho[best]), "grad_norm": float(gn[best]), "W": w.tolist(),
                    "norm_W": float(np.linalg.norm(w)), "on_box": bool(np.abs(w).max() >= bound[b] * (1 - 1e-6)),
                    "iterations": [int(iters[p]) for p in ps]})
    return out
