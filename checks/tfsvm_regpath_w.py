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
mu, and a path stuck on its boundary has gap mu).

The cone's mu is the claim's "small mu", per instance (`wpaths.theorem_cone`): mu = min(MU, mu* /
MU_SHARE), where mu* is the widest cone in which no HIGHER-scoring token can take the least margin.
In a wider cone the excess risk over alpha's is negative along such a direction at every large R,
so the path sits on the cone's edge whatever R0 is (the standard seed-0 false refutation: mu* =
1.06e-4 against mu = 1e-2 and 1e-3); for mu < mu* the lower-scoring tokens outweigh beyond a norm
R_mu (`ConeGeometry.r_mu`) and the path goes to W_mm. mu* = 0 (a higher-scoring SVM-neighbour, only
without local optimality: no cone is narrow enough) keeps mu = MU. A cone path on the cone's edge
with mu* > 0 is undecided, not failed: while the lower-scoring tokens outweigh (`wpaths.mass_balance`
<= 0) its finite-R deviation from W_mm (1 - corr ~ C / R^2) is wider than the cone; while a
higher-scoring one does, below R_mu, R0 is too small; only beyond R_mu (a contradiction of the
bound) is it a failure. A failing, bounded or below-R_mu cone path is re-run with mu / 10 and 4 R0
(or beyond where a bounded path stopped, or R_mu) before it counts. The paths of a batch are solved
together, each in its own region (`paths.linear_paths`), every parameter the instance's own.

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
MU_SHARE = 4        # the cone's mu: mu* / MU_SHARE (half the angle to where a higher-scoring token leads), at most MU
MU_MIN = 1e-12      # a narrower theorem cone is below what corr(W, W_mm) resolves in float64
R0_FACTOR = 8.0
PLATEAU = 1e-3
FLOOR = 1e-9
LAST = 3
GRID = 5
ITERS = 15          # solver iterations per radius at horizon 1 (scaled with the horizon)
RETRIES = 1         # narrower, farther cones tried after a failing cone path
EDGE_REL = 1e-6     # a gap within this (relative) of mu: the path is on the cone's boundary
BOUNDED = "the cone path stays at a finite norm (R0 too small for the claim's large R0)"
EDGE = ("the cone path presses on the cone's boundary while the lower-scoring tokens outweigh (the theorem's "
        "regime): its finite-R deviation from W_mm is wider than the cone at these radii")
BELOW_R0 = ("the cone path sits on the cone's boundary where a higher-scoring token's mass outweighs, below the norm "
            "R_mu beyond which no mixing pays in this cone (R0 too small for the claim's large R0)")
WIDE = ("the cone reaches directions where a higher-scoring token takes the least margin (mu >= mu*): the claim's "
        "small mu is smaller")
NARROW = "the claim's cone (mu below mu*) is narrower than float64 resolves"


def _settle(values, tol) -> bool | None:
    return paths.settles(values[-LAST:], tol, PLATEAU, FLOOR)


def _geometry(inst) -> wpaths.ConeGeometry:
    return wpaths.theorem_cone(inst.dataset, inst.params["alpha"], inst.params["loss"])


