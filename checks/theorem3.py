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
its step makes no visible progress at these norms, NOTES.md), for STEPS x horizon iterations, extended to 4x while a
start is undecided, and each start's limit is judged by `attnsvm.dynamics.limits` (the increments -grad L align with
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
rho(p) = <grad L, p/||p||> / <grad L, p_mm/||p_mm||> <= 1 + PI_TOL at 8R.

Batched: on each rung, the instances still open (of one shape and loss) run together: their
Lipschitz probes and Lemma-7 points are one gradient call, their GD starts one `limits.run_gd`
(one step size per instance), their limits one `limits.classify_all`; each instance draws its
points from its own seeded generator in the same order as alone, so its outcome does not depend
on its batch. The instance space is a `Space`; the necessity search is counterexamples/theorem3.py."""

import numpy as np

from attnsvm import dynamics
from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Instance, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import (
    gaussian_datasets,
    just,
    keyed_datasets,
    sampled_from,
    seeds,
)
from attnsvm.dynamics import limits
from attnsvm.dynamics.wlimits import grouped
from attnsvm.svm import geometry

RUNGS = 4
BANDS = (1.0, 2.0, 4.0, 8.0)
TRUST = 1e-9
PI_TOL = 0.05
STEPS = 200
MAX_FACTOR = 4                      # a rung's runs are extended to this x the horizon while a start is undecided
LIP_DELTA = 1e-4                    # perturbation of the empirical Lipschitz ratio, in units of R
TOL = limits.Tolerances(align=0.05, floor=1e-3)


def ladder(sel) -> list[tuple[float, float]]:
    """(mu, R/||p_mm||) per rung: mu_0 4^-k, 2^(k+1) (see the module docstring)."""
    D = float(np.linalg.norm(sel.result.problem.A, axis=1).max())
    mu0 = min(0.1, 0.25 / (float(np.linalg.norm(sel.p_mm)) * D) ** 2)
    return [(mu0 / 4 ** k, 2.0 ** (k + 1)) for k in range(RUNGS)]


def _grads(insts, loss, P_list):
    """One gradient call for every instance's points (P_list[j] (m_j, d) on insts[j]'s risk)."""
    counts = [len(P) for P in P_list]
    prob = dynamics.Problem.from_datasets([inst.dataset for inst, m in zip(insts, counts) for _ in range(m)], loss)
    g = prob.grad(model.t(np.concatenate(P_list)))
    cut = np.cumsum([0] + counts)
    return [(g.direction[cut[j]:cut[j + 1]].numpy(), g.log_norm[cut[j]:cut[j + 1]].numpy()) for j in range(len(insts))]


def lipschitz_points(q, mu, R, rng, points):
    """`points` seeded points p of C_{mu,R}(q) and p' = p + a perturbation of size ~LIP_DELTA R."""
    P = geometry.sample_cone(q, mu, R, rng, size=points)
    return np.concatenate([P, P + rng.normal(size=P.shape) * LIP_DELTA * R / np.sqrt(P.shape[1])])


def empirical_lipschitz(PQ, direction, log_norm) -> float:
    """The largest ratio ||grad L(p) - grad L(p')|| / ||p - p'|| over the probe pairs: the local
    smoothness where GD starts (Lemma 6's L_p is valid everywhere but orders of magnitude larger
    there, NOTES.md)."""
    m = len(PQ) // 2
    G = direction * np.exp(log_norm)[:, None]
    return float(np.max(np.linalg.norm(G[:m] - G[m:], axis=1) / np.linalg.norm(PQ[:m] - PQ[m:], axis=1)))


def gradient_conditions(P, direction, q, points) -> dict:
    """Lemma 7 at points of C_{mu,R'} (R' = R x BANDS): min corr(-grad L, p_mm) and max rho at 8R."""
    qh = q / np.linalg.norm(q)
    g = direction
    c_mm = -(g @ qh)                                        # corr(-grad L, p_mm) in [-1, 1]
    c_p = -np.einsum("bd,bd->b", g, P / np.linalg.norm(P, axis=1, keepdims=True))
    trusted = np.abs(c_mm) > TRUST
    top = np.arange(len(P)) >= (len(BANDS) - 1) * points
    rho = np.where(trusted & (c_mm > 0) & top, c_p / np.where(c_mm > 0, c_mm, 1.0), -np.inf)
    worst = int(np.argmin(np.where(trusted, c_mm, np.inf)))
    return {"trusted": int(trusted.sum()), "min_corr_negrad_pmm": float(c_mm[worst]) if trusted.any() else None,
            "worst_point": P[worst].tolist(), "max_rho_top_band": float(rho.max()) if np.isfinite(rho.max()) else None}


