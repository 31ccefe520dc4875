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

Proxy (named): gap_k = 1 - corr(W(R_k), W_mm(alpha)) on R_k = 2^k ||W_mm|| (global, k < G) or
R_k = 2^k R0, R0 = R0_FACTOR ||W_mm|| (local, k = 1..G), G = 5 at quick (+1 per horizon doubling).
Holds when the last gap is <= tol, non-increasing over the last LAST radii and still falling
(halved over them, or below FLOOR); fails when the
last gap is > tol and has not decreased by PLATEAU (relative) over them (settled elsewhere);
otherwise the grid is extended (EXTEND doublings) and then INCONCLUSIVE, as is any radius
whose solve did not settle. tol = GAP_TOL (global) or mu / 10 (local: the cone's own width is
mu, and a path stuck on its boundary has gap mu). A failing cone path is re-run with mu / 10 and
4 R0 before it counts (the statement asks only for some small mu and large R0).

The instance carries alpha and the region. (The (K, Q) ball's different limit, W*_mm, is the
subject of tfsvm-regpath-kq, whose necessity witness runs this W path.)"""

import numpy as np
from hypothesis import strategies as st

from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import gaussian_dataset
from attnsvm.dynamics import cross, regpath
from attnsvm.dynamics.trends import loglog_slope
from attnsvm.svm import geometry, wlift

GAP_TOL = 1e-2
MU = 0.01
R0_FACTOR = 8.0
PLATEAU = 1e-3
FLOOR = 1e-9
LAST = 3
EXTEND = 2
ITERS = 300


def grid_size(budget) -> int:
    return 5 + max(0, int(round(np.log2(budget.horizon))))


def settle(values, tol: float) -> bool | None:
    """The named proxy on a measure along the radii: True if the last value is <= tol, non-increasing
    over the last LAST radii and still converging (halved over them, a factor 4 in R, or below FLOOR:
    a plateau below tol is not a limit); False if it is > tol without decreasing by PLATEAU
    (relative) over them; else None (still decreasing above tol, or flat below it)."""
    last = list(values[-LAST:])
    monotone = all(b <= a * (1 + 1e-6) + 1e-12 for a, b in zip(last, last[1:]))
    if last[-1] <= tol and monotone and (last[-1] <= FLOOR or last[-1] <= last[0] / 2):
        return True
    if last[-1] > tol and last[-1] >= last[0] * (1 - PLATEAU):
        return False
    return None


def balanced(W: np.ndarray, m: int) -> np.ndarray:
    """theta = (vec K, vec Q) of the balanced rank-m factorisation of W's truncated SVD."""
    U, s, Vt = np.linalg.svd(W)
    r = np.sqrt(s[:m])
    return np.concatenate([(U[:, :m] * r).ravel(), (Vt[:m].T * r).ravel()])


def solve_path(ds, loss: str, param: str, radii, starts_w, seed: int, cone=None, min_radius: float = 0.0,
               m: int | None = None):
    """W(R) on `radii` (the Frobenius ball ||W||_F <= R, or for param 'KQ' the (K, Q) ball
    ||K||^2 + ||Q||^2 <= 2R of width m, default d) from the start directions `starts_w` (W
    matrices, flattened; balanced rank-m factors for (K, Q)) plus two seeded random ones.
    Returns (W(R) (G, d*d) numpy, path)."""
    prob = cross.w_problem([ds], loss)
    rng = np.random.default_rng(seed)
    d = ds.d
    if param == "KQ":
        m = m or d
        kq = cross.KQ(d, m)
        starts = [balanced(w.reshape(d, d), m) for w in starts_w] + list(rng.normal(size=(2, 2 * d * m)))
        P = regpath.kq_path(prob, kq, radii, np.array(starts), iters=ITERS)
        return kq.to_p(P.p[:, 0]).numpy(), P
    starts = list(starts_w) + list(rng.normal(size=(2, d * d)))
    P = regpath.path(prob, radii, np.array(starts), cone=cone, min_radius=min_radius, iters=ITERS)
    return P.p[:, 0].numpy(), P


def lmm_starts(ds) -> list:
    return [wlift.w_matrix(ds, s.p_mm).ravel() for s in wlift.w_lmms(ds, limit=64)]


def path_converges(inst, budget) -> Outcome:
    """The proxy on the instance's path; a cone path that fails is re-run in a narrower, farther cone
    (mu / 10, 4 R0: the statement only asks for some small mu and large R0) and the verdict is that run's."""
    out = _path_converges(inst, budget, MU, R0_FACTOR)
    if out.holds is not False or inst.params["region"] != "cone":
        return out
    retry = _path_converges(inst, budget, MU / 10, 4 * R0_FACTOR)
    return Outcome(retry.holds, detail={**retry.detail, "first_cone": out.detail}, margin=retry.margin, reason=retry.reason)


