"""Implicit Bias and Fast Convergence Rates for Self-attention (paper C;
docs/statements.md#rates-sparsity): the sparsification rate of the attention map under normalized
GD and the Polyak step: the softmax mass off the optimal tokens, m(t) = mean_i (1 - s_{i,opt_i}(W_t)),
decays exponentially in t.

Law (OUR reconstruction, lemmas/rates_sparsity.py): under Assumption B every step moves W along a
positive combination of the z_it = k_{i,opt} - k_it, so <W_t, W_mm/||W_mm||> grows by at least
ell / (Z ||W_mm||) per step (ell the step length: eta for NGD, at least rho_0 / Z for Polyak with
rho_0 = min_i loss'(gamma_i,opt) / loss'(min_t gamma_it); Z = max ||z_it||), and once W_t is aligned
every logit gap is ||W_t|| / ||W_mm|| to first order, so m(t) <= C exp(-c t) with

    c_NGD = eta / (Z ||W_mm||^2),    c_Polyak = rho_0 / (Z^2 ||W_mm||^2).

Fixed-step GD only reaches m(t) = O(1/t) (||W_t|| grows like log t).

Proxy (`attnsvm.dynamics.rates`, with this check's own tolerances): NGD runs H = steps x horizon
iterations from rates-global's starts (random of scale 0.1 or 1 for 200 steps, hard ones on another
selection's W_mm at scale 0.1 to 20 for 1000 steps), Polyak POLYAK_STEPS x horizon from each,
recorded every H/RECORDS; log m(t) is computed in
the log domain (no underflow at any saturation); the rate r is minus the least-squares slope of
log m against t over t in [H/WINDOW, H]. Holds if r >= (1 - TOL) c for both rules (margin min_rule
r/c - (1 - TOL)). A slower rate refutes when its run can be trusted (`rates.doubt`: not coasting,
float64 agreeing with mpmath where deeply saturated; a run trapped at another selection keeps m ~
constant: r ~ 0), and again at CONFIRM x H (engine option).

Count: QUICK = 1000 instances at --budget quick (a SUPPORTED rules out failure rates above 0.3%)."""

import math

import numpy as np
import torch

from attnsvm.attention import model
from attnsvm.claims import Claim, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.dynamics import cross, rates

TOL = 0.1           # the fitted rate must be at least (1 - TOL) x the law's
WINDOW = 8          # fit over t in [H / WINDOW, H]
RECORDS = 32        # recorded rows per run
TRUST = rates.Trust(coast=3, deep=700.0, agree=1e-9, rows=16, digits=50)     # this check's trust rule (rates.doubt)
CONFIRM = 4         # a failure is re-run at CONFIRM x H and must persist
EXTEND = 4          # an undecided instance is re-run at EXTEND x H
RULES = ("ngd", "polyak")
POLYAK_STEPS = 200  # Polyak's horizon from every start (its steps adapt: it needs no time to turn)
QUICK = 1000            # instances at --budget quick


def law_rates(ds, eta: float) -> dict:
    """c_NGD and c_Polyak of the law, and their ingredients (Z, ||W_mm||, rho_0)."""
    opt = model.optimal_tokens(ds)
    prob = cross.w_problem([ds])
    K = prob.K[0].numpy()
    Z = max(float(np.linalg.norm(K[i, opt[i]] - K[i, t])) for i in range(ds.n) for t in range(ds.T) if t != opt[i])
    w = float(np.linalg.norm(rates.w_mm(ds, opt)))
    g = model.scores(ds)
    top = torch.as_tensor([g[i, opt[i]] for i in range(ds.n)])
    low = torch.as_tensor(g.min(-1))
    rho0 = float((prob.loss.deriv(top) / prob.loss.deriv(low)).min())
    return {"Z": Z, "norm_w_mm": w, "rho0": rho0, "ngd": eta / (Z * w * w), "polyak": rho0 / (Z * Z * w * w)}


def fit_rate(steps, log_m) -> float:
    """Minus the least-squares slope of log m(t) against t over the window."""
    w = rates.window(steps, WINDOW)
    return float(-np.polyfit(np.asarray(steps, dtype=np.float64)[w], np.asarray(log_m)[w], 1)[0])


def judge(inst, runs: dict) -> Outcome:
    ds = inst.dataset
    law = law_rates(ds, inst.params["eta"])
    detail = {"law": law, "opt": model.optimal_tokens(ds).tolist(), "horizon": runs["ngd"].horizon,
              "polyak_horizon": runs["polyak"].horizon}
    margins, doubts, failed = {}, [], []
    for name in RULES:
        run = runs[name]
        if not run.trusted:
            doubts.append(rates.doubt(ds, run, TRUST))
            continue
        r = fit_rate(run.steps, run.log_off)
        margins[name] = r / law[name] - (1 - TOL)
        detail[name] = {"rate": r, "law_rate": law[name], "ratio": r / law[name],
                        "final_log_off_mass": float(run.log_off[-1]), "selected": list(run.selected)}
        detail[f"{name}_ratio"] = r / law[name]
        if margins[name] <= 0:
            why = rates.doubt(ds, run, TRUST)
            (doubts if why else failed).append(why or name)
    margin = min(margins.values()) if margins else None
    margin = None if margin is None or not math.isfinite(margin) else margin
    if failed:
        detail["exact_check"] = "float64 gradient agrees with mpmath at the deeply saturated recorded points"
        return Outcome(False, detail=detail, margin=margin)
    if doubts:
        return rates.undecided(detail, "; ".join(doubts))
    return Outcome(True, detail=detail, margin=margin)


@batched
def sparsification(insts, budget):
    runs = {"ngd": rates.race(insts, budget, "ngd", RECORDS),
            "polyak": rates.race(insts, budget, "polyak", RECORDS,
                                 horizons=[rates.horizon(inst, budget, POLYAK_STEPS) for inst in insts])}
    return [judge(inst, {r: runs[r][k] for r in RULES}) for k, inst in enumerate(insts)]


claim = Claim(
    name="rates-sparsity",
    evaluations=QUICK,
    statement="in the covered settings (rates-global), NGD and Polyak sparsify attention exponentially: "
              "mean_i (1 - s_{i,opt}(W_t)) <= C exp(-c t) with c_NGD = eta/(Z ||W_mm||^2), "
              "c_Polyak = rho_0/(Z^2 ||W_mm||^2) (reconstructed law), judged by the fitted rate",
    hypotheses=hyp.of("rates-sparsity"),
    conclusion=sparsification,
    instances=lambda dropped: rates.instances(rates.score_datasets()),
    measures=("ngd_ratio", "polyak_ratio"),
    confirm=(CONFIRM,),
    extend=(EXTEND,),
    tolerances={"rate": TOL, "window": WINDOW, **TRUST.tolerances()},
    proxy=f"minus the slope of log(mean_i (1 - s_i,opt)) vs t over t in [H/{WINDOW}, H], H = 200 or 1000 x horizon "
          f"NGD steps (eta 0.5), {POLYAK_STEPS} x horizon Polyak steps (f_star = L_inf), at least (1 - {TOL}) x the "
          f"law's rate; slower refutes on a run that does not coast (norm grown by >= 1/{TRUST.coast:g} over the "
          "last octave), is not held at a selection that is not locally optimal and whose float64 gradient agrees "
          f"with mpmath's where deeply saturated, at H and again at {CONFIRM} x H",
    horizon=f"NGD 200 or 1000, Polyak {POLYAK_STEPS} x budget horizon steps", tolerance=f"rate >= (1 - {TOL}) c",
)
