"""Theorem 3 (local convergence of GD): for locally optimal alpha (Definition 2, decided
exactly) there are mu in (0, 1) and R_mu such that GD with eta <= 1/L_p from any
p_0 in C_{mu,R_mu}(p_mm(alpha)) has ||p_t|| -> oo and p_t/||p_t|| -> p_mm/||p_mm||.

mu and R_mu exist but are not given, so each instance is tried on a LADDER of cones
(mu, R) = (mu_0 4^-k, 2^(k+1) ||p_mm||), k = 0..3, with mu_0 = min(0.1, 1/(4 (||p_mm|| D)^2)),
D the longest (ATT-SVM) row ||k_{i,alpha_i} - k_it||: below that angle every point of the cone
keeps every constraint value positive (tan(angle) < 1/(||p_mm|| D)), so a cone in angle is also
small in logit space. The conclusion holds as soon as one rung passes, and fails only when
every rung fails decisively. A rung passes when

- Lemma 7 (L1, L2), no stationary point and descent towards p_mm in the cone: at `points`
  seeded points of C_{mu,R'} for R' = R, 2R, 4R, 8R, <-grad L(p), p_mm> > 0, read from the
  log-domain gradient direction (exact at any saturation; |corr| <= TRUST is untrusted);
- Lemma 7 (L3), the gradient is at least as aligned with p_mm as with p up to a factor
  1 + pi that shrinks with R: rho(p) = <grad L, p/||p||> / <grad L, p_mm/||p_mm||> has
  max over the points at 8R <= 1 + PI_TOL (the step that makes corr(p_t, p_mm) -> 1);
- GD itself, eta = 1/L_p (attnsvm.dynamics.smoothness), `starts` seeded starts in C_{mu,R}, STEPS x
  horizon steps: every recorded iterate stays in cone_mu(p_mm), ||p_t|| grows, the final
  max-logit tokens are alpha. A run that stalls (gradient below float64's range) is
  INCONCLUSIVE, never a pass.

The paper's proof (Appendix B.4) is exactly: L1-L3 on the cone + the step-size condition
imply the iterates never leave the cone and their correlation with p_mm tends to 1; the
finite proxy checks those premises on samples and watches GD for a finite horizon."""

import numpy as np
from hypothesis import strategies as st

from attnsvm import dynamics
from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import gaussian_datasets, keyed_datasets
from attnsvm.dynamics.smoothness import smoothness_constant
from attnsvm.svm import geometry

RUNGS = 4
BANDS = (1.0, 2.0, 4.0, 8.0)
TRUST = 1e-9
PI_TOL = 0.05
STEPS = 300


def locally_optimal(inst) -> bool:
    """alpha is feasible and locally optimal (Definition 2), decided by an exact KKT certificate."""
    alpha = inst.params.get("alpha")
    if alpha is None or len(alpha) != inst.dataset.n:
        return False
    sel = geometry.select(inst.dataset, alpha)
    return sel.feasible and sel.certified and sel.locally_optimal


def feasible(inst) -> bool:
    """(ATT-SVM) for alpha is feasible (exact KKT certificate): p_mm(alpha) exists."""
    alpha = inst.params.get("alpha")
    if alpha is None or len(alpha) != inst.dataset.n:
        return False
    sel = geometry.select(inst.dataset, alpha)
    return sel.feasible and sel.certified


def gradient_conditions(ds, loss, q, mu, R, rng, points) -> dict:
    """Lemma 7 at points of C_{mu,R'} (R' = R x BANDS): min corr(-grad L, p_mm) and max rho at 8R."""
    qh = q / np.linalg.norm(q)
    P = np.concatenate([geometry.sample_cone(q, mu, R * b, rng, size=points) for b in BANDS])
    g = dynamics.Problem.from_datasets([ds] * len(P), loss).grad(model.t(P)).direction.cpu().numpy()
    c_mm = -(g @ qh)                                        # corr(-grad L, p_mm) in [-1, 1]
    c_p = -np.einsum("bd,bd->b", g, P / np.linalg.norm(P, axis=1, keepdims=True))
    trusted = np.abs(c_mm) > TRUST
    top = np.arange(len(P)) >= (len(BANDS) - 1) * points
    rho = np.where(trusted & (c_mm > 0) & top, c_p / np.where(c_mm > 0, c_mm, 1.0), -np.inf)
    worst = int(np.argmin(np.where(trusted, c_mm, np.inf)))
    return {"trusted": int(trusted.sum()), "min_corr_negrad_pmm": float(c_mm[worst]) if trusted.any() else None,
            "worst_point": P[worst].tolist(), "max_rho_top_band": float(rho.max()) if np.isfinite(rho.max()) else None}


def gd_run(ds, loss, q, alpha, mu, R, rng, starts, steps) -> dict:
    """GD at eta = 1/L_p from `starts` points of C_{mu,R}: cone exit, norm growth, final selection."""
    P0 = geometry.sample_cone(q, mu, R, rng, size=starts)
    eta = 1.0 / smoothness_constant(ds, loss)
    tr = dynamics.run(dynamics.Problem.from_datasets([ds] * starts, loss), dynamics.GD(eta), P0, steps)
    corr = tr.corr(model.t(q)).cpu().numpy()                  # (recorded steps, starts)
    norms = tr.p.norm(dim=-1).cpu().numpy()
    left = corr < 1 - mu
    exit_step = [int(np.array(tr.steps)[left[:, b]][0]) if left[:, b].any() else None for b in range(starts)]
    return {"eta": eta, "steps": steps, "status": sorted(set(tr.status)),
            "min_corr": float(corr.min()), "final_gap": (1 - corr[-1]).tolist(), "initial_gap": (1 - corr[0]).tolist(),
            "norm_growth": (norms[-1] - norms[0]).tolist(), "exit_step": exit_step,
            "selects_alpha": bool((tr.selected.cpu().numpy() == np.asarray(alpha)).all()),
            "stays_in_cone": not bool(left.any())}


