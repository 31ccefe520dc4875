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
from attnsvm.claims import Claim, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.points import gradients
from attnsvm.claims.strategies import instances, just, keyed_datasets, sampled_from, seeds
from attnsvm.svm import geometry, screens

TRUST = 1e-9
LOG10_RADII = (-2.0, 4.0)
POINTS = 48


def _no_zero_row(inst) -> bool:
    """Skip draws whose (ATT-SVM) for opt has a zero row: infeasible, so gmm_feasible fails anyway (exact,
    without the Farkas solve)."""
    return not screens.zero_row(inst.dataset, model.optimal_tokens(inst.dataset))


def sample_points(seed: int, count: int, d: int) -> np.ndarray:
    """`count` points r u: u uniform on the unit sphere of R^d, log10 r uniform on LOG10_RADII."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(count, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return u * 10.0 ** rng.uniform(*LOG10_RADII, size=(count, 1))


@batched
def descends(insts, budget) -> list[Outcome]:
    mm = [geometry.gmm(inst.dataset).p_mm for inst in insts]
    points = [sample_points(inst.params["seed"], int(inst.params["points"] * budget.horizon), inst.dataset.d)
              for inst in insts]
    outs = []
    grads = gradients(insts, points, [inst.params["loss"] for inst in insts])
    for q, P, g in zip(mm, points, grads):
        c = g.direction @ (q / np.linalg.norm(q))                        # corr(grad L(p), p_mm)
        trusted = np.abs(c) > TRUST
        detail = {"p_mm": q.tolist(), "points": len(P), "trusted": int(trusted.sum())}
        if not trusted.any():
            outs.append(Outcome(None, detail=detail, reason=f"corr(grad L, p_mm) within {TRUST} of 0 at every point"))
            continue
        worst = int(np.argmax(np.where(trusted, c, -np.inf)))
        detail.update(max_corr_grad_pmm=float(c[worst]), worst_p=P[worst].tolist(),
                      worst_log_grad_norm=float(g.log_norm[worst]), worst_selected=g.selected[worst].tolist())
        outs.append(Outcome(bool(c[worst] < 0), detail=detail))
    return outs


claim = Claim(
    name="lemma4",
    evaluations=1200,
    statement="Assumptions A and B (strictly optimal tokens), ATT-SVM(opt) feasible => <grad L(p), "
              "p_mm> < 0 for every p",
    hypotheses=hyp.of("lemma4"),
    conclusion=descends,
    instances=lambda dropped: instances(keyed_datasets(n=(1, 3), T=(2, 4), dk=(1, 3), scores="B"),
                                        loss=sampled_from(sorted(LOSSES)), seed=seeds(), points=just(POINTS)
                                        ).filter(_no_zero_row),
    proxy=f"sign of corr(grad L(p), p_mm) from the log-domain gradient direction at `points` x horizon random p, "
          f"||p|| log-uniform in [1e-2, 1e4]; points with |corr| <= {TRUST} are untrusted and skipped",
    measures=("max_corr_grad_pmm",),
    tolerances={"trust": TRUST},
)
