"""Finite-horizon evidence that a W-parameterised run converges in direction to a max-margin W
(Transformers as SVMs; docs/statements.md#tfsvm-frobenius): the proxy shared by tfsvm-frobenius,
tfsvm-nuclear, tfsvm-global and the sequence checks. Its tolerances are arguments: each check
keeps its own constants, so changing one check's tolerance changes no other verdict.

Per start of a run, at H/4, H/2 and H (`report`): the tokens alpha it selects at H, the mass
its attention leaves off them, and a measure against the SVM of those tokens, e.g.
gap = 1 - corr(W, W_mm(alpha)) (Frobenius) or the nuclear excess ||W / margin||_* /
||W*_mm(alpha)||_* - 1. `judge` decides a run's starts together:

- holds when every start is saturated (max_i (1 - s_{i,alpha_i}) < sat), its run and SVM solve
  are trusted, and its measure at H is <= tol;
- fails when a saturated start's measure exceeds tol and so does its limit, extrapolated from
  H/4, H/2, H by Aitken's delta-squared (`trends.limit_estimate`: exact for power-law decay, a
  plateau, both changes within `plateau` of the last value, extrapolates to itself), and it fell
  by at most the fraction `settle` of itself over the last octave (a measure still falling faster
  is undecided: an extrapolation from a decay that is not a power law, e.g. the slow direction of
  deeply saturated (K, Q) runs, can stop short);
- is undecided otherwise (unsaturated, untrusted, still converging or oscillating, or risen by
  more than the fraction `rise` over the last octave: a run leaving the selection it passes, e.g.
  at a saddle of the risk, moves away from that selection's SVM direction before it selects other
  tokens; or its report carries `transit`, a reason the selection cannot be a limit, e.g. not
  locally optimal, so its gap is a transient), with the reason.

Confirmation at longer horizons is the engine's (`Claim.confirm`), not this module's.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np

from attnsvm import status as st
from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.claims.claim import Outcome
from attnsvm.dynamics import cross
from attnsvm.dynamics.trends import limit_estimate
from attnsvm.svm import geometry, wlift

CHECKPOINTS = {"": 1, "_half": 2, "_quarter": 4}         # suffix -> k: the recorded step nearest H/k


def row(steps: Sequence[int], k: int) -> int:
    """Index of the recorded step nearest H/k (H the last)."""
    return min(range(len(steps)), key=lambda r: abs(steps[r] - steps[-1] / k))


def solve(ds: Dataset, alpha, norm: str):
    """The W-SVM of `alpha` in the Frobenius ('fro', a QP) or nuclear norm ('nuclear', Clarabel's
    SDP), computed once per dataset and alpha."""
    return wlift.nuclear_w_svm(ds, alpha) if norm == "nuclear" else wlift.fro_w_svm(ds, alpha)


def report(ds: Dataset, tr, b: int, norm: str = "fro", both: bool = False) -> dict:
    """Start b of a run on `ds` against the `norm` SVM ('fro' or 'nuclear') of the tokens it
    selects at H: gap = 1 - corr with that SVM's solution and (when the run separates them) the
    excesses ||W / margin|| / ||optimum|| - 1 in the Frobenius and nuclear norms (both when `both`
    or `norm` is nuclear), at H, H/2, H/4 (keys `gap`, `gap_half`, `gap_quarter`, ...)."""
    alpha = tr.selected[b].tolist()
    out = {"alpha": alpha, "is_opt": alpha == model.optimal_tokens(ds).tolist(),
           "log_unselected_mass": float(tr.log_unsat[-1, b].max()), "run_status": tr.status[b]}
    fro = solve(ds, alpha, "fro")
    nuc = solve(ds, alpha, "nuclear") if both or norm == "nuclear" else None
    out["status"] = {"fro": fro.status, "nuclear": nuc.status if nuc else "not solved"}
    target = fro if norm == "fro" else nuc
    if not target.ok:
        return out
    for key, k in CHECKPOINTS.items():
        w = tr.p[row(tr.steps, k), b].cpu().numpy()
        out["gap" + key] = 1 - geometry.corr(w, target.x)
        Wn = cross.margin_normalized(w, fro.problem)
        for name, res, ordn in (("fro", fro, "fro"), ("nuclear", nuc, "nuc")):
            if Wn is not None and res is not None and res.ok:
                out[f"{name}_excess{key}"] = float(np.linalg.norm(Wn, ordn) / np.linalg.norm(res.solution, ordn)) - 1
    return out


def judge(reports: list[dict], measure: str, tol: float, sat: float, plateau: float, rise: float,
          settle: float = math.inf) -> Outcome:
    """The module docstring's rule over one instance's starts. The detail's `worst_<measure>` is
    the largest measure over the saturated, trusted starts (what the search steers by: an
    unsaturated start's measure means nothing yet); a failing start records
    `<measure>_limit_estimate`."""
    detail: dict = {"starts": reports}
    untrusted = []
    for r in reports:
        why = st.undecided_reason([r["run_status"]], "run") if "run_status" in r else ""
        if why:
            untrusted.append(why)
            continue
        if r["log_unselected_mass"] > math.log(sat):
            untrusted.append(f"not saturated at the horizon (1 - mass = {math.exp(r['log_unselected_mass']):.1e})")
            continue
        if measure not in r:
            untrusted.append(f"SVM status {r['status']}")
            continue
        detail["worst_" + measure] = max(detail.get("worst_" + measure, -math.inf), r[measure])
        if r[measure] > tol:
            if r.get("transit"):
                untrusted.append(f"{measure} {r[measure]:.3g} > {tol} at the horizon on a selection that cannot be a "
                                 f"limit: {r['transit']}; in transition")
                continue
            early = (r.get(measure + "_quarter"), r.get(measure + "_half"))     # absent where W did not yet separate
            if early[1] is not None and r[measure] > early[1] * (1 + rise):
                untrusted.append(f"{measure} {r[measure]:.3g} > {tol} at the horizon and rising (from {early[1]:.3g} "
                                 "at H/2): moving away from the selection's SVM direction, in transition")
                continue
            limit = None if None in early else limit_estimate(*early, r[measure], plateau=plateau)
            r[measure + "_limit_estimate"] = limit
            if limit is not None and limit > tol and early[1] - r[measure] > settle * r[measure]:
                untrusted.append(f"{measure} {r[measure]:.3g} > {tol} at the horizon, still falling by more than "
                                 f"{settle:g} of itself over the last octave (from {early[1]:.3g})")
                continue
            if limit is not None and limit > tol:
                return Outcome(False, detail=detail)
            untrusted.append(f"{measure} {r[measure]:.3g} > {tol} at the horizon, extrapolated limit "
                             f"{'unknown (oscillating)' if limit is None else f'{limit:.3g}'}")
    if untrusted:
        return Outcome(None, detail=detail, reason=untrusted[0])
    return Outcome(True, detail=detail)


def grouped(keys: Sequence, run: Callable[[list[int]], list]) -> list:
    """run(indices) -> one result per index, called once per group of equal keys (instances that
    run together); the results come back in the original order."""
    groups: dict = defaultdict(list)
    for k, key in enumerate(keys):
        groups[key].append(k)
    out: list = [None] * len(keys)
    for ks in groups.values():
        for k, res in zip(ks, run(ks)):
            out[k] = res
    return out


def train_reports(insts, budget, rule_of: Callable, norm: str = "fro",
                  both_of: Callable | None = None) -> list[list[dict]]:
    """Per instance, the `report` of each start of its W- or (K, Q)-parameterised NGD run (params
    `param`, `m`, `eta`, `steps` (x horizon), `init_scale`, `seed`, `starts`, and `loss` when
    present), all instances of one shape and setting run as one batch (`cross.train_each`).
    `rule_of(params)` gives the update rule; `both_of(inst)` whether to report both norms."""
    def key(inst):
        p, ds = inst.params, inst.dataset
        return (ds.n, ds.T, ds.d, p["param"], p.get("m"), p["eta"], p["steps"], p["init_scale"], p["starts"],
                p.get("loss", "logistic"))

    def run(ks):
        group = [insts[k] for k in ks]
        p = group[0].params
        steps = int(p["steps"] * budget.horizon)
        tr = cross.train_each([g.dataset for g in group], rule_of(p), steps, p["param"], p.get("m"), p["init_scale"],
                              [g.params["seed"] for g in group], p["starts"], every=max(1, steps // 4),
                              loss=p.get("loss", "logistic"))
        return [[report(g.dataset, tr, j * p["starts"] + s, norm, both_of(g) if both_of else False)
                 for s in range(p["starts"])] for j, g in enumerate(group)]

    return grouped([key(i) for i in insts], run)
