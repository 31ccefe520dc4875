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

from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Outcome, batched, points
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import instances, just, keyed_datasets, sampled_from, seeds
from attnsvm.svm import geometry

PI = 0.05
RUNGS = 4
TAIL = 2              # 'whenever ||p|| >= R_pi': the top TAIL rungs must pass
BANDS = (1.0, 2.0, 4.0, 8.0)
CONES = (0.3, 0.03, 0.003)
TRUST = 1e-9
POINTS = 16


def band_points(q, radii, rng, count) -> np.ndarray:
    """For each radius R of `radii` in turn, count//2 uniform directions and the rest in cones of half-angles
    CONES (in turn) around q, at norms in [R, 2R]: (len(radii) count, d), radius by radius."""
    half, rest = count // 2, count - count // 2
    radii = np.asarray(radii, dtype=float)
    U = points.shell(len(q), np.repeat(radii, half), rng, len(radii) * half).reshape(len(radii), half, len(q))
    mus = np.tile([CONES[k % len(CONES)] for k in range(rest)], len(radii))
    C = points.cone(q, mus, np.repeat(radii, rest), rng, len(radii) * rest).reshape(len(radii), rest, len(q))
    return np.concatenate([U, C], axis=1).reshape(-1, len(q))


def slacks(direction: np.ndarray, q, P) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(slack, c_p, c_mm) per point: c = <-grad L, x^> from the unit gradient direction."""
    c_mm = -(direction @ (q / np.linalg.norm(q)))
    c_p = -np.einsum("bd,bd->b", direction, P / np.linalg.norm(P, axis=1, keepdims=True))
    pos = c_mm > TRUST
    s = np.where(pos, 1 + PI - c_p / np.where(pos, c_mm, 1.0), (1 + PI) * c_mm - c_p)
    trusted = (np.abs(c_mm) > TRUST) | (np.abs(c_p) > TRUST)
    return np.where(trusted, s, np.inf), c_p, c_mm


def ladder(inst, horizon: float) -> tuple[np.ndarray, list[float], int]:
    """The instance's points, rung by rung (each rung: `points` x horizon per band), its radii and the points per
    rung."""
    ds, P = inst.dataset, inst.params
    sel = geometry.gmm(ds)
    q = sel.p_mm
    nq = float(np.linalg.norm(q))
    scale = nq * max(1.0, float(np.linalg.norm(sel.result.problem.A, axis=1).max()) * nq)
    rng = np.random.default_rng(P["seed"])
    count = int(P["points"] * horizon)
    radii = [2.0 ** (k + 2) * scale for k in range(RUNGS)]
    X = band_points(q, [R * b for R in radii for b in BANDS], rng, count)
    return X, radii, count * len(BANDS)


def judge(q, X, direction, radii, per_rung) -> Outcome:
    nq = float(np.linalg.norm(q))
    s, c_p, c_mm = slacks(direction, q, X)
    rungs = []
    for k, R in enumerate(radii):
        part = slice(k * per_rung, (k + 1) * per_rung)
        w = k * per_rung + int(np.argmin(s[part]))
        rungs.append({"R_over_norm_p_mm": R / nq, "min_slack": float(s[w]), "worst_p": X[w].tolist(),
                      "worst_c_p": float(c_p[w]), "worst_c_mm": float(c_mm[w]),
                      "trusted": int(np.isfinite(s[part]).sum())})
    tail = rungs[-TAIL:]
    detail = {"p_mm": q.tolist(), "rungs": rungs}
    if not all(r["trusted"] for r in tail):
        return Outcome(None, detail=detail,
                       reason=f"both correlations within {TRUST} of 0 at every point of a top rung")
    margin = min(r["min_slack"] for r in tail)
    detail["min_slack"] = margin
    if margin >= 0:
        return Outcome(True, detail=detail, margin=min(margin, 1.0))
    if tail[-1]["min_slack"] < 0:
        return Outcome(False, detail=detail, margin=margin)
    return Outcome(None, detail=detail, reason="the top rung passes but the one below fails: R not yet large enough")


@batched
def correlation_condition(insts, budget) -> list[Outcome]:
    ladders = [ladder(inst, budget.horizon) for inst in insts]
    grads = points.gradients(insts, [X for X, _, _ in ladders], [inst.params["loss"] for inst in insts])
    return [judge(geometry.gmm(inst.dataset).p_mm, X, g.direction, radii, per_rung)
            for inst, (X, radii, per_rung), g in zip(insts, ladders, grads)]


claim = Claim(
    name="lemma5",
    evaluations=1200,
    statement="Assumptions A and B, n = 1, p_mm = GMM: for every pi > 0 there is R_pi with "
              "<grad L(p), p/||p||> >= (1 + pi) <grad L(p), p_mm/||p_mm||> whenever ||p|| >= R_pi",
    hypotheses=hyp.of("lemma5"),
    conclusion=correlation_condition,
    instances=lambda dropped: instances(keyed_datasets(n=1, T=(2, 4), dk=2, scores="B", labels="positive"),
                                        loss=sampled_from(sorted(LOSSES)), seed=seeds(), points=just(POINTS)),
    proxy=f"pi = {PI}; ladder of {RUNGS} radii R = 2^(k+2) ||p_mm|| max(1, D ||p_mm||) (D the longest ATT-SVM row); "
          f"per rung `points` x horizon seeded points per band of norms R x {list(BANDS)} (half uniform directions, "
          f"half in cones of mu {list(CONES)} around p_mm); both correlations from the log-domain gradient direction; "
          f"holds if the top {TAIL} rungs have no point with rho > 1 + pi, fails if the top rung has one",
    tolerance=f"pi = {PI}",
    measures=("min_slack",),
    tolerances={"pi": PI, "trust": TRUST},
)
