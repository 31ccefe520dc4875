"""Theorem 4 (only LMM directions are limits): with distinct scores and keys in general
position, for a unit q that is not an LMM direction, the path restricted to a cone around q,

    p(R) = argmin L(p)  s.t.  p in cone_mu(q),  R0 <= ||p|| <= R          (paper, eq. (9))

does not converge to q: either ||p(R)|| stays bounded or lim p(R)/R != q.

p(R) is computed by `attnsvm.dynamics.regpath.path` with the cone and the norm lower bound, on the grid
R_k = R0 2^k, k = 1..GRID sliding up one step per doubling of the horizon (`paths.grid`), from
q, points on the cone's boundary, seeded points inside it and every LMM direction inside it;
the instances of a batch are solved together, each with its own cone (`paths.linear_paths`). Half the q drawn are the
exact p_mm of a feasible selection that is not locally optimal (an SVM direction that Definition
2 rejects: the case the theorem is about), the rest random integer directions.

Limit loss (a proof, read first): where every input has one strictly top key along q (exact),
a path with p(R)/R -> q and ||p(R)|| -> oo has L(p(R)) -> L_q = (1/n) sum_i loss(gamma_{i,alpha_i(q)}),
alpha_i(q) = argmax_t k_it^T q; and L(p(R)) <= L(x) for every feasible x with ||x|| <= R (the
regions nest). So one feasible point x of the cone (any solve's point, converged or not) with
L(x) < L_q - LOSS_TOL (1 + |L_q|) proves the conclusion for this q.

Proxy otherwise (named): gap_k = 1 - corr(p(R_k), q); delta = half the smaller of mu and the distance
1 - corr(q', q) to the nearest LMM direction q' != q inside the cone. The conclusion holds when, at the
largest radius, either ||p(R)|| < R (1 - 1e-6) and it has stopped growing (bounded branch), or the
gap is >= GAP_FLOOR and did not decrease by PLATEAU (relative) over the last three radii (the path
settled away from q, at whatever distance). It fails when the gap is < delta, non-increasing and still
converging to 0 over the last three radii (halved over them, or at float resolution FLOOR: a gap
that decelerates toward a positive level is a path settling near q, not onto it), and still is at
4x the radii (the engine's `confirm`). A last path point strictly inside the ball whose norm still
grows is undecided (INTERIOR): the solver stops where the risk is flat at float64's resolution,
and such a point says nothing about the minimiser. Otherwise the instance is re-evaluated at 2
and 4x the radii (`extend`), then INCONCLUSIVE, as is any instance whose solves did not settle. The hypotheses are
loss.assumption_A, scores.distinct_scores, directional.general_position and regpath.q_not_lmm."""

import itertools
from fractions import Fraction

import numpy as np
import torch

from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES, get_loss
from attnsvm.claims import Claim, Instance, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.hypotheses.regpath import lmm_directions, parallel
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import gaussian_datasets
from attnsvm.dynamics import paths
from attnsvm.dynamics.trends import FLOOR
from attnsvm.svm import geometry

PLATEAU = 1e-3
LAST = 3
GRID = 5
ITERS = 15          # solver iterations per radius at horizon 1 (scaled with the horizon)
BOUNDED = 1e-6      # ||p(R)|| below R (1 - BOUNDED) and not growing: the bounded branch
GAP_FLOOR = 1e-6    # a plateau of the gap counts as a limit away from q only above this (the solves' resolution)
FALL = 0.5          # a failing gap must still fall: last <= FALL * first over the window (or <= FLOOR)
LOSS_TOL = 1e-9     # relative slack of the limit-loss proof (float64 risks, feasibility up to rounding)
UNDECIDED = "undecided at the largest radius: the gap to q is still moving"
INTERIOR = ("the solves stopped inside the ball with the norm still growing: a flat point at float64's "
            "resolution, not a minimiser (an interior minimiser would be the same at every larger radius)")


def direction(inst) -> np.ndarray:
    return np.array([float(Fraction(x)) for x in inst.params["q"]])


def cone_starts(q, mu, lmm_dirs, rng, count: int = 3) -> np.ndarray:
    """q, `count` points on the cone's boundary, `count` inside, and the LMM directions inside."""
    qh = q / np.linalg.norm(q)
    c = 1 - mu
    out = [qh]
    for _ in range(count):
        w = rng.normal(size=q.shape)
        w -= (w @ qh) * qh
        out.append(c * qh + np.sqrt(1 - c * c) * w / np.linalg.norm(w))
    out += list(geometry.sample_cone(qh, mu, 1.0, rng, size=count))
    out += [x / np.linalg.norm(x) for x in lmm_dirs if geometry.corr(x, qh) >= c]
    return np.array(out)


