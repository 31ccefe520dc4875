"""Transformers as SVMs, the (K, Q) regularization path (paper B claim 2,
docs/statements.md#tfsvm-regpath-kq; the paper's Section 3,
our reconstruction of the statement): with (K, Q)(R) = argmin L(K Q^T) over
||K||_F^2 + ||Q||_F^2 <= 2R (K, Q in R^{d x m}), under Assumption A, strict optimality and
(Att-SVM) for opt feasible, K Q^T / R converges to the set of nuclear-norm solutions
W*_mm(opt)/||W*_mm||_* when m >= d, and, when m < d, to the solutions of the rank-constrained
problem min ||W||_* s.t. the (Att-SVM) rows, rank W <= m.

The path is `dynamics.regpath.kq_path` (the core path solver on theta = (K, Q)). The target:
cvxpy's nuclear SVM (m >= d), or for m < d the rank-constrained problem by multi-start SLSQP on
(K, Q) (`svm.wlift.rank_constrained_svm`: best found, not certified; a path that beats it has a
negative excess and holds).

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
from hypothesis import strategies as st

from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import gaussian_dataset
from attnsvm.dynamics import cross, regpath
from attnsvm.dynamics.trends import loglog_slope
from attnsvm.svm import geometry, w_svm, wlift
from attnsvm.svm.margin import w_svm_problem
from attnsvm.results.checks.tfsvm_regpath_w import EXTEND, LAST, lmm_starts, settle, solve_path

EXCESS_TOL = 0.03
SVM_CORR = 0.99


def grid_size(budget) -> int:
    return 6 + max(0, int(round(np.log2(budget.horizon))))


def target(inst) -> dict:
    """The limit the statement names for the instance's width m: the nuclear SVM (m >= d) or the
    rank-<= m one (m < d), with W_mm(opt) and their correlation (computed once per instance)."""
    ds, m = inst.dataset, inst.params["m"]
    key = f"kq_target_m{m}"

    def compute():
        opt = model.optimal_tokens(ds).tolist()
        fro, nuc = w_svm(ds, opt), w_svm(ds, opt, norm="nuclear")
        out = {"ok": fro.ok and nuc.ok, "status": {"fro": fro.status, "nuclear": nuc.status}}
        if not out["ok"]:
            return out
        W_nuc, v_nuc = nuc.x.reshape(ds.d, ds.d), float(np.linalg.norm(nuc.x.reshape(ds.d, ds.d), "nuc"))
        if m >= ds.d:
            W, value = W_nuc, v_nuc
        else:
            value, W = wlift.rank_constrained_svm(ds, opt, m, seed=inst.params["seed"])
            if W is None:
                return {**out, "ok": False, "status": {**out["status"], "rank_constrained": "no feasible start"}}
        return {**out, "W_mm": fro.x, "W": W, "value": value, "nuclear_value": v_nuc,
                "corr_W_mm_target": geometry.corr(fro.x, W), "rank_binds": value / v_nuc - 1}
    return ds.memo(key, compute)


def path_to_target(inst, budget) -> Outcome:
    ds, P = inst.dataset, inst.params
    tg = target(inst)
    if not tg["ok"]:
        return Outcome(None, detail={"status": tg["status"]}, reason=f"SVM status {tg['status']}")
    opt = model.optimal_tokens(ds).tolist()
    rows = w_svm_problem(ds, opt)
    value = tg["value"]
    G = grid_size(budget)
    out = None
    for extra in range(EXTEND + 1):
        radii = value * 2.0 ** np.arange(G + extra)
        starts = [np.ravel(tg["W"]), np.ravel(tg["W_mm"])] + lmm_starts(ds)
        W, path = solve_path(ds, P["loss"], P["param"], radii, starts, P["seed"], m=P["m"])
        excess = []
        for w in W:
            Wn = cross.margin_normalized(w, rows)
            excess.append(np.inf if Wn is None else float(np.linalg.norm(Wn, "nuc") / value - 1))
        ok = regpath.settled(path)
        detail = {"m": P["m"], "param": P["param"], "target": "nuclear" if P["m"] >= ds.d else f"rank <= {P['m']}",
                  "target_value": value, "nuclear_value": tg["nuclear_value"], "rank_binds": tg["rank_binds"],
                  "corr_W_mm_target": tg["corr_W_mm_target"], "R_over_value": (radii / value).tolist(),
                  "nuclear_excess": excess, "corr_with_W_mm": [geometry.corr(w, tg["W_mm"]) for w in W],
                  "status": [s[0] for s in path.status], "final_excess": excess[-1],
                  "loglog_slope_last": loglog_slope(radii[-LAST:], [max(e, 1e-16) for e in excess[-LAST:]])
                  if np.isfinite(excess[-LAST:]).all() else None}
        if not all(ok[-LAST:]):
            return Outcome(None, detail=detail, reason="path solve did not settle on the last radii")
        if not np.isfinite(excess[-1]):
            return Outcome(None, detail=detail, reason="the path does not separate opt at the largest radius")
        verdict = settle(excess, EXCESS_TOL)
        out = Outcome(verdict, detail=detail, margin=EXCESS_TOL - excess[-1],
                      reason="" if verdict is not None else "excess above tolerance but still decreasing")
        if verdict is not None:
            return out
    return out


# ---- hypotheses ----------------------------------------------------------------------------

def gmm_feasible(inst) -> bool:
    """(Att-SVM) of the W-problem for opt is feasible (exact certificate on the lifted problem)."""
    sel = wlift.w_select(inst.dataset, model.optimal_tokens(inst.dataset))
    return sel.feasible and sel.certified


def kq_parameterisation(inst) -> bool:
    return inst.params["param"] == "KQ"


def svms_differ(inst) -> bool:
    """corr(W_mm(opt), target) < SVM_CORR: the Frobenius and the claimed limit are told apart."""
    tg = target(inst)
    return bool(tg["ok"]) and tg["corr_W_mm_target"] < SVM_CORR


@st.composite
def kq_instances(draw, dropped=frozenset()):
    """Gaussian data (self- or cross-attention), n >= 2 (with n = 1 the SVMs coincide: W_mm has
    rank one), width m = d or m in [1, d - 1]."""
    seed = draw(st.integers(0, 2**16))
    n, T, d = draw(st.integers(2, 4)), draw(st.integers(2, 3)), draw(st.integers(2, 3))
    ds = gaussian_dataset(seed, n, T, d, cross_queries=draw(st.booleans()))
    narrow = "kq_parameterisation" not in dropped and draw(st.booleans())
    m = draw(st.integers(1, d - 1)) if narrow else d
    return Instance(ds, {"m": m, "param": "W" if "kq_parameterisation" in dropped else "KQ",
                         "loss": draw(st.sampled_from(sorted(LOSSES))), "seed": seed})


def _instances(dropped):
    return kq_instances(dropped)


claim = Claim(
    name="tfsvm-regpath-kq",
    evaluations=8,
    statement="Assumption A, opt strictly optimal and feasible => the (K, Q) path (||K||^2 + ||Q||^2 <= 2R) converges in "
              "direction to a nuclear-norm W*_mm(opt) (m >= d) or to the rank-<= m nuclear SVM (m < d), on data where "
              "that limit differs from W_mm",
    hypotheses=(
        hyp.get("loss.assumption_A"),
        hyp.get("scores.strict_optimality"),
        Hypothesis("gmm_feasible", "the W-SVM for opt is feasible (exact KKT certificate)", gmm_feasible),
        Hypothesis("kq_parameterisation", "the path is over the (K, Q) ball ||K||^2 + ||Q||^2 <= 2R (not ||W||_F <= R)",
                   kq_parameterisation),
        Hypothesis("svms_differ", f"corr(W_mm(opt), claimed limit) < {SVM_CORR} (the check discriminates)", svms_differ),
    ),
    conclusion=path_to_target,
    instances=_instances,
    measures=("final_excess", "corr_W_mm_target", "rank_binds"),
    proxy=f"nuclear excess ||W(R)/margin||_* / value - 1 on R = 2^k value, k < 6 (+1 per horizon doubling, up to {EXTEND} "
          f"more while undecided): holds if <= {EXCESS_TOL}, non-increasing and halved over the last {LAST} radii, fails if above "
          f"it without decreasing (relative 1e-3); value: cvxpy's nuclear SVM (m >= d) or multi-start SLSQP's rank-<= m "
          "optimum (m < d); (K, Q)(R) by regpath.kq_path (multi-start, 300 iterations)",
)