def directional_runs(insts, loss, states, steps) -> list[dict]:
    """One rung for instances of one shape and loss: GD with eta = 1/L_emp from `starts` seeded points of
    C_{mu,R}(q) each (cancellation-free log-domain gradient), judged by the finite-horizon machinery
    (`limits.classify_all`: the increments -grad L align with p_mm(beta) of the selected tokens
    beta, norm growth, 1 - corr trend), runs extended to MAX_FACTOR x while a start is undecided or
    converges elsewhere; then Lemma 7's premises at `points` cone points per band. `states[j]`:
    (rng, alpha, q, mu, R) of insts[j] (its rng advanced in the order of the one-instance check)."""
    P = [inst.params for inst in insts]
    probes = [lipschitz_points(q, mu, R, rng, p["points"]) for (rng, _, q, mu, R), p in zip(states, P)]
    Ls = [empirical_lipschitz(PQ, *g) for PQ, g in zip(probes, _grads(insts, loss, probes))]
    P0 = [geometry.sample_cone(q, mu, R, rng, size=p["starts"]) for (rng, _, q, mu, R), p in zip(states, P)]
    out: list[dict | None] = [None] * len(insts)
    live = [j for j, L in enumerate(Ls) if L > 0]
    for j, L in enumerate(Ls):
        if not L > 0:
            out[j] = {"eta": None, "kinds": ["undecided"] * P[j]["starts"],
                      "reasons": ["gradient underflow: no empirical step"],
                      "converged_to_alpha": False, "converged_elsewhere": False}
    if live:
        datasets = [insts[j].dataset for j in live for _ in range(P[j]["starts"])]
        cols = np.cumsum([0] + [P[j]["starts"] for j in live])
        problem = dynamics.Problem.from_datasets(datasets, loss)
        etas = np.concatenate([[1.0 / Ls[j]] * P[j]["starts"] for j in live])
        tr = limits.run_gd(problem, etas, np.concatenate([P0[j] for j in live]), steps)
        lims = limits.classify_all(datasets, problem, tr, TOL)
        redo = [k for k in range(len(live)) if any(l.kind != "gmm" for l in lims[cols[k]:cols[k + 1]])]
        if MAX_FACTOR > 1 and redo:
            rows = np.concatenate([np.arange(cols[k], cols[k + 1]) for k in redo])
            sub = dynamics.Problem(problem.K[rows], problem.gamma[rows], problem.loss)
            more = limits.run_gd(sub, etas[rows], tr.final[rows].numpy(), (MAX_FACTOR - 1) * steps)
            joined = limits.joined(tr, rows, more)
            relims = limits.classify_all([datasets[r] for r in rows], sub, joined, TOL)
        for k, j in enumerate(live):
            b = slice(cols[k], cols[k + 1])
            if k in redo:
                at = [int(np.flatnonzero(rows == r)[0]) for r in range(cols[k], cols[k + 1])]
                run, ls = limits.Descent(joined, at), [relims[a] for a in at]
            else:
                run, ls = limits.Descent(tr, list(range(cols[k], cols[k + 1]))), lims[b]
            out[j] = _rung(states[j], Ls[j], run, ls)
    return out


