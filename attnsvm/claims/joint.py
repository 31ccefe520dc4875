"""Paper A's Section 3 (joint head and attention: Theorems 5, 6, Lemma 13) for claims: instance
spaces (the paper's Figure 3 data, `svm.joint.figure3`, and its perturbations, small integer
datasets whose inputs share a zero token, instances carrying alpha = the pure selection of
largest label margin) and the joint-path proxy, batched (`joint_gaps`).

The joint path (v, p)(r, R) = argmin L(v, p) s.t. ||v|| <= r, ||p|| <= R is solved on the ray
r = kappa R of each instance (kappa = params['r_over_R']), R = s 2^k on `paths.grid` (s =
max(||v_mm||, ||target||), capped so that the label margin r/||v_mm|| stays below `max_margin`
up to `reach` times the base grid's largest radius, the longest horizon the result uses:
e^{-r/||v_mm||} must stay in float64's range), from the pairs (v_mm(beta), p_mm(beta)) of every
jointly feasible pure selection beta, (v_mm, each target or extra p) and two seeded random
pairs, plus warm starts along the grid; the instances of a batch are solved together
(`dynamics.paths.joint_paths`), each as if alone.

Proxy (`JointProxy`, each result with its own tolerances): gap_v = 1 - corr(v, v_mm), gap_p =
1 - corr(p, target). Holds when both gaps at the largest radius are <= tol, non-increasing over
the last `last` radii and falling like a power of R (`paths.approaches`); fails when either
stays above tol without decreasing by `plateau` (relative, `paths.plateau`); otherwise
undecided, as is any instance whose solves did not settle on the last radii."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.claims.claim import Instance, Outcome
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import just, seeds
from attnsvm.dynamics import paths
from attnsvm.svm import joint
from attnsvm.svm.joint import FIGURE3, best_selection


def figure3_like(perturb: bool = True) -> Space:
    """Figure 3 with its three non-zero tokens moved by small half-integer steps (the zero token
    shared by every input stays): Assumption C holds on many, fails on others."""
    def generate(c):
        X = [[list(map(Fraction, tok)) for tok in inp] for inp in FIGURE3]
        if perturb:
            for i in range(3):
                X[i][1] = [X[i][1][k] + Fraction(c.integer(-2, 2, "entry"), 2) for k in range(2)]
        return Dataset.from_arrays([[[str(a) for a in tok] for tok in inp] for inp in X], [1, -1, 1], [-1, 0],
                                   name="figure3-like")

    return Space(generate, "Figure 3 with its non-zero tokens moved by halves in [-1, 1]")


def random_joint() -> Space:
    """Small integer datasets (n = 2..3, T = 2, d = 2) with a zero first token in every input."""
    def generate(c):
        n = c.integer(2, 3, "size")
        toks = [[c.integer(-2, 2, "entry"), c.integer(-2, 2, "entry")] for _ in range(n)]
        Y = [c.sampled_from([1, -1]) for _ in range(n)]
        return Dataset.from_arrays([[[0, 0], t] for t in toks], Y, [1, 0], name="random-joint")

    return Space(generate, "integer datasets n 2..3, T 2, d 2, entries in [-2, 2], a zero first token")


def joint_instances(datasets: Space, ratio: Callable, ratio_note: str) -> Space:
    """Instances: a dataset, alpha = its pure selection of largest label margin, the logistic loss,
    a seed, and the joint path's ray r = kappa R as r_over_R = ratio(chooser, dataset, alpha)
    (an exact decimal or fraction string)."""
    def generate(c):
        ds = datasets.generate(c)
        alpha = best_selection(ds)
        return Instance(ds, {"alpha": alpha, "loss": "logistic", "seed": c.integer(0, 2**16, "seed"),
                             "r_over_R": ratio(c, ds, alpha)})

    return Space(generate, datasets.description + f"; r/R {ratio_note}",
                 params={"alpha": Space(lambda c: None, "the best pure selection"), "loss": just("logistic"),
                         "seed": seeds(0, 2**16), "r_over_R": Space(lambda c: None, ratio_note)})


# ---- the joint-path proxy -----------------------------------------------------------------------

@dataclass(frozen=True)
class JointProxy:
    """A result's joint-path proxy: tolerance on both gaps, plateau (relative decrease that is
    not a plateau), window of radii, grid size, solver iterations (x the horizon), the largest
    label margin r/||v_mm|| allowed."""

    tol: float
    plateau: float
    last: int
    grid: int
    iters: int
    max_margin: float
    reach: float = 4.0          # the largest horizon factor of the result's extend/confirm

    def tolerances(self) -> dict:
        return {"gap": self.tol, "plateau": self.plateau, "window": self.last, "grid": self.grid,
                "iterations": self.iters, "max_label_margin": self.max_margin, "residual": paths.RESIDUAL}


UNDECIDED = "a gap is above tolerance but still decreasing at the largest radius"


def joint_starts(ds, alpha, extra_p, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Paired (v, p) start directions: (v_mm(beta), p_mm(beta)) for every jointly feasible beta,
    (v_mm(alpha), each of extra_p) and two seeded random pairs."""
    vs, ps = [], []
    for beta in itertools.product(range(ds.T), repeat=ds.n):
        lab, att = joint.label_result(ds, beta, range(ds.n))[0], joint.att_svm(ds, beta)[0]
        if lab.ok and att.ok:
            vs.append(lab.x)
            ps.append(att.x)
    v_alpha = joint.label_result(ds, alpha, range(ds.n))[0].x
    for p in extra_p:
        vs.append(v_alpha)
        ps.append(p)
    rng = np.random.default_rng(seed)
    vs += list(rng.normal(size=(2, ds.d)))
    ps += list(rng.normal(size=(2, ds.d)))
    return np.array(vs), np.array(ps)


