"""Transformers as SVMs, the W regularization path (paper B claim 1,
docs/statements.md#tfsvm-regpath-w; the paper's Section 3, our
reconstruction of its statement): with W(R) = argmin L(W) over a region of Frobenius radius R,

- global path (region {||W||_F <= R}): under Assumption A, strict optimality and (Att-SVM)
  feasible for alpha = opt, W(R)/R -> W_mm(opt)/||W_mm(opt)||_F (the global one);
- local path (region cone_mu(W_mm(alpha)) ∩ {R0 <= ||W||_F <= R}): for alpha locally optimal
  (Definition 2 on the W-SVM: every SVM-neighbour scores strictly lower), W(R)/R ->
  W_mm(alpha)/||W_mm(alpha)|| for small mu and large R0 (the paper's "locally optimal
  direction"; which LMM is reached depends on the cone the path is confined to).

The W-problem is the core p-problem with keys vec(x_it z_i^T) (`dynamics.cross.w_problem`), so
W(R) is `dynamics.regpath.path` in dimension d^2; W_mm(alpha), its neighbours and local
optimality come from the exact p-machinery on the lifted dataset (`svm.wlift`).

Proxy (named): gap_k = 1 - corr(W(R_k), W_mm(alpha)) on R_k = 2^k ||W_mm|| (global, k < GRID) or
R_k = 2^k R0, R0 = R0_FACTOR ||W_mm|| (local, k = 1..GRID), the window sliding up one step per
doubling of the horizon (`paths.grid`). Holds when the last gap is <= tol, non-increasing over
the last LAST radii and still falling (halved over them, or below FLOOR); fails when the last
gap is > tol and has not decreasing by PLATEAU (relative) over them (settled elsewhere), and
still does at 4x the radii (the engine's `confirm`); otherwise the instance is re-evaluated at
2 and 4x the radii (`extend`), then INCONCLUSIVE, as is any radius whose solve did not settle
(`dynamics.paths.settles`). tol = GAP_TOL (global) or mu / 10 (local: the cone's own width is
mu, and a path stuck on its boundary has gap mu). A failing cone path is re-run with mu / 10
and 4 R0 before it counts (the statement asks only for some small mu and large R0). The paths
of a batch are solved together, each in its own region (`paths.linear_paths`).

The instance carries alpha and the region. Hypotheses: loss.assumption_A, w_svm.feasible,
w_svm.locally_optimal, regpath.global_is_opt. (The (K, Q) ball's different limit, W*_mm, is
the subject of tfsvm-regpath-kq, whose necessity witness runs this W path.)"""

import numpy as np

from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Instance, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.spaces import Space
from attnsvm.dynamics import cross, paths, wpaths
from attnsvm.svm import wlift

GAP_TOL = 1e-2
MU = 0.01
R0_FACTOR = 8.0
PLATEAU = 1e-3
FLOOR = 1e-9
LAST = 3
GRID = 5
ITERS = 15          # solver iterations per radius at horizon 1 (scaled with the horizon)
RETRIES = 1         # narrower, farther cones tried after a failing cone path
BOUNDED = "the cone path stays at a finite norm (R0 too small for the claim's large R0)"


def _settle(values, tol) -> bool | None:
    return paths.settles(values[-LAST:], tol, PLATEAU, FLOOR)


def _paths(insts, budget, mu: float, r0_factor: float) -> list[Outcome]:
    mult = paths.grid(GRID, budget)
    jobs = []
    for inst in insts:
        ds, P = inst.dataset, inst.params
        sel = wlift.w_select(ds, P["alpha"])
        q = wlift.w_matrix(ds, sel.p_mm).ravel()
        unit = float(np.linalg.norm(q))
        local = P["region"] == "cone"
        base = r0_factor * unit if local else unit
        radii = base * (2 * mult if local else mult)
        rng = np.random.default_rng(P["seed"])
        starts = np.array([q] + ([] if local else wpaths.lmm_starts(ds)) + list(rng.normal(size=(2, ds.d * ds.d))))
        jobs.append((sel, q, unit, local, base, radii, starts))
    solved = paths.linear_paths([inst.dataset for inst in insts], [inst.params["loss"] for inst in insts],
                                [j[5] for j in jobs], [j[6] for j in jobs], int(ITERS * budget.horizon),
                                cones=[(j[1], mu) if j[3] else None for j in jobs],
                                min_radii=[j[4] if j[3] else 0.0 for j in jobs], build=cross.w_problem)
    outs = []
    for inst, s, (sel, q, unit, local, _, radii, _) in zip(insts, solved, jobs):
        tol = mu / 10 if local else GAP_TOL
        gaps = paths.gaps_to(s.p, q)
        detail = {"alpha": list(inst.params["alpha"]), "region": inst.params["region"], "W_mm": q.tolist(),
                  "is_gmm": sel.is_gmm, **({"mu": mu, "R0_over_norm_W_mm": r0_factor} if local else {}),
                  "R_over_norm_W_mm": (radii / unit).tolist(), "gap": gaps, "status": s.status,
                  "norm_over_norm_W_mm": (np.linalg.norm(s.p, axis=-1) / unit).tolist(),
                  "final_direction": s.unit(), "loglog_slope_last": paths.loglog_slope(radii[-LAST:], gaps[-LAST:]),
                  "tolerance": tol}
        if not all(s.settled()[-LAST:]):
            outs.append(Outcome(None, detail=detail, reason="path solve did not settle on the last radii"))
            continue
        verdict = _settle(gaps, tol)
        norms = np.linalg.norm(s.p, axis=-1)
        if local and verdict is False and norms[-1] <= norms[-2] * (1 + 1e-6) and norms[-1] < radii[-1] * (1 - 1e-6):
            # bounded: the path stays at a finite norm, so it says nothing about "large R0" (below the norm up to
            # which mixing in a better-scoring inactive token pays, the cone's edge beats W_mm at every R)
            outs.append(Outcome(None, detail=detail, reason=BOUNDED))
            continue
        outs.append(Outcome(verdict, detail=detail, margin=tol - gaps[-1],
                            reason="" if verdict is not None else "gap above tolerance but still decreasing"))
    return outs


