"""Transformers as SVMs, claim 6 (paper B,
docs/statements.md#tfsvm-mlp; Section 6 / Appendix D): with an MLP head, attention
trained by normalized GD may select SETS O_i of tokens, and the generalized SVM predicts the
limit W_t = W^fin + R_t W^mm: the component of W_t orthogonal to S_fin (the span of the
within-set rows (x_io - x_io') z_i^T) aligns with W^mm(O) (`cross.generalized_w_svm`), and the
composition inside each O_i matches the finite part W^fin = argmin_{W in S_fin} L_O(W), the risk
with attention restricted to the sets (L-BFGS on `cross.masked_risk`, gradient-norm checked).

Proxy: NGD (eta 0.1, steps x horizon) on W from 0 with the head h(x) = w2^T tanh(W1 x + b1)
(`MLPHead.random(d, width, default_rng(head_seed))`), every instance in one batch, padded to the
largest n and T of the space (`cross.mlp_normalized_gd`); runs where every set is a single token do
not apply (the claim is about sets; they are counted apart); O_i = tokens with softmax >= SET_TOL
at the horizon that did not fall below LEAVING x their probability at H/2 (a token leaving its set loses probability
geometrically as W grows; a set token's stays put in NGD's 2-cycle), the mass outside them must
still be shrinking, and W^fin must keep every set token above SET_TOL / 2
(else the set estimate is untrusted: a token is still leaving). Holds when 1 - corr(P_perp W_H,
W^mm(O)) <= TOL_DIR and W^fin's within-set probabilities lie within TOL_COMP of the interval spanned
by the run's at steps H-1 and H (NGD's fixed step leaves a 2-cycle around the finite minimiser); a
direction gap refutes only if its Aitken-extrapolated limit (H/4, H/2, H) exceeds TOL_DIR too and
||P_perp W|| grew by PERP_GROWTH over [H/4, H] (NGD spends its fixed step on the 2-cycle, so R_t can
grow like log t: a quick search met a run whose gap sat at 0.077 while ||W|| went from 6 to 10 over
128 x H); a
composition error refutes only if it did not shrink since H/2; a refutation must persist when the
run is repeated at CONFIRM x the horizon (engine option). Undecided runs are not re-run (EXTEND
empty): of 256 sampled instances, 122-124 select a multi-token set; undecided among those 40% at
the quick horizon, 37% at 2x, 31% at 4x, 27% at 8x (about 22% at 16x), mostly the direction gap
still falling (R_t grows like log t) or a set token still leaving, none failing: extensions cost
far more than the quick budget and still leave the share near the quarter, so the quick verdict is
SUPPORTED or INCONCLUSIVE (NOTES.md). EVALUATIONS: 480 runs, of which 220-260 apply at seeds 0-4.
The claim has no hypothesis to drop (counterexamples/tfsvm_mlp.py)."""

import numpy as np
import scipy.optimize
from threadpoolctl import threadpool_limits

from attnsvm import status as st
from attnsvm.attention.heads import MLPHead
from attnsvm.claims import Claim, Outcome, batched, gaussian
from attnsvm.claims.strategies import just, seeds
from attnsvm.dynamics import cross, wlimits
from attnsvm.dynamics.trends import limit_estimate
from attnsvm.svm import geometry

SET_TOL = 0.02
TOL_DIR = 0.05   # slow: NGD spends its fixed step on the finite part's 2-cycle, so W_perp grows slowly
TOL_COMP = 0.02
GRAD_TOL = 1e-6  # W^fin's gradient norm must be below this
LEAVING = 0.8    # a token whose probability fell below this fraction of its value at H/2 is leaving its set
PERP_GROWTH = 2  # a direction gap refutes only where ||P_perp W|| grew by this factor over [H/4, H]
CONFIRM = 4
EXTEND = ()        # undecided runs are not re-run: longer horizons decide few more (8 x H: 27% undecided) at a cost
N, T = (2, 3), (3, 4)   # the space's sizes: every run is padded to the largest (one batch for every shape)
PAD = (N[1], T[1])
EVALUATIONS = 480  # about half the runs select a set of two or more tokens (the rest do not apply): 200+ that apply