def limit_loss(ds, qx, loss) -> float | None:
    """L_q = (1/n) sum_i loss(gamma_{i,alpha_i(q)}) with alpha_i(q) the strictly top key along q
    (exact rationals); None when some input has tied top keys along q (the limit of L along q is
    then not one selection's)."""
    K, gam = model.exact_keys(ds), model.exact_scores(ds)
    picked = []
    for i in range(ds.n):
        logits = [sum(k * x for k, x in zip(K[i][t], qx)) for t in range(ds.T)]
        top = max(logits)
        if logits.count(top) > 1:
            return None
        picked.append(float(gam[i][logits.index(top)]))
    return float(get_loss(loss).value(torch.tensor(picked, dtype=torch.float64)).mean())


def least_feasible_loss(ds, p: np.ndarray, loss, q, mu, R0) -> float | None:
    """The least L(x) over the rows x of p that lie in cone_mu(q) with ||x|| >= R0 (up to
    rounding), or None if none does."""
    ok = [x for x in p if np.all(np.isfinite(x)) and np.linalg.norm(x) >= R0 * (1 - 1e-12)
          and geometry.corr(x, q) >= (1 - mu) - 1e-12]
    if not ok:
        return None
    return min(float(model.risk(ds, torch.tensor(x, dtype=torch.float64), loss)) for x in ok)


def decide(solved: paths.Solved, radii, q, delta, limit: float | None = None, least: float | None = None) -> Outcome:
    """The proxy on one instance's restricted path (module docstring); `limit`: L_q, `least`: the
    least loss of a feasible point of the path."""
    gaps = paths.gaps_to(solved.p, q)
    norms = np.linalg.norm(solved.p, axis=-1).tolist()
    ok = solved.settled()
    tail = slice(len(gaps) - LAST, len(gaps))
    detail = {"radii": radii.tolist(), "gap": gaps, "norm_over_R": [float(n / r) for n, r in zip(norms, radii)],
              "status": solved.status, "residual": solved.residual.tolist(), "final_direction": solved.unit(),
              "limit_loss_at_q": limit, "least_path_loss": least}
    if limit is not None and least is not None and least < limit - LOSS_TOL * (1 + abs(limit)):
        return Outcome(True, detail={**detail, "branch": "loss below the limit at q"},
                       margin=(limit - least) / (1 + abs(limit)))
    if not all(ok[tail]):
        return Outcome(None, detail=detail, reason="restricted path solve did not settle on the last radii")
    last, n = gaps[tail], norms[tail]
    if n[-1] < radii[-1] * (1 - BOUNDED) and n[-1] <= n[-2] * (1 + BOUNDED):
        return Outcome(True, detail={**detail, "branch": "bounded"})
    if n[-1] < radii[-1] * (1 - BOUNDED):
        return Outcome(None, detail=detail, reason=INTERIOR)
    if last[-1] >= GAP_FLOOR and paths.plateau(last, 0.0, PLATEAU):
        return Outcome(True, detail={**detail, "branch": "direction away from q"}, margin=last[-1])
    if last[-1] < delta and paths.monotone(last) and (last[-1] <= FLOOR or last[-1] <= FALL * last[0]):
        return Outcome(False, detail={**detail, "branch": "approaches q"}, margin=last[-1] - delta)
    return Outcome(None, detail=detail, reason=UNDECIDED)


