"""Implicit Bias and Fast Convergence Rates for Self-attention (paper C;
docs/statements.md#rates-ngd): the finite-time directional
rate of normalized GD, W_{t+1} = W_t - eta grad L / ||grad L||, to W_mm(opt), judged as a FITTED
EXPONENT against the law.

Law (OUR reconstruction: paper C's expressions are not in papers/): in the covered settings of
rates-global, 1 - corr(W_t, W_mm) <= C log(t) / t, the standard rate of normalized GD on separable
exponential-tailed problems (normalized margin gap O(log t / t), Nacson et al. 2019; Ji & Telgarsky
2021), which applies because under Assumption B -grad L is a positive combination of the key
differences z_it = k_{i,opt} - k_it (lemmas/rates_ngd.py), as in linear logistic regression.
Fixed-step GD has the slower O(1 / log^2 t).

Proxy: the rule runs H = steps x horizon iterations from the instance's start (rates-global's
instances: random starts of scale 0.1 or 1 for 200 steps, or hard starts on another selection's
W_mm at scale 0.1 to 20 for 1000 steps),
recorded every H/32; the exponent b is the least-squares slope of log(1 - corr) against log t over
t in [H/8, H]; the law's local exponent there is a = -1 + 1/ln t_c (t_c the window's geometric
centre). Holds if b <= a + TOL (margin a + TOL - b). A slower exponent is re-measured at
CONFIRM x H and fails if still slower (a run trapped at another selection has b ~ 0). A gap below
FLOOR over the whole window is float64 noise of a converged run and holds."""

import math

import numpy as np

from attnsvm.attention import model
from attnsvm.claims import Claim, Outcome
from attnsvm.dynamics import cross
from attnsvm.dynamics.trends import loglog_slope
from attnsvm.results.checks.rates_global import HYPOTHESES, gmm, instance_strategy, race
from attnsvm.results.checks.tfsvm_frobenius import CONFIRM

TOL = 0.1
WINDOW = 8          # fit over t in [H / WINDOW, H]
RECORDS = 32        # recorded rows per run
FLOOR = 1e-14       # 1 - corr below this is float64 noise


def horizon(inst, budget, factor: int = 1) -> int:
    """H of `race` for this instance and budget."""
    return int(inst.params["steps"] * budget.horizon) * factor


def run(inst, budget, names, factor: int = 1):
    """`race` of the rules `names`, recorded RECORDS times (uniform grid)."""
    return race(inst, budget, names, factor, every=max(1, horizon(inst, budget, factor) // RECORDS))


def window(steps) -> np.ndarray:
    steps = np.asarray(steps, dtype=np.float64)
    return steps >= steps[-1] / WINDOW


def law_exponent(steps) -> float:
    """Local exponent of log(t)/t over the fit window: d log(log t / t) / d log t = -1 + 1/ln t at t_c."""
    s = np.asarray(steps, dtype=np.float64)[window(steps)]
    t_c = math.exp(float(np.mean(np.log(s))))
    return -1.0 + 1.0 / math.log(t_c)


def fit_direction(steps, gap) -> dict:
    """The fitted exponent of 1 - corr and the law's, over the window."""
    w = window(steps)
    g = np.asarray(gap, dtype=np.float64)
    return {"exponent": loglog_slope(np.asarray(steps)[w], g[w], floor=FLOOR, min_points=4),
            "law_exponent": law_exponent(steps), "final_gap": float(g[-1]), "horizon": int(steps[-1]),
            "window": [int(np.asarray(steps)[w][0]), int(steps[-1])]}


def judge_direction(fit: dict) -> tuple[bool | None, float | None]:
    """(holds, margin) of one fit: holds if the exponent is at most the law's + TOL; a gap at the
    float floor holds; too few points above the floor (but not at it) is undecided."""
    if fit["final_gap"] <= FLOOR:
        return True, None
    if fit["exponent"] is None:
        return None, None
    m = fit["law_exponent"] + TOL - fit["exponent"]
    return m > 0, m


def directional_rate(inst, budget, name: str) -> Outcome:
    """The law for rule `name` ('ngd', 'polyak', 'gd') on one instance, confirmed at CONFIRM x H."""
    res, _ = gmm(inst.dataset)
    opt = model.optimal_tokens(inst.dataset)
    detail, verdict, margin = {"rule": name}, None, None
    for factor in (1, CONFIRM):
        tr = run(inst, budget, (name,), factor)
        if tr.status[0] != "ok":
            return Outcome(None, detail={**detail, "status": tr.status[0]}, reason=f"run {tr.status[0]}")
        gap = cross.alignment_curves([inst.dataset], tr, res.x, opt)["gap"][:, 0]
        fit = fit_direction(tr.steps, gap)
        verdict, margin = judge_direction(fit)
        detail.update(fit, horizon_factor=factor, selected=tr.selected[0].tolist(), opt=opt.tolist())
        if verdict is not False:
            break
    reason = "" if verdict is not None else "too few points of 1 - corr above the float floor in the window"
    return Outcome(verdict, detail=detail, margin=margin, reason=reason)


claim = Claim(
    name="rates-ngd",
    evaluations=42,
    statement="in the covered settings (rates-global), normalized GD has 1 - corr(W_t, W_mm(opt)) <= C log(t)/t "
              "(reconstructed law), judged by the fitted exponent",
    hypotheses=HYPOTHESES,
    conclusion=lambda inst, budget: directional_rate(inst, budget, "ngd"),
    instances=lambda dropped: instance_strategy(dropped),
    measures=("exponent", "law_exponent", "final_gap"),
    proxy=f"slope of log(1 - corr) vs log t over t in [H/{WINDOW}, H], H = 200 (random starts) or 1000 (hard starts) "
          f"x horizon NGD steps (eta 0.5), at most -1 + 1/ln t_c + {TOL} (the local exponent of log t / t); slower is "
          f"re-measured at {CONFIRM} x H",
    horizon="200 or 1000 x budget horizon steps", tolerance=f"exponent + {TOL}",
)