def head_of(inst) -> MLPHead:
    p = inst.params
    return MLPHead.random(inst.dataset.d, p["width"], np.random.default_rng(p["head_seed"]))


def finite_part(ds, head, sets, basis: np.ndarray):
    """W^fin = argmin over W = basis @ c of the risk with attention masked to the sets (L-BFGS on
    `cross.masked_risk`). Returns (W^fin flattened, gradient norm at it)."""
    mask = np.zeros((ds.n, ds.T), dtype=bool)
    for i, O in enumerate(sets):
        mask[i, list(O)] = True
    if basis.shape[1] == 0:
        return np.zeros(ds.d * ds.d), 0.0

    def f(c):
        value, grad = cross.masked_risk(ds, head, mask, basis @ c)
        return value, grad @ basis

    res = scipy.optimize.minimize(f, np.zeros(basis.shape[1]), jac=True, method="L-BFGS-B",
                                  options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 5000})
    return basis @ res.x, float(np.linalg.norm(res.jac))


def within_set(s: np.ndarray, sets) -> list[list[float]]:
    return [(s[i, list(O)] / s[i, list(O)].sum()).tolist() for i, O in enumerate(sets)]


def composition_error(now, before, predicted) -> float:
    """Largest distance of a predicted within-set probability from the interval spanned by the
    run's values at two consecutive steps: normalized GD with a fixed step ends in a 2-cycle
    around the finite part's minimiser, so the minimiser lies between consecutive iterates."""
    return max(max(0.0, min(a, b) - c, c - max(a, b)) for x, y, z in zip(now, before, predicted)
               for a, b, c in zip(x, y, z))


def measure(inst, Ws: dict, status: str) -> Outcome:
    """The outcome of one run, from its W at the steps `Ws` ('quarter', 'half', 'previous', 'end')."""
    ds = inst.dataset
    head = head_of(inst)
    probs = {k: cross.softmax_of(ds, W) for k, W in Ws.items()}
    s, half = probs["end"], probs["half"]
    sets = [sorted(int(t) for t in np.flatnonzero((s[i] >= SET_TOL) & (s[i] >= LEAVING * half[i])))
            for i in range(ds.n)]
    off = {k: float(max(1 - v[i, sets[i]].sum() for i in range(ds.n))) for k, v in probs.items()}
    detail = {"sets": sets, "max_set_size": max(len(O) for O in sets), "off_set_mass": off["end"],
              "probabilities": np.round(s, 4).tolist(), "run_status": status}
    if detail["max_set_size"] < 2:
        return Outcome(None, detail=detail, applies=False,
                       reason="every selected set is a single token: nothing about sets to check")
    if status != st.OK:                                      # a stopped run (zero direction) is undecided too
        return Outcome(None, detail=detail, reason=f"run {status}")
    if not (off["end"] < off["half"] or off["end"] < 1e-12):
        return Outcome(None, detail=detail, reason="mass outside the selected sets is not shrinking")
    res, N, E = cross.generalized_w_svm(ds, sets)
    detail["gen_svm_status"] = res.status
    if not res.ok:
        return Outcome(None, detail=detail, reason=f"generalized SVM status {res.status}")
    w_mm = N @ res.x
    perp = {k: N @ (N.T @ Ws[k]) for k in ("quarter", "half", "end")}
    gaps = [1 - geometry.corr(perp[k], w_mm) for k in ("quarter", "half", "end")]
    growth = float(np.linalg.norm(perp["end"]) / max(np.linalg.norm(perp["quarter"]), 1e-300))
    detail.update(gap_perp=gaps[-1], gap_perp_half=gaps[1], gap_perp_quarter=gaps[0], perp_growth=growth)
    basis = np.linalg.qr(E.T)[0] if len(E) else np.zeros((ds.d * ds.d, 0))
    w_fin, gnorm = finite_part(ds, head, sets, basis)
    detail["finite_part_grad_norm"] = gnorm
    if gnorm > GRAD_TOL:
        return Outcome(None, detail=detail, reason=f"W^fin not converged (gradient norm {gnorm:.1e})")
    mask = np.zeros((ds.n, ds.T), dtype=bool)
    for i, O in enumerate(sets):
        mask[i, O] = True
    pred = cross.softmax_of(ds, w_fin, mask)                 # attention restricted to the sets, as W^fin was fitted
    comp = {k: composition_error(within_set(probs[k], sets), within_set(probs[prev], sets), within_set(pred, sets))
            for k, prev in (("end", "previous"), ("half", "half"))}
    detail.update(composition=within_set(s, sets), predicted_composition=within_set(pred, sets),
                  composition_error=comp["end"], composition_error_half=comp["half"],
                  composition_cycle_width=max(abs(a - b) for x, y in zip(within_set(s, sets), within_set(
                      probs["previous"], sets)) for a, b in zip(x, y)))
    if min(min(x) for x in within_set(pred, sets)) < SET_TOL / 2:
        return Outcome(None, detail=detail, reason="set estimate inconsistent: W^fin pushes a set token out "
                                                   "(it is still leaving at the horizon)")
    fails = []
    if gaps[-1] > TOL_DIR:
        limit = limit_estimate(*gaps)
        detail["gap_perp_limit_estimate"] = limit
        if limit is None or limit <= TOL_DIR:
            return Outcome(None, detail=detail, reason=f"direction gap {gaps[-1]:.3g} > {TOL_DIR}, still converging")
        if growth < PERP_GROWTH:
            return Outcome(None, detail=detail, reason=f"direction gap {gaps[-1]:.3g} > {TOL_DIR}, but the component "
                                                       f"off S_fin grew only {growth:.3g}x over [H/4, H]: R_t has "
                                                       "barely moved")
        fails.append("direction")
    if comp["end"] > TOL_COMP:
        if comp["end"] < comp["half"]:
            return Outcome(None, detail=detail, reason=f"composition error {comp['end']:.3g} > {TOL_COMP}, shrinking")
        fails.append("composition")
    detail["failed"] = fails
    return Outcome(not fails, detail=detail)


