"""Transformers as SVMs, the (K, Q) regularization path (paper B claim 2,
docs/statements.md#tfsvm-regpath-kq; the paper's Section 3,
our reconstruction of the statement): with (K, Q)(R) = argmin L(K Q^T) over
||K||_F^2 + ||Q||_F^2 <= 2R (K, Q in R^{d x m}), under Assumption A, strict optimality and
(Att-SVM) for opt feasible, K Q^T / R converges to the set of nuclear-norm solutions
W*_mm(opt)/||W*_mm||_* when m >= d, and, when m < d, to the solutions of the rank-constrained
problem min ||W||_* s.t. the (Att-SVM) rows, rank W <= m.

The path is `dynamics.regpath.kq_path` (the core path solver on theta = (K, Q)). The target:
the nuclear SVM (m >= d, Clarabel's SDP, `svm.wlift.nuclear_w_svm`), or for m < d the
rank-constrained problem by multi-start SLSQP on (K, Q) (`svm.wlift.rank_constrained_svm`: best
found, not certified; a path that beats it has a negative excess and holds).

The check DISCRIMINATES: hypothesis `svms_differ` keeps only instances where the Frobenius W_mm
and the target differ (corr(W_mm, target) < SVM_CORR), so a path that converged to W_mm (the
W-parameterisation's limit) would fail it; dropping `kq_parameterisation` (running the Frobenius
path on the same data) is the necessity witness of that.

W*_mm need not be unique, so the measure is the nuclear-norm optimality of the direction
(as in tfsvm-nuclear): excess_k = ||W(R_k)/margin||_* / value - 1, W scaled to margin 1 on the
(Att-SVM) rows of opt, value = the target's nuclear norm. Proxy (named): R_k = 2^k value, k < G
(G = 6 at quick, +1 per horizon doubling), judged by `tfsvm_regpath_w.settle` with tolerance
EXCESS_TOL (the excess decays like 1/R); INCONCLUSIVE when a solve did not settle or the path
does not separate opt at the largest radius."""

import numpy as np

from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Instance, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.hypotheses.regpath import SVM_CORR
from attnsvm.claims.spaces import Space
from attnsvm.dynamics import cross, paths, wpaths
from attnsvm.svm.margin import w_svm_problem

EXCESS_TOL = 0.03
PLATEAU = 1e-3
FLOOR = 1e-9
LAST = 3
GRID = 6
ITERS = 15          # solver iterations per radius at horizon 1 (scaled with the horizon)


@batched
def path_to_target(insts, budget) -> list[Outcome]:
    mult = paths.grid(GRID, budget)
    outs: list = [None] * len(insts)
    jobs = []
    for k, inst in enumerate(insts):
        ds, P = inst.dataset, inst.params
        tg = wpaths.kq_target(ds, P["m"], P["seed"])
        if not tg["ok"]:
            outs[k] = Outcome(None, detail={"status": tg["status"]}, reason=f"SVM status {tg['status']}")
            continue
        rng = np.random.default_rng(P["seed"])
        starts_w = [np.ravel(tg["W"]), np.ravel(tg["W_mm"])] + wpaths.lmm_starts(ds)
        if P["param"] == "KQ":
            starts = np.array([wpaths.balanced(w.reshape(ds.d, ds.d), P["m"]) for w in starts_w]
                              + list(rng.normal(size=(2, 2 * ds.d * P["m"]))))
        else:
            starts = np.array(starts_w + list(rng.normal(size=(2, ds.d * ds.d))))
        jobs.append((k, tg, tg["value"] * mult, starts))
    kq = [j for j in jobs if insts[j[0]].params["param"] == "KQ"]
    w = [j for j in jobs if insts[j[0]].params["param"] != "KQ"]
    iters = int(ITERS * budget.horizon)
    solved = {}
    if kq:
        res = paths.kq_paths([insts[j[0]].dataset for j in kq], [insts[j[0]].params["loss"] for j in kq],
                             [insts[j[0]].params["m"] for j in kq], [j[2] for j in kq], [j[3] for j in kq], iters)
        for j, s in zip(kq, res):
            m = insts[j[0]].params["m"]
            solved[j[0]] = (s, np.stack([cross.KQ(insts[j[0]].dataset.d, m).to_p(th[None]).numpy()[0] for th in s.p]))
    if w:
        res = paths.linear_paths([insts[j[0]].dataset for j in w], [insts[j[0]].params["loss"] for j in w],
                                 [j[2] for j in w], [j[3] for j in w], iters, build=cross.w_problem)
        for j, s in zip(w, res):
            solved[j[0]] = (s, s.p)
    for k, tg, radii, _ in jobs:
        outs[k] = decide(insts[k], tg, radii, *solved[k])
    return outs