def ladder(sel) -> list[tuple[float, float]]:
    """(mu, R/||p_mm||) per rung: mu_0 4^-k, 2^(k+1) (see the module docstring)."""
    D = float(np.linalg.norm(sel.result.problem.A, axis=1).max())
    mu0 = min(0.1, 0.25 / (float(np.linalg.norm(sel.p_mm)) * D) ** 2)
    return [(mu0 / 4 ** k, 2.0 ** (k + 1)) for k in range(RUNGS)]


def local_convergence(inst, budget) -> Outcome:
    ds, P = inst.dataset, inst.params
    sel = geometry.select(ds, P["alpha"])
    q = sel.p_mm
    unit = float(np.linalg.norm(q))
    rng = np.random.default_rng(P["seed"])
    rungs, untrusted = [], []
    steps = int(STEPS * budget.horizon)
    for mu, m in ladder(sel):
        R = m * unit
        grad = gradient_conditions(ds, P["loss"], q, mu, R, rng, P["points"])
        gd = gd_run(ds, P["loss"], q, P["alpha"], mu, R, rng, P["starts"], steps)
        rung = {"mu": mu, "R_over_norm_p_mm": m, "gradient": grad, "gd": gd}
        rungs.append(rung)
        if grad["min_corr_negrad_pmm"] is None or gd["status"] != ["ok"]:
            untrusted.append(f"mu={mu}, R={m}||p_mm||: " + ("gradient correlations untrusted" if grad["min_corr_negrad_pmm"] is None
                                                              else f"GD status {gd['status']}"))
            continue
        rung["L1_L2"] = grad["min_corr_negrad_pmm"] > 0
        rung["L3"] = grad["max_rho_top_band"] is not None and grad["max_rho_top_band"] <= 1 + PI_TOL
        rung["gd_ok"] = gd["stays_in_cone"] and gd["selects_alpha"] and min(gd["norm_growth"]) > 0
        if rung["L1_L2"] and rung["L3"] and rung["gd_ok"]:
            return Outcome(True, detail={"alpha": list(P["alpha"]), "p_mm": q.tolist(), "passing_rung": rung,
                                         "rungs_tried": len(rungs)})
    detail = {"alpha": list(P["alpha"]), "p_mm": q.tolist(), "rungs": rungs}
    if untrusted:
        return Outcome(None, detail=detail, reason="; ".join(untrusted))
    return Outcome(False, detail=detail)


@st.composite
def alpha_instances(draw, locally_opt: bool = True):
    """A dataset (Figure-1 keyed construction or Gaussian) and alpha chosen among its selections
    that are locally optimal (or, with locally_opt False, feasible but NOT locally optimal: an
    SVM-neighbour has a score at least the selected token's)."""
    ds = draw(st.one_of(keyed_datasets(n=st.integers(1, 2), T=st.integers(2, 3), dk=st.just(2), labels="positive"),
                        gaussian_datasets(n=st.integers(1, 2), T=st.integers(2, 3), d=st.just(2))))
    sels = [geometry.select(ds, a) for a in geometry.candidate_alphas(ds, 64)]
    pool = [s for s in sels if s.feasible and s.certified and s.locally_optimal == locally_opt]
    alpha = list(pool[draw(st.integers(0, len(pool) - 1))].alpha) if pool else None
    return Instance(ds, {"alpha": alpha, "loss": draw(st.sampled_from(sorted(LOSSES))), "seed": draw(st.integers(0, 2**16)),
                         "points": 16, "starts": 4})


def _instances(dropped):
    return alpha_instances(locally_opt="locally_optimal" not in dropped)


claim = Claim(
    name="theorem3",
    statement="Assumption A, alpha locally optimal => exists mu, R_mu: GD (eta <= 1/L_p) from C_{mu,R_mu}(p_mm(alpha)) "
              "has ||p_t|| -> oo and p_t/||p_t|| -> p_mm/||p_mm||",
    hypotheses=(
        hyp.ASSUMPTION_A,
        Hypothesis("feasible", "ATT-SVM(alpha) is feasible (exact KKT certificate)", feasible),
        Hypothesis("locally_optimal", "alpha is locally optimal: every SVM-neighbour scores strictly lower (exact)",
                   locally_optimal),
    ),
    conclusion=local_convergence,
    instances=_instances,
    proxy=f"ladder of {RUNGS} cones (mu_0 4^-k, R = 2^(k+1) ||p_mm||), mu_0 = min(0.1, 1/(4 (||p_mm|| max row norm)^2)); a rung passes when at sampled cone points with norms R x "
          f"{list(BANDS)} corr(-grad L, p_mm) > {TRUST} (Lemma 7 L1/L2), max rho = <grad L, p^>/<grad L, p_mm^> at 8R "
          f"<= 1 + {PI_TOL} (L3), and GD (eta = 1/L_p, {STEPS} x horizon steps) from cone starts stays in the cone, "
          f"grows in norm and selects alpha; holds if a rung passes, fails if every rung fails decisively",
)
