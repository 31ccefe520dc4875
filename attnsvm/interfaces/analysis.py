"""What `attnsvm analyze` and `attnsvm run` report about one dataset (JSON-ready dicts)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from attnsvm import dynamics
from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.dynamics.smoothness import smoothness_constant
from attnsvm.errors import UserError
from attnsvm.svm import geometry


def analyze_dataset(ds: Dataset, limit: int = 4096, seconds: float | None = None, screen: bool | None = None,
                    progress: Callable[[str, int, int | None], None] | None = None) -> dict:
    """Scores, optimal tokens, GMM, and every LMM (Definition 2) with neighbours and certificates,
    and whether the LMM set is exact (`geometry.Search`). The LMM search covers [T]^n when
    T^n <= limit, else samples `limit` selections, and stops after `seconds`. Refuses (UserError)
    where float64 cannot represent an answer at the data's scale rather than answer differently.
    progress(description, done, total) reports long work."""
    tell = progress or (lambda *_: None)
    tell("solving and certifying the GMM", 0, None)
    g = geometry.gmm(ds)
    _representable(g)
    tell("searching LMMs", 0, None)
    found = geometry.search(ds, limit, seconds=seconds, screen=screen, known=[g],
                            progress=lambda done, total: tell("searching LMMs", done, total))
    sels = found.selections
    for s in sels:
        _representable(s)
    lmms = found.lmms
    return {
        "name": ds.name, "n": ds.n, "T": ds.T, "d": ds.d,
        "scores": [[_json_float(q) for q in row] for row in model.exact_scores(ds)],
        "optimal_tokens": model.optimal_tokens(ds).tolist(),
        "strict_optimality": model.strict_optimality(ds),
        "gmm": g.to_json(),
        "lmms": [s.to_json() for s in lmms],
        "lmm_set_exact": found.exact,
        "lmm_search": found.summary(),
        "search": {"space": found.space, "selections_examined": len(sels), "exhaustive": found.exhaustive,
                   "sampled": found.sampled, "decided_exactly": found.count("exact"),
                   "screened_numerically": found.count("numeric"), "undecided": found.count("uncertain"),
                   "stopped_by": found.stopped or None, "seconds": round(found.seconds, 3),
                   "lmm_set_exact": found.exact, "why_not_exact": found.why_not_exact()},
        "selections_examined": len(sels),
        "feasible_selections": sum(s.feasible for s in sels if s.decision != "uncertain"),   # undecided: neither
        "exhaustive": found.exhaustive,
    }


def _representable(s: geometry.Selection) -> None:
    """Refuse in one line where the solver could not represent the answer at this scale."""
    if s.result.status == "error" and "representable" in s.result.message:
        raise UserError(f"alpha={list(s.alpha)}: {s.result.message}; rescale the data")


def _json_float(q) -> float | None:
    """A JSON-safe float of an exact value (None beyond float64's range)."""
    try:
        x = float(q)
    except OverflowError:
        return None
    return x if math.isfinite(x) else None


def run_report(ds: Dataset, rule: str, steps: int, lr: float | None, p0: np.ndarray, loss: str = "logistic",
               limit: int = 4096, seconds: float | None = 30.0) -> dict:
    """Run one update rule from p0 and say which LMM direction (if any) the iterate aligns with,
    among the LMMs a search of at most `limit` selections and `seconds` finds (`lmm_search`
    says whether that set is exact)."""
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
    found = geometry.search(ds, limit, seconds=seconds)
    lmms = found.lmms
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
        "lmm_search": found.summary(), "lmm_set_exact": found.exact,
        "trace": {"steps": tr.steps, "norm": norms.tolist(), "loss": tr.value[:, 0].cpu().tolist(),
                  "log_grad_norm": tr.log_grad_norm[:, 0].cpu().tolist()},
    }