@batched
def restricted_path(insts, budget) -> list[Outcome]:
    mult = 2.0 * paths.grid(GRID, budget)
    rows = []
    for inst in insts:
        ds, P = inst.dataset, inst.params
        q, mu, R0 = direction(inst), float(P["mu"]), float(P["R0"])
        qx = [Fraction(x) for x in P["q"]]
        lmms = lmm_directions(ds)
        others = [s.p_mm for s in lmms if not parallel(qx, s.certificate.x)]
        inside = [1 - geometry.corr(x, q) for x in others if geometry.corr(x, q) >= 1 - mu]
        delta = min([mu] + inside) / 2
        starts = cone_starts(q, mu, [s.p_mm for s in lmms], np.random.default_rng(P["seed"]))
        rows.append((q, mu, R0, delta, starts, len(inside) + (len(lmms) - len(others)), limit_loss(ds, qx, P["loss"])))
    solved = paths.linear_paths([inst.dataset for inst in insts], [inst.params["loss"] for inst in insts],
                                [r[2] * mult for r in rows], [r[4] for r in rows], int(ITERS * budget.horizon),
                                cones=[(r[0], r[1]) for r in rows], min_radii=[r[2] for r in rows])
    outs = []
    for inst, s, (q, mu, R0, delta, _, in_cone, limit) in zip(insts, solved, rows):
        least = least_feasible_loss(inst.dataset, s.p, inst.params["loss"], q, mu, R0) if limit is not None else None
        out = decide(s, R0 * mult, q, delta, limit, least)
        out.detail.update(q=q.tolist(), mu=mu, R0=R0, delta=delta, lmm_directions_in_cone=in_cone)
        outs.append(out)
    return outs


def svm_non_lmm_directions(ds) -> list:
    """The exact p_mm of every feasible selection that is not locally optimal: SVM directions
    that are not LMM directions, the hardest q for the theorem (the path restricted around them
    has a max-margin direction to head for)."""
    found = []
    for alpha in itertools.product(range(ds.T), repeat=ds.n):
        s = geometry.select(ds, alpha)
        if s.feasible and s.certified and not s.locally_optimal:
            found.append(s)
    return found


def q_instances(datasets, pick) -> Space:
    """Instances: a dataset, q = pick(chooser, dataset) (exact rational strings), mu, R0 = 1, a
    loss of Assumption A and a seed."""
    def generate(c) -> Instance:
        ds = datasets.generate(c) if isinstance(datasets, Space) else datasets(c)
        q = pick(c, ds)
        return Instance(ds, {"q": q, "mu": c.sampled_from([0.05, 0.02]), "R0": 1.0,
                             "loss": c.sampled_from(sorted(LOSSES)), "seed": c.integer(0, 2**16, "seed")})

    return Space(generate, getattr(datasets, "description", "hand datasets") + "; q, mu in {0.05, 0.02}, R0 = 1")


def svm_or_random_q(c, ds) -> list:
    """q of two kinds: 'svm': the exact p_mm of a feasible selection that is not locally optimal
    (the hard case); 'random': small integer entries (generically not an LMM direction). Datasets
    without a non-LMM SVM direction fall back to a random q."""
    kind = c.sampled_from(["svm", "random"])
    hard = svm_non_lmm_directions(ds) if kind == "svm" else []
    if hard:
        return [str(x) for x in hard[c.integer(0, len(hard) - 1, "index")].certificate.x]
    q = [str(c.integer(-4, 4, "entry")) for _ in range(ds.d)]
    if not any(int(x) for x in q):
        c.reject()
    return q


claim = Claim(
    name="theorem4",
    evaluations=1000,
    statement="distinct scores, keys in general position, q not an LMM direction => the path restricted to "
              "cone_mu(q) with ||p|| >= R0 does not converge to q (bounded, or lim p(R)/R != q)",
    hypotheses=hyp.of("theorem4"),
    conclusion=restricted_path,
    instances=lambda dropped: q_instances(gaussian_datasets(n=(1, 2), T=(2, 3), d=2), svm_or_random_q),
    extend=(2, 4),
    confirm=(4,),
    proxy=f"p(R) by regpath in cone_mu(q) with ||p|| >= R0 on R = R0 2^k, k = 1..{GRID} (sliding up one step per "
          "horizon doubling; undecided: up to 2 more); holds (proved) if a feasible p(R) has L(p(R)) below L_q, the "
          "limit of L along q (q's strictly top tokens); else gap = 1 - corr(p(R), q): holds if bounded (||p(R)|| < R "
          f"and not growing) or gap >= {GAP_FLOOR:g} and not decreasing by {PLATEAU} over the last {LAST} radii; fails "
          f"if gap < delta, non-increasing and still falling there (last <= {FALL} first, or <= {FLOOR:g}), still so "
          "at 4x the radii; delta = min(mu, distance to the nearest other LMM direction in the cone)/2",
    tolerances={"plateau": PLATEAU, "window": LAST, "bounded": BOUNDED, "iterations": ITERS,
                "residual": paths.RESIDUAL, "gap_floor": GAP_FLOOR, "fall": FALL, "floor": FLOOR,
                "loss": LOSS_TOL},
)