def theorem_mu(inst) -> float:
    """The cone of the first run: mu = min(MU, mu*/MU_SHARE) inside the claim's regime (mu < mu*); MU where
    mu* = 0 (a higher-scoring SVM-neighbour: no cone is narrow enough, as in the necessity search)."""
    if inst.params["region"] != "cone":
        return MU
    m = _geometry(inst).mu_star
    return MU if m <= 0 else min(MU, m / MU_SHARE)


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _paths(insts, budget, mus, r0_factors) -> list[Outcome]:
    """The proxy on each instance's path, a cone path in cone_{mus[k]}(W_mm) ∩ {||W|| >= r0_factors[k] ||W_mm||}
    (both per instance; ignored for the ball); all paths of the batch solved together."""
    mult = paths.grid(GRID, budget)
    jobs, outs = [], [None] * len(insts)
    for k, inst in enumerate(insts):
        ds, P = inst.dataset, inst.params
        local = P["region"] == "cone"
        sel = wlift.w_select(ds, P["alpha"])
        q = wlift.w_matrix(ds, sel.p_mm).ravel()
        if local and mus[k] < MU_MIN:
            outs[k] = Outcome(None, detail={"alpha": list(P["alpha"]), "region": "cone", "W_mm": q.tolist(),
                                            "mu_star": _geometry(inst).mu_star, "mu": mus[k]}, reason=NARROW)
            continue
        unit = float(np.linalg.norm(q))
        base = r0_factors[k] * unit if local else unit
        radii = base * (2 * mult if local else mult)
        rng = np.random.default_rng(P["seed"])
        starts = np.array([q] + ([] if local else wpaths.lmm_starts(ds)) + list(rng.normal(size=(2, ds.d * ds.d))))
        jobs.append((k, sel, q, unit, local, base, radii, starts))
    solved = paths.linear_paths([insts[j[0]].dataset for j in jobs], [insts[j[0]].params["loss"] for j in jobs],
                                [j[6] for j in jobs], [j[7] for j in jobs], int(ITERS * budget.horizon),
                                cones=[(j[2], mus[j[0]]) if j[4] else None for j in jobs],
                                min_radii=[j[5] if j[4] else 0.0 for j in jobs], build=cross.w_problem)
    for s, (k, sel, q, unit, local, _, radii, _) in zip(solved, jobs):
        inst, mu = insts[k], mus[k]
        tol = mu / 10 if local else GAP_TOL
        gaps = paths.gaps_to(s.p, q)
        norms = np.linalg.norm(s.p, axis=-1)
        cone = {}
        if local:
            G = _geometry(inst)
            balance = wpaths.mass_balance(inst.dataset, inst.params["alpha"], s.p[-1], inst.params["loss"])
            r_mu = G.r_mu(mu)
            cone = {"mu": mu, "R0_over_norm_W_mm": r0_factors[k], "mu_star": G.mu_star,
                    "mu_star_token": None if G.token is None else list(G.token),
                    "R_mu_over_norm_W_mm": _finite(r_mu / unit), "mass_balance_last": _finite(balance)}
        detail = {"alpha": list(inst.params["alpha"]), "region": inst.params["region"], "W_mm": q.tolist(),
                  "is_gmm": sel.is_gmm, **cone,
                  "R_over_norm_W_mm": (radii / unit).tolist(), "gap": gaps, "status": s.status,
                  "norm_over_norm_W_mm": (norms / unit).tolist(),
                  "final_direction": s.unit(), "loglog_slope_last": paths.loglog_slope(radii[-LAST:], gaps[-LAST:]),
                  "tolerance": tol}
        if not all(s.settled()[-LAST:]):
            outs[k] = Outcome(None, detail=detail, reason="path solve did not settle on the last radii")
            continue
        verdict = _settle(gaps, tol)
        reason = "" if verdict is not None else "gap above tolerance but still decreasing"
        if local and verdict is False:
            if norms[-1] <= norms[-2] * (1 + 1e-6) and norms[-1] < radii[-1] * (1 - 1e-6):
                # bounded: the path stays at a finite norm, so it says nothing about "large R0" (below the norm up to
                # which mixing in a better-scoring inactive token pays, the cone's edge beats W_mm at every R)
                verdict, reason = None, BOUNDED
            elif min(gaps[-LAST:]) >= mu * (1 - EDGE_REL) and G.mu_star > 0:
                # on the cone's boundary in a cone where the claim can hold (mu* > 0): only a finite R explains it,
                # unless a higher-scoring token outweighs beyond R_mu (a contradiction: a failure)
                if mu >= G.mu_star:
                    verdict, reason = None, WIDE
                elif not balance > 0:
                    verdict, reason = None, EDGE
                elif norms[-1] < r_mu:
                    verdict, reason = None, BELOW_R0
        outs[k] = Outcome(verdict, detail=detail, margin=tol - gaps[-1], reason=reason)
    return outs


