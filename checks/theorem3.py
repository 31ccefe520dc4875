"""Theorem 3 (local convergence of GD): for locally optimal alpha (Definition 2, decided
exactly) there are mu in (0, 1) and R_mu such that GD with eta <= 1/L_p from any
p_0 in C_{mu,R_mu}(p_mm(alpha)) has ||p_t|| -> oo and p_t/||p_t|| -> p_mm/||p_mm||.

What is measured is the convergence itself. mu and R_mu exist but are not given, so each
instance is tried on a LADDER of cones (mu, R) = (mu_0 4^-k, 2^(k+1) ||p_mm||), k = 0..3, with
mu_0 = min(0.1, 1/(4 (||p_mm|| D)^2)), D the longest (ATT-SVM) row ||k_{i,alpha_i} - k_it||:
below that angle every point of the cone keeps every constraint value positive. On each rung
`starts` seeded points of C_{mu,R} start GD on the cancellation-free log-domain gradient with
eta = 1/L_emp, L_emp the largest empirical Lipschitz ratio of grad L at `points` seeded points of
the rung's cone (Lemma 6's L_p holds everywhere but is orders of magnitude larger there, and
its step makes no visible progress at these norms, NOTES.md), for STEPS x horizon iterations, extended to 4x while a start is undecided, and
each start's limit is judged by `attnsvm.dynamics.limits` (the increments -grad L align with
p_mm(beta) of the selected tokens beta within TOL.align, ||p_t|| grows over H/4, H/2, H, and
1 - corr(p_t, p_mm(beta)) does not increase over the last octave or is below TOL.floor). The
conclusion holds as soon as one rung has every start converging to p_mm(alpha) with alpha
selected; it fails when on every rung some start converges (confirmed at 4x the horizon) to
the direction of another selection while Lemma 7's premises hold there (for a locally optimal
alpha, a rung where they fail is not yet the theorem's cone: the theorem only says some
(mu, R_mu) exists; for an alpha that is not, no cone holds and the premises are not asked);
otherwise it is
undecided. The step 1/L_emp stands in for the theorem's 1/L_p, whose only use in the proof is
the descent lemma: a rung counts (either way) only when the risk never rose along its runs
(at the recorded steps); else the step was above the smoothness on the path and the rung is
undecided. 1 - corr(p_t, p_mm) at the
start and at the horizon are reported (measures `worst_initial_corr_gap`, `worst_corr_gap`).

Lemma 7's premises, which the paper's proof (Appendix B.4) uses, are measured on every rung
alongside (the outline's numeric steps 1-2, `lemma7` in the detail): L1/L2,
<-grad L(p), p_mm> > 0 at `points` seeded points of C_{mu,R'} for R' = R, 2R, 4R, 8R (read
from the log-domain gradient direction; |corr| <= TRUST is untrusted), and L3,
rho(p) = <grad L, p/||p||> / <grad L, p_mm/||p_mm||> <= 1 + PI_TOL at 8R."""

import numpy as np

from attnsvm import dynamics
from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import gaussian_datasets, just, keyed_datasets, sampled_from, seeds
from attnsvm.dynamics import limits
from attnsvm.svm import geometry

RUNGS = 4
BANDS = (1.0, 2.0, 4.0, 8.0)
TRUST = 1e-9
PI_TOL = 0.05
STEPS = 200
LIP_DELTA = 1e-4                    # perturbation of the empirical Lipschitz ratio, in units of R
TOL = limits.Tolerances(align=0.05, floor=1e-3)


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


def ladder(sel) -> list[tuple[float, float]]:
    """(mu, R/||p_mm||) per rung: mu_0 4^-k, 2^(k+1) (see the module docstring)."""
    D = float(np.linalg.norm(sel.result.problem.A, axis=1).max())
    mu0 = min(0.1, 0.25 / (float(np.linalg.norm(sel.p_mm)) * D) ** 2)
    return [(mu0 / 4 ** k, 2.0 ** (k + 1)) for k in range(RUNGS)]


def empirical_lipschitz(ds, loss, q, mu, R, rng, points) -> float:
    """The largest ratio ||grad L(p) - grad L(p')|| / ||p - p'|| over `points` seeded points p of
    C_{mu,R}(q) and p' = p + a perturbation of size ~LIP_DELTA R: the local smoothness where GD
    starts (Lemma 6's L_p is valid everywhere but orders of magnitude larger there, NOTES.md)."""
    P = geometry.sample_cone(q, mu, R, rng, size=points)
    Q = P + rng.normal(size=P.shape) * LIP_DELTA * R / np.sqrt(P.shape[1])
    g = dynamics.Problem.from_datasets([ds] * (2 * points), loss).grad(model.t(np.concatenate([P, Q])))
    G = (g.direction * g.log_norm.exp()[:, None]).cpu().numpy()
    return float(np.max(np.linalg.norm(G[:points] - G[points:], axis=1) / np.linalg.norm(P - Q, axis=1)))