def _farther(out: Outcome, r0_factor: float) -> float:
    """R0 for a retry: 4 R0, or twice the norm where a bounded path stopped if larger (it stays at a
    finite norm when R0 is below the norm up to which mixing in a better-scoring, inactive token
    still pays)."""
    norms = out.detail.get("norm_over_norm_W_mm", [])
    R = out.detail.get("R_over_norm_W_mm", [])
    bounded = len(norms) >= 2 and norms[-1] < R[-1] * (1 - 1e-6) and norms[-1] <= norms[-2] * (1 + 1e-6)
    return max(4 * r0_factor, 2 * norms[-1] if bounded else 0.0)


@batched
def path_converges(insts, budget) -> list[Outcome]:
    """The proxy on each instance's path; a cone path that fails is re-run in a narrower, farther cone
    (mu / 10 and 4 R0, or 4x the norm where a bounded path stopped; the statement only asks for some small
    mu and large R0), up to RETRIES times, and the verdict is the last run's."""
    outs = _paths(insts, budget, MU, R0_FACTOR)
    mu, r0 = [MU] * len(insts), [R0_FACTOR] * len(insts)
    for _ in range(RETRIES):
        again = [k for k, (inst, o) in enumerate(zip(insts, outs))
             if (o.holds is False or o.reason == BOUNDED) and inst.params["region"] == "cone"]
        for k in again:
            mu[k], r0[k] = mu[k] / 10, _farther(outs[k], r0[k])
        groups: dict = {}
        for k in again:
            groups.setdefault((mu[k], r0[k]), []).append(k)
        for (m, f), ks in groups.items():
            for k, retry in zip(ks, _paths([insts[j] for j in ks], budget, m, f)):
                outs[k] = Outcome(retry.holds,
                                  detail={**retry.detail,
                                          "first_cone": outs[k].detail.get("first_cone", outs[k].detail)},
                                  margin=retry.margin, reason=retry.reason)
    return outs


def selections(seed: int, n: int, T: int, d: int, cross_queries: bool):
    """The Gaussian dataset of (seed, sizes) and its exact W-selections (memoized on the dataset,
    one object per arguments: `wpaths.dataset`)."""
    ds = wpaths.dataset(seed, n, T, d, cross_queries)
    return ds, wlift.w_selections(ds, limit=64)


def regpath_instances(pool, sizes=None) -> Space:
    """A small Gaussian dataset (self- or cross-attention), a selection alpha drawn from
    pool(selections) -> (selections, region or None) (None: the ball for the GMM, the cone
    otherwise), a loss and the dataset's seed. sizes(chooser) -> (n, T, d)."""
    def generate(c) -> Instance:
        seed = c.integer(0, 2**16, "seed")
        n, T, d = sizes(c) if sizes else (c.integer(1, 3, "size"), c.integer(2, 3, "size"), c.integer(2, 3, "size"))
        ds, sels = selections(seed, n, T, d, c.sampled_from([False, True]))
        chosen, region = pool(sels)
        pick = chosen[c.integer(0, 63, "index") % len(chosen)] if chosen else sels[0]
        region = region or ("ball" if pick.is_gmm else "cone")
        return Instance(ds, {"alpha": list(pick.alpha), "region": region,
                             "loss": c.sampled_from(sorted(LOSSES)), "seed": seed})

    return Space(generate, "Gaussian datasets (self- or cross-attention), n 1..3, T 2..3, d 2..3; alpha from the "
                           "selections the part needs; ball for the GMM, a cone otherwise")


def lmm_pool(sels):
    return [s for s in sels if s.locally_optimal], None


claim = Claim(
    name="tfsvm-regpath-w",
    evaluations=200,
    statement="Assumption A; alpha locally optimal for the W-SVM => the W path confined to cone_mu(W_mm(alpha)) "
              "∩ {R0 <= ||W||_F <= R} converges in direction to W_mm(alpha); for alpha = opt (strict, feasible) the "
              "unconstrained path min_{||W||_F <= R} L(W) converges to W_mm(opt)",
    hypotheses=hyp.of("tfsvm-regpath-w"),
    conclusion=path_converges,
    instances=lambda dropped: regpath_instances(lmm_pool),
    extend=(2, 4),
    confirm=(4,),
    measures=("loglog_slope_last",),
    proxy=f"gap = 1 - corr(W(R), W_mm(alpha)) on R = 2^k ||W_mm|| (ball, k < {GRID}) or 2^k R0, R0 = {R0_FACTOR:g} "
          f"||W_mm|| (cone of mu = {MU}, k = 1..{GRID}; a failure is re-run at mu/10, 4 R0), sliding up one radius per "
          f"horizon doubling, undecided: up to 2 more: holds if the last gap is <= {GAP_TOL} (ball) or mu/10 (cone), "
          f"non-increasing and halved over the last {LAST} radii (or below {FLOOR:g}); fails if above it without "
          f"decreasing by {PLATEAU} (relative), still so at 4x the radii; W(R) by regpath (multi-start from every LMM, "
          f"{ITERS} iterations x the horizon)",
    tolerances={"gap": GAP_TOL, "mu": MU, "R0_factor": R0_FACTOR, "plateau": PLATEAU, "floor": FLOOR, "window": LAST,
                "iterations": ITERS, "residual": paths.RESIDUAL},
)