def _farther(inst, out: Outcome, r0_factor: float, mu: float) -> float:
    """R0 (over ||W_mm||) for a retry in the cone of mu: 4 R0, twice the norm where a bounded path stopped if
    larger (it stays at a finite norm when R0 is below the norm up to which mixing in a better-scoring, inactive
    token still pays), and at least R_mu of that cone where the bound gives one."""
    norms = out.detail.get("norm_over_norm_W_mm", [])
    R = out.detail.get("R_over_norm_W_mm", [])
    bounded = len(norms) >= 2 and norms[-1] < R[-1] * (1 - 1e-6) and norms[-1] <= norms[-2] * (1 + 1e-6)
    G = _geometry(inst)
    r_mu = G.r_mu(mu) / np.linalg.norm(out.detail["W_mm"]) if G.mu_star > 0 else 0.0
    return max(4 * r0_factor, 2 * norms[-1] if bounded else 0.0, r_mu if np.isfinite(r_mu) else 0.0)


@batched
def path_converges(insts, budget) -> list[Outcome]:
    """The proxy on each instance's path (a cone path in the claim's regime: mu = min(MU, mu*/MU_SHARE)); a cone
    path that fails, stays bounded or sits below R_mu is re-run in a narrower, farther cone (mu / 10 and 4 R0, or
    beyond the norm where a bounded path stopped, or R_mu; the statement only asks for some small mu and large
    R0), up to RETRIES times, and the verdict is the last run's. Every parameter is the instance's own: an
    outcome does not depend on its batch."""
    mu = [theorem_mu(inst) for inst in insts]
    r0 = [R0_FACTOR] * len(insts)
    outs = _paths(insts, budget, mu, r0)
    for _ in range(RETRIES):
        again = [k for k, (inst, o) in enumerate(zip(insts, outs))
                 if (o.holds is False or o.reason in (BOUNDED, BELOW_R0)) and inst.params["region"] == "cone"]
        if not again:
            break
        for k in again:
            mu[k] = mu[k] / 10
            r0[k] = _farther(insts[k], outs[k], r0[k], mu[k])
        for k, retry in zip(again, _paths([insts[j] for j in again], budget, [mu[j] for j in again],
                                          [r0[j] for j in again])):
            outs[k] = Outcome(retry.holds,
                              detail={**retry.detail, "first_cone": outs[k].detail.get("first_cone", outs[k].detail)},
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
          f"||W_mm|| (cone of mu = min({MU}, mu*/{MU_SHARE}), mu* the widest cone where no higher-scoring token takes "
          f"the least margin (mu = {MU} where mu* = 0), k = 1..{GRID}; a failure is re-run at mu/10, 4 R0 or R_mu), "
          f"sliding up one radius per horizon doubling, undecided: up to 2 more: holds if the last gap is <= {GAP_TOL} "
          f"(ball) or mu/10 (cone), non-increasing and halved over the last {LAST} radii (or below {FLOOR:g}); fails "
          f"if above it without decreasing by {PLATEAU} (relative), still so at 4x the radii (a cone path on the "
          f"cone's edge with mu* > 0 only beyond R_mu, where a higher-scoring token cannot outweigh: else undecided); "
          f"W(R) by regpath (multi-start from every LMM, {ITERS} iterations x the horizon)",
    tolerances={"gap": GAP_TOL, "mu": MU, "mu_share": MU_SHARE, "mu_min": MU_MIN, "R0_factor": R0_FACTOR,
                "plateau": PLATEAU, "floor": FLOOR, "window": LAST, "iterations": ITERS, "residual": paths.RESIDUAL},
)