@batched
def generalized_svm_predicts(insts, budget):
    with threadpool_limits(1):          # tiny BLAS calls (matmul, L-BFGS-B): threads only add overhead
        return _predicts(insts, budget)


def _predicts(insts, budget):
    def run(ks):
        group = [insts[k] for k in ks]
        p = group[0].params
        H = int(p["steps"] * budget.horizon)
        rows = {"quarter": H // 4, "half": H // 2, "previous": H - 1, "end": H}
        Ws, status = cross.mlp_normalized_gd([g.dataset for g in group], [head_of(g) for g in group], p["eta"], H,
                                             list(rows.values()), pad=PAD)
        return [measure(g, {name: Ws[r, j] for r, name in enumerate(rows)}, status[j]) for j, g in enumerate(group)]

    return wlimits.grouped([(i.dataset.d, i.params["width"], i.params["eta"], i.params["steps"]) for i in insts], run)


claim = Claim(
    name="tfsvm-mlp",
    evaluations=EVALUATIONS,
    statement="with an MLP head, NGD attention converges to W^fin + R W^mm(O): W^mm the generalized SVM of the "
              "selected sets O_i, W^fin the risk minimiser restricted to the sets",
    hypotheses=(),
    conclusion=generalized_svm_predicts,
    instances=lambda dropped: gaussian.instances(gaussian.datasets(n=N, T=T, d=3), head_seed=seeds(),
                                                 width=just(6), eta=just(0.1), steps=just(1000)),
    measures=("max_set_size", "gap_perp", "composition_error", "composition_cycle_width"),
    confirm=(CONFIRM,),
    extend=EXTEND,
    tolerances={"set": SET_TOL, "leaving": LEAVING, "direction_gap": TOL_DIR, "perp_growth": PERP_GROWTH,
                "composition": TOL_COMP, "finite_part_gradient": GRAD_TOL},
    proxy=f"NGD eta 0.1, H = 1000 x horizon steps from W = 0; sets: softmax >= {SET_TOL} at H and >= {LEAVING} x its "
          f"value at H/2; 1 - corr(P_perp W_H, "
          f"W^mm(O)) <= {TOL_DIR} and W^fin's within-set probabilities within {TOL_COMP} of the run's 2-cycle "
          f"(steps H-1, H); a direction gap refutes only where ||P_perp W|| grew {PERP_GROWTH}x over [H/4, H]; "
          f"refuting only a non-shrinking error that persists at {CONFIRM} x H",
)