def decide(inst, tg, radii, solved: paths.Solved, W: np.ndarray) -> Outcome:
    ds, P = inst.dataset, inst.params
    rows = w_svm_problem(ds, model.optimal_tokens(ds).tolist())
    value = tg["value"]
    excess = []
    for w in W:
        Wn = cross.margin_normalized(w, rows)
        excess.append(np.inf if Wn is None else float(np.linalg.norm(Wn, "nuc") / value - 1))
    detail = {"m": P["m"], "param": P["param"], "target": "nuclear" if P["m"] >= ds.d else f"rank <= {P['m']}",
              "target_value": value, "nuclear_value": tg["nuclear_value"], "rank_binds": tg["rank_binds"],
              "corr_W_mm_target": tg["corr_W_mm_target"], "R_over_value": (radii / value).tolist(),
              "nuclear_excess": excess, "corr_with_W_mm": [float(1 - g) for g in paths.gaps_to(W, tg["W_mm"])],
              "status": solved.status, "final_excess": excess[-1],
              "loglog_slope_last": paths.loglog_slope(radii[-LAST:], [max(e, 1e-16) for e in excess[-LAST:]])
              if np.isfinite(excess[-LAST:]).all() else None}
    if not all(solved.settled()[-LAST:]):
        return Outcome(None, detail=detail, reason="path solve did not settle on the last radii")
    if not np.isfinite(excess[-1]):
        return Outcome(None, detail=detail, reason="the path does not separate opt at the largest radius")
    verdict = paths.settles(excess[-LAST:], EXCESS_TOL, PLATEAU, FLOOR)
    return Outcome(verdict, detail=detail, margin=EXCESS_TOL - excess[-1],
                   reason="" if verdict is not None else "excess above tolerance but still decreasing")


def kq_instances(param: str = "KQ", narrow: bool = True) -> Space:
    """Gaussian data (self- or cross-attention), n 2..4 (with n = 1 the SVMs coincide: W_mm has rank
    one), T 2..3, d 2..3, width m = d or (narrow) m in [1, d - 1], the path over `param`."""
    def generate(c) -> Instance:
        seed = c.integer(0, 2**16, "seed")
        n, T, d = c.integer(2, 4, "size"), c.integer(2, 3, "size"), c.integer(2, 3, "size")
        ds = wpaths.dataset(seed, n, T, d, c.sampled_from([False, True]))
        m = c.integer(1, d - 1, "size") if narrow and c.sampled_from([False, True]) else d
        return Instance(ds, {"m": m, "param": param, "loss": c.sampled_from(sorted(LOSSES)), "seed": seed})

    return Space(generate, f"Gaussian datasets n 2..4, T 2..3, d 2..3 (self- or cross-attention); m = d or in "
                           f"[1, d - 1]; path over {param}")


claim = Claim(
    name="tfsvm-regpath-kq",
    evaluations=200,
    statement="Assumption A, opt strictly optimal and feasible => the (K, Q) path (||K||^2 + ||Q||^2 <= 2R) converges "
              "in direction to a nuclear-norm W*_mm(opt) (m >= d) or to the rank-<= m nuclear SVM (m < d), on data "
              "where that limit differs from W_mm",
    hypotheses=hyp.of("tfsvm-regpath-kq"),
    conclusion=path_to_target,
    instances=lambda dropped: kq_instances(),
    extend=(2, 4),
    confirm=(4,),
    measures=("final_excess", "corr_W_mm_target", "rank_binds"),
    proxy=f"nuclear excess ||W(R)/margin||_* / value - 1 on R = 2^k value, k < {GRID} (sliding up one step per horizon "
          f"doubling; undecided: up to 2 more): holds if <= {EXCESS_TOL}, non-increasing and halved over the last "
          f"{LAST} radii, fails if above it without decreasing (relative {PLATEAU}), still so at 4x the radii; value: "
          f"Clarabel's nuclear SVM (m >= d) or multi-start SLSQP's rank-<= m optimum (m < d), discriminating where "
          f"corr(W_mm, target) < {SVM_CORR}; (K, Q)(R) by regpath.kq_path (multi-start, {ITERS} iterations x the "
          f"horizon)",
    tolerances={"excess": EXCESS_TOL, "plateau": PLATEAU, "floor": FLOOR, "window": LAST, "iterations": ITERS,
                "svm_corr": SVM_CORR, "residual": paths.RESIDUAL},
)
