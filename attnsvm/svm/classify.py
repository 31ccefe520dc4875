"""Definition 2 for a batch of finished runs (docs/statements.md#definition2): the class of the
tokens alpha each saturated run selects, for B problems with W = I (keys X, scores
gamma_it = Y_i v^T x_it), batched over the runs but for one (ATT-SVM) solve per run.

(ATT-SVM) for alpha is solved on the fast QP path (`margin.att_svm_keys`); with SVM-neighbours
T_i (its active constraints) and minimum score gap g = min_i min_{t in T_i} (gamma_{i,alpha_i} -
gamma_it): 'gmm' if alpha = opt, else 'lmm' if g > 0, else 'neither' (a neighbour with a higher
score); 'unresolved' when the QP ends in error. The neighbour sets come from the numeric active
set unless the answer hangs on it -- a constraint in the grey band ACTIVE_TOL < A_j x - 1 <=
NEAR_ACTIVE, a score difference within SCORE_TOL of 0 on a neighbour or between the two best
tokens, or more active rows than dimensions -- then `geometry.select` decides in exact arithmetic
(`certificates.certify` on the float data, which are exact rationals).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnsvm.svm.margin import att_svm_keys

NEAR_ACTIVE = 1e-6
SCORE_TOL = 1e-9


def scores(X, Y, v) -> np.ndarray:
    """gamma_it = Y_i v^T x_it, batched: X (..., n, T, d), Y (..., n), v (..., d)."""
    return Y[..., None] * np.einsum("...ntd,...d->...nt", X, v)


def classify_runs(X, Y, v, P, alpha, saturated: Sequence[bool]) -> list[dict | None]:
    """Per run b of X (B,n,T,d), Y (B,n), v (B,d), final P (B,d) and selected tokens alpha (B,n):
    None unless saturated[b]; else {'cls': 'unresolved', 'why'} or {'cls', 'gap', 'certified'
    (None on the numeric path, else whether the exact path certified), 'n_active', 'corr'
    (cosine of P[b] with p_mm), 'pmm_norm'}."""
    B, n, T, d = X.shape
    alpha = np.asarray(alpha)
    gam = scores(X, Y, v)                                              # (B,n,T)
    opt = gam.argmax(-1)
    top2 = np.sort(gam, -1)[..., -2:]
    norms = np.array([np.linalg.norm(x) for x in P])                   # (per vector: np.dot's rounding)
    out: list[dict | None] = [None] * B
    solved = {}
    for b in np.flatnonzero(np.asarray(saturated, dtype=bool)).tolist():
        res = att_svm_keys(X[b], alpha[b])
        if res.ok:
            solved[b] = res
        else:
            out[b] = {"cls": "unresolved", "why": f"saturated but ATT-SVM {res.status}: {res.message}"}
    if not solved:
        return out
    idx = np.fromiter(solved, dtype=np.intp)
    pmm = np.stack([solved[b].x for b in idx])                         # (S,d)
    other = np.arange(T)[None, None, :] != alpha[idx][..., None]       # (S,n,T): the rows (i, t), in order
    Ka = np.take_along_axis(X[idx], alpha[idx][..., None, None], 2)    # (S,n,1,d): k_{i,alpha_i}
    slack = np.einsum("sntd,sd->snt", Ka - X[idx], pmm) - 1.0          # (k_alpha - k_t)^T p_mm - 1
    diffs = np.take_along_axis(gam[idx], alpha[idx][..., None], 2) - gam[idx]
    active = np.zeros(other.shape, bool)
    for s_, b in enumerate(idx):
        rows = np.argwhere(other[s_])[list(solved[b].active)]          # active row j -> its (i, t)
        active[s_, rows[:, 0], rows[:, 1]] = True
    scale = np.maximum(1.0, np.abs(pmm).max(-1))
    grey = (other & ~active & (slack <= NEAR_ACTIVE * scale[:, None, None])).any((1, 2))
    tied = ((active & (np.abs(diffs) <= SCORE_TOL)).any((1, 2))
            | (top2[idx, :, 1] - top2[idx, :, 0] <= SCORE_TOL).any(-1))
    n_active = active.sum((1, 2))
    gaps = np.where(active, diffs, np.inf).min((1, 2))
    is_opt = (alpha[idx] == opt[idx]).all(-1)
    pmm_norm = np.array([np.linalg.norm(x) for x in pmm])
    den = norms[idx] * pmm_norm
    for s_, b in enumerate(idx):
        if grey[s_] or tied[s_] or n_active[s_] > d:     # rare: the exact path (sympy, and torch through the model)
            from attnsvm.attention.data import Dataset
            from attnsvm.svm import geometry

            sel = geometry.select(Dataset.from_arrays(X[b], Y[b], v[b]), alpha[b])
            gap, is_gmm, certified = sel.score_gap, sel.is_gmm, sel.certified
            count = sum(len(t) for t in sel.neighbors)
        else:
            gap, is_gmm, certified, count = float(gaps[s_]), bool(is_opt[s_]), None, int(n_active[s_])
        out[b] = {"cls": "gmm" if is_gmm else "lmm" if gap > 0 else "neither", "gap": gap, "certified": certified,
                  "n_active": count, "corr": float(P[b] @ pmm[s_] / den[s_]) if den[s_] > 0 else 0.0,
                  "pmm_norm": float(pmm_norm[s_])}
    return out
