"""Lemma 4: under Assumptions A and B, with (ATT-SVM) for the optimal tokens feasible,
<grad L(p), p_mm> < 0 at every p.

Each instance is a dataset in the paper's Figure 1 construction (integer keys, scores chosen
freely; Assumption B by construction unless it is dropped), a loss of Assumption A, and
`points` seeded random p = r u (u uniform on the sphere, log10 r uniform in [-2, 4]: from
near the origin to deep saturation). The sign is read from the log-domain gradient direction
(`attnsvm.attention.gradients`), which survives when ||grad L|| underflows: at r = 1e4 the gradient
norm is far below float64's range but its direction is exact. A point whose
corr(grad L, p_mm) lies within `TRUST` of 0 is untrusted and skipped."""

import numpy as np

from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import instances, just, keyed_datasets, sampled_from, seeds
from attnsvm.dynamics import Problem
from attnsvm.svm import geometry

TRUST = 1e-9
LOG10_RADII = (-2.0, 4.0)


def sample_points(seed: int, count: int, d: int) -> np.ndarray:
    """`count` points r u: u uniform on the unit sphere of R^d, log10 r uniform on LOG10_RADII."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(count, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return u * 10.0 ** rng.uniform(*LOG10_RADII, size=(count, 1))


def descends(inst, budget) -> Outcome:
    ds, P = inst.dataset, inst.params
    sel = geometry.gmm(ds)
    q = sel.p_mm / np.linalg.norm(sel.p_mm)
    points = sample_points(P["seed"], int(P["points"] * budget.horizon), ds.d)
    g = Problem.from_datasets([ds] * len(points), P["loss"]).grad(model.t(points))
    c = (g.direction.cpu().numpy() @ q)                              # corr(grad L(p), p_mm)
    trusted = np.abs(c) > TRUST
    detail = {"p_mm": sel.p_mm.tolist(), "points": len(points), "trusted": int(trusted.sum())}
    if not trusted.any():
        return Outcome(None, detail=detail, reason=f"corr(grad L, p_mm) within {TRUST} of 0 at every point")
    worst = int(np.argmax(np.where(trusted, c, -np.inf)))
    detail.update(max_corr_grad_pmm=float(c[worst]), worst_p=points[worst].tolist(),
                  worst_log_grad_norm=float(g.log_norm[worst]), worst_selected=g.selected[worst].tolist())
    return Outcome(bool(c[worst] < 0), detail=detail)


def _instances(dropped):
    scores = "any" if "assumption_B" in dropped else "B"
    T = (3, 4) if "assumption_B" in dropped else (2, 4)
    return instances(keyed_datasets(n=(1, 3), T=T, dk=(1, 3), scores=scores),
                     loss=sampled_from(sorted(LOSSES)), seed=seeds(), points=just(48))


claim = Claim(
    name="lemma4",
    evaluations=630,
    statement="Assumptions A and B (strictly optimal tokens), ATT-SVM(opt) feasible => <grad L(p), p_mm> < 0 for every p",
    hypotheses=(
        hyp.get("loss.assumption_A"),
        hyp.get("scores.strict_optimality"),
        hyp.get("scores.assumption_B"),
        hyp.get("att_svm.gmm_feasible"),
    ),
    conclusion=descends,
    instances=_instances,
    proxy=f"sign of corr(grad L(p), p_mm) from the log-domain gradient direction at `points` x horizon random p, "
          f"||p|| log-uniform in [1e-2, 1e4]; points with |corr| <= {TRUST} are untrusted and skipped",
    measures=("max_corr_grad_pmm",),
)
