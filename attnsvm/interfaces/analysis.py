"""What `attnsvm analyze` and `attnsvm run` report about one dataset (JSON-ready dicts)."""

from __future__ import annotations

import math

import numpy as np

from attnsvm import dynamics
from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.dynamics.smoothness import smoothness_constant
from attnsvm.errors import UserError
from attnsvm.svm import geometry


def analyze_dataset(ds: Dataset, limit: int = 4096) -> dict:
    """Scores, optimal tokens, GMM, and every LMM (Definition 2) with neighbours and certificates."""
    sels = list(geometry.selections(ds, limit))
    lmms = [s.to_json() for s in sels if s.locally_optimal]
    exhaustive = geometry.exhaustive(ds, limit)
    return {
        "name": ds.name, "n": ds.n, "T": ds.T, "d": ds.d,
        "scores": model.scores(ds).tolist(),
        "optimal_tokens": model.optimal_tokens(ds).tolist(),
        "strict_optimality": model.strict_optimality(ds),
        "gmm": geometry.gmm(ds).to_json(),
        "lmms": lmms,
        "selections_examined": len(sels),
        "feasible_selections": sum(s.feasible for s in sels),
        "lmm_search": f"{'all' if exhaustive else 'sampled'} {len(sels)} of {ds.T}^{ds.n} selections",
        "exhaustive": exhaustive,
    }


def run_report(ds: Dataset, rule: str, steps: int, lr: float | None, p0: np.ndarray, loss: str = "logistic",
               limit: int = 4096) -> dict:
    """Run one update rule from p0 and say which LMM direction (if any) the iterate aligns with."""
    if rule not in dynamics.RULES:
        raise UserError(f"--rule must be one of {sorted(dynamics.RULES)}, got {rule!r}")
    if lr is not None and not (math.isfinite(lr) and lr > 0):
        raise UserError(f"--lr must be a positive number, got {lr}")
    if rule == "gd":
        eta = lr if lr is not None else 1.0 / smoothness_constant(ds, loss)
        update = dynamics.GD(eta)
    elif rule == "ngd":
        eta = lr if lr is not None else 0.1
        update = dynamics.NormalizedGD(eta)
    else:
        eta = float("nan")
        update = dynamics.Polyak(f_star="infimum")          # a fixed head's risk tends to L_inf > 0
    problem = dynamics.Problem.from_datasets([ds], loss)
    tr = dynamics.run(problem, update, p0, steps)
    p = tr.final[0].cpu().numpy()
    lmms = geometry.lmms(ds, limit)
    corrs = [{"alpha": list(s.alpha), "is_gmm": s.is_gmm, "corr": geometry.corr(p, s.p_mm)} for s in lmms]
    best = max(corrs, key=lambda c: c["corr"], default=None)
    aligned = best["alpha"] if best and best["corr"] > 0.99 else None
    norms = tr.p[:, 0].norm(dim=-1).cpu().numpy()
    return {
        "rule": rule, "eta": eta, "steps": steps, "loss": loss, "init": p0.tolist(), "status": tr.status[0],
        "final_p": p.tolist(), "norm": float(np.linalg.norm(p)),
        "direction": (p / np.linalg.norm(p)).tolist() if np.linalg.norm(p) > 0 else None,
        "selected_tokens": tr.selected[0].cpu().tolist(),
        "max_log_unsaturation": float(tr.log_unsat[-1, 0].max()),
        "aligned_with": aligned, "best_corr": best["corr"] if best else None, "correlations": corrs,
        "trace": {"steps": tr.steps, "norm": norms.tolist(), "loss": tr.value[:, 0].cpu().tolist(),
                  "log_grad_norm": tr.log_grad_norm[:, 0].cpu().tolist()},
    }