def directional_runs(ds, loss, alpha, q, mu, R, rng, starts, points, steps) -> dict:
    """GD with eta = 1/L_emp (`empirical_lipschitz` on the rung's cone; cancellation-free log-domain
    gradient) from `starts` seeded points of C_{mu,R}(q), judged by the finite-horizon machinery
    (`attnsvm.dynamics.limits.run_to_limit`: the increments -grad L align with p_mm(beta) of the
    selected tokens beta, norm growth, 1 - corr trend), extended to 4x while a start is undecided."""
    L = empirical_lipschitz(ds, loss, q, mu, R, rng, points)
    P0 = geometry.sample_cone(q, mu, R, rng, size=starts)
    if not L > 0:
        return {"eta": None, "kinds": ["undecided"] * starts, "reasons": ["gradient underflow: no empirical step"],
                "converged_to_alpha": False, "converged_elsewhere": False}
    problem = dynamics.Problem.from_datasets([ds] * starts, loss)
    rule = dynamics.GD(1.0 / L)
    tr, lims = limits.run_to_limit(ds, problem, rule, P0, steps, tol=TOL)
    qh = q / np.linalg.norm(q)
    V = tr.value.cpu().numpy()                                                # (rows, starts)
    descent = bool(np.all(np.diff(V, axis=0) <= 1e-12 * np.abs(V[:-1])))     # the descent lemma's premise held
    P = tr.p.cpu().numpy()                                                    # (rows, starts, d)
    gap = 1 - np.einsum("rbd,d->rb", P, qh) / np.linalg.norm(P, axis=-1)
    to_alpha = [l.kind != "undecided" and list(l.alpha) == list(alpha) for l in lims]
    elsewhere = [l.kind != "undecided" and list(l.alpha) != list(alpha) for l in lims]
    align = [(l.detail.get("to_gmm") if l.kind == "gmm" else l.detail.get("to_selected") or l.detail.get("to_gmm") or {})
             .get("align_gap", [None])[-1] for l in lims]
    return {"eta": 1.0 / L, "empirical_lipschitz": L, "horizon": tr.steps[-1], "kinds": [l.kind for l in lims],
            "selected": [list(l.alpha) for l in lims], "reasons": [l.reason for l in lims if l.reason],
            "initial_corr_gap": gap[0].tolist(), "final_corr_gap": gap[-1].tolist(),
            "max_corr_gap": float(gap.max()), "align_gap": align, "descent": descent,
            "converged_to_alpha": all(to_alpha), "converged_elsewhere": any(elsewhere)}


def local_convergence(inst, budget) -> Outcome:
    """Theorem 3's conclusion on the cone ladder: a rung holds when every GD start converges (in
    the finite-horizon sense) to p_mm(alpha) and selects alpha; the conclusion holds as soon as one
    rung does, fails when on every rung some start converges, confirmed at 4x the horizon, to
    another selection's direction, and is undecided otherwise. Lemma 7's premises (L1-L3) are
    measured on each rung alongside (the outline's numeric steps)."""
    ds, P = inst.dataset, inst.params
    sel = geometry.select(ds, P["alpha"])
    q = sel.p_mm
    rng = np.random.default_rng(P["seed"])
    rungs, undecided = [], []
    steps = int(STEPS * budget.horizon)
    theorem_applies = locally_optimal(inst)     # else (a necessity instance) no cone can hold, premises or not
    for mu, m in ladder(sel):
        R = m * float(np.linalg.norm(q))
        runs = directional_runs(ds, P["loss"], P["alpha"], q, mu, R, rng, P["starts"], P["points"], steps)
        grad = gradient_conditions(ds, P["loss"], q, mu, R, rng, P["points"])
        rung = {"mu": mu, "R_over_norm_p_mm": m, "gd": runs, "lemma7": {
            **grad, "L1_L2": grad["min_corr_negrad_pmm"] is not None and grad["min_corr_negrad_pmm"] > 0,
            "L3": grad["max_rho_top_band"] is not None and grad["max_rho_top_band"] <= 1 + PI_TOL}}
        rungs.append(rung)
        premises = rung["lemma7"]["L1_L2"] and rung["lemma7"]["L3"] or not theorem_applies
        if not runs.get("descent", False):
            undecided.append(f"mu={mu:.3g}, R={m}||p_mm||: the risk rose along a run (eta = 1/L_emp is above the "
                             "smoothness on its path; the theorem's eta <= 1/L_p keeps GD descending)")
            continue
        if runs["converged_to_alpha"]:
            return Outcome(True, detail={"alpha": list(P["alpha"]), "p_mm": q.tolist(), "passing_rung": rung,
                                         "rungs_tried": len(rungs), "worst_corr_gap": max(runs["final_corr_gap"]),
                                         "worst_initial_corr_gap": max(runs["initial_corr_gap"]),
                                         "worst_align_gap": max(a for a in runs["align_gap"] if a is not None),
                                         "horizon": runs["horizon"], "lemma7_premises_held": rung["lemma7"]["L1_L2"]
                                         and rung["lemma7"]["L3"]})
        if not runs["converged_elsewhere"]:
            undecided.append(f"mu={mu:.3g}, R={m}||p_mm||: " + (runs["reasons"] or ["undecided"])[0])
        elif not premises:
            undecided.append(f"mu={mu:.3g}, R={m}||p_mm||: GD left for another selection where Lemma 7's premises "
                             "fail (L1/L2 or L3): the theorem's cone C_(mu,R_mu) lies beyond this rung")
    detail = {"alpha": list(P["alpha"]), "p_mm": q.tolist(), "rungs": rungs}
    if undecided:
        return Outcome(None, detail=detail, reason="; ".join(undecided))
    return Outcome(False, detail=detail)