def joint_gaps(insts: Sequence[Instance], budget, targets: Sequence[np.ndarray], proxy: JointProxy,
               extra: Sequence[Sequence[np.ndarray]] | None = None) -> list[Outcome]:
    """The proxy (module docstring) on each instance's ray, p's target targets[k], extra p starts
    extra[k]; the instances are solved together."""
    extra = extra or [()] * len(insts)
    mult = paths.grid(proxy.grid, budget)
    X, Y, K, radii, vstarts, pstarts, rows = [], [], [], [], [], [], []
    for inst, target, more in zip(insts, targets, extra):
        ds, alpha = inst.dataset, [int(a) for a in inst.params["alpha"]]
        kappa = float(Fraction(str(inst.params.get("r_over_R", 1))))
        v_mm = joint.label_result(ds, alpha, range(ds.n))[0].x
        scale = max(float(np.linalg.norm(v_mm)), float(np.linalg.norm(target)))
        scale = min(scale, proxy.max_margin * float(np.linalg.norm(v_mm))
                    / (kappa * 2.0 ** (proxy.grid - 1) * proxy.reach))
        rho = scale * mult
        vs, ps = joint_starts(ds, alpha, [target, *more], inst.params["seed"])
        X.append(ds.X)
        Y.append(ds.Y)
        K.append(model.keys(ds))
        radii.append(np.stack([kappa * rho, rho], axis=-1))
        vstarts.append(vs)
        pstarts.append(ps)
        rows.append((ds, alpha, kappa, v_mm, rho))
    solved = paths.joint_paths(X, Y, K, radii, vstarts, pstarts, int(proxy.iters * budget.horizon))
    return [_decide(s, target, proxy, *row) for s, target, row in zip(solved, targets, rows)]


def _decide(solved: paths.Solved, target, proxy: JointProxy, ds, alpha, kappa, v_mm, rho) -> Outcome:
    gv = paths.gaps_to(solved.x[0], v_mm)
    gp = paths.gaps_to(solved.x[1], target)
    selected = (model.keys(ds) @ solved.x[1][-1]).argmax(-1).tolist()
    ok = solved.settled()
    tail = slice(len(rho) - proxy.last, len(rho))
    detail = {"alpha": alpha, "r_over_R": kappa, "v_mm": np.asarray(v_mm).tolist(),
              "p_target": np.asarray(target).tolist(), "R": rho.tolist(), "gap_v": gv, "gap_p": gp,
              "final_gap_v": gv[-1], "final_gap_p": gp[-1], "status": solved.status,
              "residual": solved.residual.tolist(), "selected_at_largest": selected,
              "final_v": solved.unit(block=0), "final_p": solved.unit(block=1),
              "loglog_slope_v": paths.loglog_slope(rho[tail], gv[tail]),
              "loglog_slope_p": paths.loglog_slope(rho[tail], gp[tail])}
    if not all(ok[tail]):
        return Outcome(None, detail=detail, reason="joint path solve did not settle on the last radii")
    tails = [g[tail] for g in (gv, gp)]
    margin = proxy.tol - max(gv[-1], gp[-1])
    if all(paths.approaches(rho[tail], t, proxy.tol) for t in tails):
        return Outcome(True, detail=detail, margin=margin)
    if any(paths.plateau(t, proxy.tol, proxy.plateau) for t in tails):
        return Outcome(False, detail=detail, margin=margin)
    return Outcome(None, detail=detail, reason=UNDECIDED, margin=margin)
