"""Lemma 5 (gradient correlation conditions, Appendix B.1): under Assumptions A and B with one
input (n = 1) and p_mm = p_mm(opt) (the GMM): for every pi > 0 there is R_pi such that every p with
||p|| >= R_pi has

    <grad L(p), p/||p||> >= (1 + pi) <grad L(p), p_mm/||p_mm||>,

i.e. -grad L is at most (1 + pi) times as aligned with p as with p_mm (reconstruction of the lost
formula from the proof and from its use in Theorem 2's (51); "as R -> oo we eventually get pi = 0").

Proxy (R_pi is not given; pi = PI): a ladder of radii R = 2^(k+2) ||p_mm|| max(1, D ||p_mm||), k = 0..3,
D the longest (ATT-SVM) row (Scenario 1's rho - 1 is of order D ||p_mm|| times the angle, and the angles
where the softmax has not yet concentrated shrink like 1/R); on each rung,
`points` x horizon seeded points per band of norms R, 2R, 4R, 8R, half uniform in direction and
half in cones around p_mm (mu = 0.3, 0.03, 0.003: Scenario 1 of the proof, where the two
correlations nearly agree). Both correlations are read from the log-domain gradient direction;
a point where both are within TRUST of 0 is skipped. Slack per point: 1 + pi - rho,
rho = <-grad L, p^>/<-grad L, p_mm^> when the latter is positive, else (1 + pi) c_mm - c_p. As the
lemma is about every ||p|| >= R_pi, it holds when every point of the top TAIL = 2 rungs has slack >= 0
and fails when the top rung has a point below (a lower rung passing alone proves nothing)."""

import numpy as np

from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import instances, just, keyed_datasets, sampled_from, seeds
from attnsvm.dynamics import Problem
from attnsvm.svm import geometry

PI = 0.05
RUNGS = 4
TAIL = 2              # 'whenever ||p|| >= R_pi': the top TAIL rungs must pass
BANDS = (1.0, 2.0, 4.0, 8.0)
CONES = (0.3, 0.03, 0.003)
TRUST = 1e-9


def band_points(q, R, rng, count) -> np.ndarray:
    """count//2 uniform directions and the rest in cones of half-angles CONES around q, at norm in [R, 2R]."""
    u = rng.normal(size=(count // 2, len(q)))
    u = u / np.linalg.norm(u, axis=1, keepdims=True) * R * (1 + rng.uniform(size=(count // 2, 1)))
    rest = count - count // 2
    cones = [geometry.sample_cone(q, CONES[k % len(CONES)], R, rng, size=1)[0] for k in range(rest)]
    return np.concatenate([u, np.array(cones).reshape(rest, len(q))])


def slacks(ds, loss, q, P) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(slack, c_p, c_mm) per point: c = <-grad L, x^> from the unit gradient direction."""
    g = Problem.from_datasets([ds] * len(P), loss).grad(model.t(P)).direction.cpu().numpy()
    c_mm = -(g @ (q / np.linalg.norm(q)))
    c_p = -np.einsum("bd,bd->b", g, P / np.linalg.norm(P, axis=1, keepdims=True))
    pos = c_mm > TRUST
    s = np.where(pos, 1 + PI - c_p / np.where(pos, c_mm, 1.0), (1 + PI) * c_mm - c_p)
    trusted = (np.abs(c_mm) > TRUST) | (np.abs(c_p) > TRUST)
    return np.where(trusted, s, np.inf), c_p, c_mm


def correlation_condition(inst, budget) -> Outcome:
    ds, P = inst.dataset, inst.params
    q = geometry.gmm(ds).p_mm
    nq = float(np.linalg.norm(q))
    scale = nq * max(1.0, float(np.linalg.norm(geometry.gmm(ds).result.problem.A, axis=1).max()) * nq)
    rng = np.random.default_rng(P["seed"])
    count = int(P["points"] * budget.horizon)
    rungs = []
    for k in range(RUNGS):
        R = 2.0 ** (k + 2) * scale
        X = np.concatenate([band_points(q, R * b, rng, count) for b in BANDS])
        s, c_p, c_mm = slacks(ds, P["loss"], q, X)
        w = int(np.argmin(s))
        rungs.append({"R_over_norm_p_mm": R / nq, "min_slack": float(s[w]), "worst_p": X[w].tolist(),
                      "worst_c_p": float(c_p[w]), "worst_c_mm": float(c_mm[w]), "trusted": int(np.isfinite(s).sum())})
    tail = rungs[-TAIL:]
    detail = {"p_mm": q.tolist(), "rungs": rungs}
    if not all(r["trusted"] for r in tail):
        return Outcome(None, detail=detail, reason=f"both correlations within {TRUST} of 0 at every point of a top rung")
    margin = min(r["min_slack"] for r in tail)
    detail["min_slack"] = margin
    if margin >= 0:
        return Outcome(True, detail=detail, margin=min(margin, 1.0))
    if tail[-1]["min_slack"] < 0:
        return Outcome(False, detail=detail, margin=margin)
    return Outcome(None, detail=detail, reason="the top rung passes but the one below fails: R not yet large enough")


def _instances(dropped):
    n = (1, 2) if "single_input" in dropped else 1
    scores = "any" if "assumption_B" in dropped else "B"
    T = (3, 4) if "assumption_B" in dropped else (2, 4)
    return instances(keyed_datasets(n=n, T=T, dk=2, scores=scores, labels="positive"),
                     loss=sampled_from(sorted(LOSSES)), seed=seeds(), points=just(16))


claim = Claim(
    name="lemma5",
    evaluations=280,
    statement="Assumptions A and B, n = 1, p_mm = GMM: for every pi > 0 there is R_pi with "
              "<grad L(p), p/||p||> >= (1 + pi) <grad L(p), p_mm/||p_mm||> whenever ||p|| >= R_pi",
    hypotheses=(hyp.get("loss.assumption_A"), hyp.get("scores.strict_optimality"), hyp.get("scores.assumption_B"), hyp.get("att_svm.gmm_feasible"), hyp.get("data.single_input")),
    conclusion=correlation_condition,
    instances=_instances,
    proxy=f"pi = {PI}; ladder of {RUNGS} radii R = 2^(k+2) ||p_mm|| max(1, D ||p_mm||) (D the longest ATT-SVM row); per rung `points` x horizon seeded points per band "
          f"of norms R x {list(BANDS)} (half uniform directions, half in cones of mu {list(CONES)} around p_mm); both "
          f"correlations from the log-domain gradient direction; holds if the top {TAIL} rungs have no point with "
          f"rho > 1 + pi, fails if the top rung has one",
    tolerance=f"pi = {PI}",
    measures=("min_slack",),
)