def _rung(state, L, run: limits.Descent, lims) -> dict:
    _, alpha, q, _, _ = state
    qh = q / np.linalg.norm(q)
    V = run.tr.value[:, run.cols].cpu().numpy()                                  # (rows, starts)
    descent = bool(np.all(np.diff(V, axis=0) <= 1e-12 * np.abs(V[:-1])))       # the descent lemma's premise held
    Pt = run.p(list(range(len(run.tr.steps))))                                   # (rows, starts, d)
    gap = 1 - np.einsum("rbd,d->rb", Pt, qh) / np.linalg.norm(Pt, axis=-1)
    to_alpha = [l.kind != "undecided" and list(l.alpha) == list(alpha) for l in lims]
    elsewhere = [l.kind != "undecided" and list(l.alpha) != list(alpha) for l in lims]
    align = [(l.detail.get("to_gmm") if l.kind == "gmm"
              else l.detail.get("to_selected") or l.detail.get("to_gmm") or {})
             .get("align_gap", [None])[-1] for l in lims]
    return {"eta": 1.0 / L, "empirical_lipschitz": L, "horizon": run.tr.steps[-1], "kinds": [l.kind for l in lims],
            "selected": [list(l.alpha) for l in lims], "reasons": [l.reason for l in lims if l.reason],
            "initial_corr_gap": gap[0].tolist(), "final_corr_gap": gap[-1].tolist(),
            "max_corr_gap": float(gap.max()), "align_gap": align, "descent": descent,
            "converged_to_alpha": all(to_alpha), "converged_elsewhere": any(elsewhere)}


def local_convergence_group(insts, budget) -> list[Outcome]:
    """Theorem 3's conclusion on the cone ladder for instances of one shape and loss: a rung holds
    when every GD start converges (in the finite-horizon sense) to p_mm(alpha) and selects alpha; the
    conclusion holds as soon as one rung does, fails when on every rung some start converges,
    confirmed at MAX_FACTOR x the horizon, to another selection's direction, and is undecided
    otherwise. Lemma 7's premises (L1-L3) are measured on each rung alongside."""
    loss = insts[0].params["loss"]
    sels = [geometry.select(inst.dataset, inst.params["alpha"]) for inst in insts]
    rngs = [np.random.default_rng(inst.params["seed"]) for inst in insts]
    ladders = [ladder(sel) for sel in sels]
    applies = [hyp.get("att_svm.locally_optimal").decide(inst) for inst in insts]   # else no cone can hold
    rungs = [[] for _ in insts]
    undecided = [[] for _ in insts]
    done: list[Outcome | None] = [None] * len(insts)
    steps = int(STEPS * budget.horizon)
    for k in range(RUNGS):
        open_ = [j for j in range(len(insts)) if done[j] is None]
        if not open_:
            break
        states = []
        for j in open_:
            mu, m = ladders[j][k]
            states.append((rngs[j], insts[j].params["alpha"], sels[j].p_mm, mu,
                           m * float(np.linalg.norm(sels[j].p_mm))))
        runs = directional_runs([insts[j] for j in open_], loss, states, steps)
        pts = [np.concatenate([geometry.sample_cone(st[2], st[3], st[4] * b, st[0], size=insts[j].params["points"])
                               for b in BANDS]) for j, st in zip(open_, states)]
        grads = _grads([insts[j] for j in open_], loss, pts)
        for j, st, runs_j, Pj, (D, _) in zip(open_, states, runs, pts, grads):
            mu, m = ladders[j][k]
            grad = gradient_conditions(Pj, D, st[2], insts[j].params["points"])
            rung = {"mu": mu, "R_over_norm_p_mm": m, "gd": runs_j, "lemma7": {
                **grad, "L1_L2": grad["min_corr_negrad_pmm"] is not None and grad["min_corr_negrad_pmm"] > 0,
                "L3": grad["max_rho_top_band"] is not None and grad["max_rho_top_band"] <= 1 + PI_TOL}}
            rungs[j].append(rung)
            premises = rung["lemma7"]["L1_L2"] and rung["lemma7"]["L3"] or not applies[j]
            q = sels[j].p_mm
            if not runs_j.get("descent", False):
                undecided[j].append(f"mu={mu:.3g}, R={m}||p_mm||: the risk rose along a run (eta = 1/L_emp is above "
                                    "the smoothness on its path; the theorem's eta <= 1/L_p keeps GD descending)")
            elif runs_j["converged_to_alpha"]:
                done[j] = Outcome(True, detail={"alpha": list(insts[j].params["alpha"]), "p_mm": q.tolist(),
                                                "passing_rung": rung, "rungs_tried": len(rungs[j]),
                                                "worst_corr_gap": max(runs_j["final_corr_gap"]),
                                                "worst_initial_corr_gap": max(runs_j["initial_corr_gap"]),
                                                "worst_align_gap": max(a for a in runs_j["align_gap"] if a is not None),
                                                "horizon": runs_j["horizon"],
                                                "lemma7_premises_held": (rung["lemma7"]["L1_L2"]
                                                                         and rung["lemma7"]["L3"])})
            elif not runs_j["converged_elsewhere"]:
                undecided[j].append(f"mu={mu:.3g}, R={m}||p_mm||: " + (runs_j["reasons"] or ["undecided"])[0])
            elif not premises:
                undecided[j].append(f"mu={mu:.3g}, R={m}||p_mm||: GD left for another selection where Lemma 7's "
                                    "premises fail (L1/L2 or L3): the theorem's cone C_(mu,R_mu) lies beyond this rung")
    for j in range(len(insts)):
        if done[j] is None:
            detail = {"alpha": list(insts[j].params["alpha"]), "p_mm": sels[j].p_mm.tolist(), "rungs": rungs[j]}
            done[j] = Outcome(None, detail=detail, reason="; ".join(undecided[j])) if undecided[j] else \
                Outcome(False, detail=detail)
    return done


