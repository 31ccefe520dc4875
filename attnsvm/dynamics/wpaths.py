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
"""

from __future__ import annotations

import functools

import numpy as np

from attnsvm.attention import model
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