def alpha_instances(locally_opt: bool = True) -> Space:
    """A dataset (Figure-1 keyed construction or Gaussian, n 1..2, T 2..3, d 2) and alpha chosen
    among its selections that are locally optimal (or, with locally_opt False, feasible but NOT
    locally optimal: an SVM-neighbour has a score at least the selected token's); alpha None
    (rejected by the hypotheses) when there is none."""
    keyed = keyed_datasets(n=(1, 2), T=(2, 3), dk=2, labels="positive")
    gauss = gaussian_datasets(n=(1, 2), T=(2, 3), d=2)

    def generate(c):
        ds = c.sampled_from([keyed, gauss]).generate(c)
        sels = [geometry.select(ds, a) for a in geometry.candidate_alphas(ds, 64)]
        pool = [s for s in sels if s.feasible and s.certified and s.locally_optimal == locally_opt]
        alpha = list(pool[c.integer(0, len(pool) - 1, "index")].alpha) if pool else None
        return Instance(ds, {"alpha": alpha, "loss": c.sampled_from(sorted(LOSSES)), "seed": c.integer(0, 2**16, "seed"),
                             "points": 16, "starts": 4})

    return Space(generate, f"keyed or Gaussian datasets n (1, 2), T (2, 3), d 2; alpha {'' if locally_opt else 'not '}"
                           "locally optimal; params alpha, loss, seed, points, starts",
                 params={"alpha": Space(lambda c: None, "one of the dataset's selections"), "loss": sampled_from(sorted(LOSSES)), "seed": seeds(0, 2**16), "points": just(16),
                         "starts": just(4)})


def _instances(dropped):
    return alpha_instances(locally_opt="locally_optimal" not in dropped)


FEASIBLE = Hypothesis("feasible", "ATT-SVM(alpha) is feasible (exact KKT certificate)", feasible)
LOCALLY_OPTIMAL = Hypothesis("locally_optimal", "alpha is locally optimal: every SVM-neighbour scores strictly lower "
                             "(exact)", locally_optimal)

claim = Claim(
    name="theorem3",
    evaluations=45,
    statement="Assumption A, alpha locally optimal => exists mu, R_mu: GD (eta <= 1/L_p) from C_{mu,R_mu}(p_mm(alpha)) "
              "has ||p_t|| -> oo and p_t/||p_t|| -> p_mm/||p_mm|| (measured with GD at eta = 1/(empirical Lipschitz ratio in the cone))",
    hypotheses=(
        hyp.get("loss.assumption_A"),
        FEASIBLE,
        LOCALLY_OPTIMAL,
    ),
    conclusion=local_convergence,
    instances=_instances,
    proxy=f"ladder of {RUNGS} cones (mu_0 4^-k, R = 2^(k+1) ||p_mm||), mu_0 = min(0.1, 1/(4 (||p_mm|| max row "
          f"norm)^2)); per rung `starts` seeded cone starts run GD (log-domain gradient, eta = 1/L_emp, the "
          f"largest ratio ||grad L(p) - grad L(p')||/||p - p'|| at `points` cone points, |p - p'| ~ {LIP_DELTA} R) for "
          f"{STEPS} x horizon steps, extended to 4x while undecided; a start converges to p_mm(beta) of "
          f"its selected tokens beta when at the horizon 1 - corr(-grad L, p_mm(beta)) <= {TOL.align}, ||p_t|| grows "
          f"over H/4, H/2, H and 1 - corr(p_t, p_mm(beta)) is not increasing over the last octave (or <= {TOL.floor}); "
          f"holds if on some rung every start converges with beta = alpha, fails if on every rung a start converges "
          f"elsewhere (confirmed at 4x); Lemma 7 (L1-L3) measured alongside",
    measures=("worst_corr_gap", "worst_initial_corr_gap", "worst_align_gap", "horizon"),
    horizon=f"{STEPS} x horizon GD steps (up to 4x)",
    tolerance=f"align {TOL.align}, floor {TOL.floor}",
)