@batched
def local_convergence(insts, budget):
    return grouped([(i.dataset.n, i.dataset.T, i.dataset.d, i.params["loss"]) for i in insts],
                   lambda ks: local_convergence_group([insts[k] for k in ks], budget))


PARAMS = {"alpha": Space(lambda c: None, "one of the dataset's selections"), "loss": sampled_from(sorted(LOSSES)),
          "seed": seeds(0, 2**16), "points": just(16), "starts": just(4)}


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
        return Instance(ds, {"alpha": alpha, "loss": c.sampled_from(sorted(LOSSES)),
                             "seed": c.integer(0, 2**16, "seed"), "points": 16, "starts": 4})

    return Space(generate, f"keyed or Gaussian datasets n (1, 2), T (2, 3), d 2; alpha {'' if locally_opt else 'not '}"
                           "locally optimal; params alpha, loss, seed, points, starts", params=PARAMS)


claim = Claim(
    name="theorem3",
    evaluations=200,
    statement="Assumption A, alpha locally optimal => exists mu, R_mu: GD (eta <= 1/L_p) from C_{mu,R_mu}(p_mm(alpha)) "
              "has ||p_t|| -> oo and p_t/||p_t|| -> p_mm/||p_mm|| (measured with GD at eta = 1/(empirical "
              "Lipschitz ratio in the cone))",
    hypotheses=hyp.of("theorem3"),
    conclusion=local_convergence,
    instances=lambda dropped: alpha_instances(),
    proxy=f"ladder of {RUNGS} cones (mu_0 4^-k, R = 2^(k+1) ||p_mm||), mu_0 = min(0.1, 1/(4 (||p_mm|| max row "
          f"norm)^2)); per rung `starts` seeded cone starts run GD (log-domain gradient, eta = 1/L_emp, the "
          f"largest ratio ||grad L(p) - grad L(p')||/||p - p'|| at `points` cone points, |p - p'| ~ {LIP_DELTA} R) for "
          f"{STEPS} x horizon steps, extended to {MAX_FACTOR}x while undecided; a start converges to p_mm(beta) of "
          f"its selected tokens beta when at the horizon 1 - corr(-grad L, p_mm(beta)) <= {TOL.align}, ||p_t|| grows "
          f"over H/4, H/2, H and 1 - corr(p_t, p_mm(beta)) is not increasing over the last octave (or <= {TOL.floor}); "
          f"holds if on some rung every start converges with beta = alpha, fails if on every rung a start converges "
          f"elsewhere (confirmed at {MAX_FACTOR}x); Lemma 7 (L1-L3) measured alongside",
    measures=("worst_corr_gap", "worst_initial_corr_gap", "worst_align_gap", "horizon"),
    horizon=f"{STEPS} x horizon GD steps (up to {MAX_FACTOR}x)",
    tolerance=f"align {TOL.align}, floor {TOL.floor}",
    extend=(),          # the ladder's runs extend themselves (MAX_FACTOR); about one instance in seven stays undecided
    tolerances={"align": TOL.align, "floor": TOL.floor, "pi": PI_TOL, "trust": TRUST, "lipschitz_delta": LIP_DELTA},
)