def _path_converges(inst, budget, mu: float, r0_factor: float) -> Outcome:
    ds, P = inst.dataset, inst.params
    sel = wlift.w_select(ds, P["alpha"])
    q = wlift.w_matrix(ds, sel.p_mm).ravel()
    unit = float(np.linalg.norm(q))
    local = P["region"] == "cone"
    tol = mu / 10 if local else GAP_TOL
    G = grid_size(budget)
    out = None
    for extra in range(EXTEND + 1):
        ks = np.arange(1, G + extra + 1) if local else np.arange(G + extra)
        base = r0_factor * unit if local else unit
        radii = base * 2.0 ** ks
        starts = [q] + ([] if local else lmm_starts(ds))
        W, path = solve_path(ds, P["loss"], "W", radii, starts, P["seed"],
                             cone=(q, mu) if local else None, min_radius=base if local else 0.0)
        gaps = [max(0.0, 1 - geometry.corr(w, q)) for w in W]
        ok = regpath.settled(path)
        detail = {"alpha": list(P["alpha"]), "region": P["region"], "W_mm": q.tolist(), "is_gmm": sel.is_gmm,
                  **({"mu": mu, "R0_over_norm_W_mm": r0_factor} if local else {}),
                  "R_over_norm_W_mm": (radii / unit).tolist(), "gap": gaps, "status": [s[0] for s in path.status],
                  "final_direction": (W[-1] / np.linalg.norm(W[-1])).tolist(),
                  "loglog_slope_last": loglog_slope(radii[-LAST:], gaps[-LAST:]), "tolerance": tol}
        if not all(ok[-LAST:]):
            return Outcome(None, detail=detail, reason="path solve did not settle on the last radii")
        verdict = settle(gaps, tol)
        out = Outcome(verdict, detail=detail, margin=tol - gaps[-1],
                      reason="" if verdict is not None else "gap above tolerance but still decreasing")
        if verdict is not None:
            return out
    return out


# ---- hypotheses ----------------------------------------------------------------------------

def feasible(inst) -> bool:
    sel = wlift.w_select(inst.dataset, inst.params["alpha"])
    return sel.feasible and sel.certified


def locally_optimal(inst) -> bool:
    sel = wlift.w_select(inst.dataset, inst.params["alpha"])
    return sel.certified and sel.locally_optimal


def global_is_opt(inst) -> bool:
    """The unconstrained (ball) path is claimed only for alpha = opt with strict optimality."""
    return inst.params["region"] == "cone" or (model.strict_optimality(inst.dataset) and
                                               list(inst.params["alpha"]) == model.optimal_tokens(inst.dataset).tolist())


# ---- instances -----------------------------------------------------------------------------

@st.composite
def regpath_instances(draw, dropped=frozenset()):
    """A small Gaussian dataset (self- or cross-attention) and a selection alpha drawn from those
    the part needs: LMMs (as stated: the ball for the GMM, the cone otherwise), feasible non-LMMs
    (without locally_optimal), non-global LMMs in the ball (without global_is_opt)."""
    seed = draw(st.integers(0, 2**16))
    if "global_is_opt" in dropped:                      # non-global LMMs need n >= 2
        n, T, d = draw(st.integers(2, 3)), 3, 3
    else:
        n, T, d = draw(st.integers(1, 3)), draw(st.integers(2, 3)), draw(st.integers(2, 3))
    cross_z = draw(st.booleans())
    ds = gaussian_dataset(seed, n, T, d, cross_queries=cross_z)
    sels = wlift.w_selections(ds, limit=64)
    if "locally_optimal" in dropped:
        pool, region = [s for s in sels if s.feasible and not s.locally_optimal], None
    elif "global_is_opt" in dropped:
        pool, region = [s for s in sels if s.locally_optimal and not s.is_gmm], "ball"
    else:
        pool, region = [s for s in sels if s.locally_optimal], None
    pick = pool[draw(st.integers(0, 63)) % len(pool)] if pool else sels[0]
    region = region or ("ball" if pick.is_gmm else "cone")
    params = {"alpha": list(pick.alpha), "region": region,
              "loss": draw(st.sampled_from(sorted(LOSSES))), "seed": seed}
    return Instance(ds, params)


def _instances(dropped):
    return regpath_instances(dropped)


claim = Claim(
    name="tfsvm-regpath-w",
    evaluations=20,
    statement="Assumption A; alpha locally optimal for the W-SVM => the W path confined to cone_mu(W_mm(alpha)) "
              "∩ {R0 <= ||W||_F <= R} converges in direction to W_mm(alpha); for alpha = opt (strict, feasible) the "
              "unconstrained path min_{||W||_F <= R} L(W) converges to W_mm(opt)",
    hypotheses=(
        hyp.get("loss.assumption_A"),
        Hypothesis("feasible", "the W-SVM for alpha is feasible (exact KKT certificate)", feasible),
        Hypothesis("locally_optimal", "alpha is locally optimal for the W-SVM (Definition 2 on keys vec(x z^T), exact)",
                   locally_optimal),
        Hypothesis("global_is_opt", "the unconstrained (ball) path is paired with alpha = opt, strictly optimal",
                   global_is_opt),
    ),
    conclusion=path_converges,
    instances=_instances,
    measures=("loglog_slope_last",),
    proxy=f"gap = 1 - corr(W(R), W_mm(alpha)) on R = 2^k ||W_mm|| (ball, k < 5) or 2^k R0, R0 = {R0_FACTOR:g} ||W_mm|| "
          f"(cone of mu = {MU}, k = 1..5; a failure is re-run at mu/10, 4 R0), +1 radius per horizon doubling, up to "
          f"{EXTEND} more while undecided: holds if "
          f"the last gap is <= {GAP_TOL} (ball) or mu/10 (cone), non-increasing and halved over the last {LAST} radii "
          f"(or below {FLOOR:g}); fails "
          f"if above it without decreasing by {PLATEAU} (relative); W(R) by regpath (multi-start from every LMM, "
          f"{ITERS} iterations)",
)
