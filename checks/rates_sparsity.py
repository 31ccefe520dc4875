"""Implicit Bias and Fast Convergence Rates for Self-attention (paper C;
docs/statements.md#rates-sparsity): the sparsification rate of
the attention map under normalized GD and the Polyak step: the softmax mass off the optimal tokens,
m(t) = mean_i (1 - s_{i,opt_i}(W_t)), decays exponentially in t.

Law (OUR reconstruction, lemmas/rates_sparsity.py): under Assumption B every step moves W along a
positive combination of the z_it = k_{i,opt} - k_it, so <W_t, W_mm/||W_mm||> grows by at least
ell / (Z ||W_mm||) per step (ell the step length: eta for NGD, at least rho_0 / Z for Polyak with
rho_0 = min_i loss'(gamma_i,opt) / loss'(min_t gamma_it); Z = max ||z_it||), and once W_t is aligned
every logit gap is ||W_t|| / ||W_mm|| to first order, so m(t) <= C exp(-c t) with

    c_NGD = eta / (Z ||W_mm||^2),    c_Polyak = rho_0 / (Z^2 ||W_mm||^2).

Fixed-step GD only reaches m(t) = O(1/t) (||W_t|| grows like log t).

Proxy: both rules run H = steps x horizon iterations (rates-global's instances), recorded every
H/32; log m(t) is computed in the log domain (no underflow at any saturation); the rate r is minus
the least-squares slope of log m against t over t in [H/8, H]. Holds if r >= (1 - TOL) c for both
rules (margin min_rule r/c - (1 - TOL)); a slower rate is re-measured at CONFIRM x H and fails if
still slower (a run trapped at another selection keeps m ~ constant: r ~ 0)."""

import math

import numpy as np
import torch

from attnsvm.attention import model
from attnsvm.claims import Claim, Outcome
from attnsvm.dynamics import cross
from attnsvm.results.checks.rates_global import HYPOTHESES, RULES, gmm, instance_strategy
from attnsvm.results.checks.rates_ngd import CONFIRM, WINDOW, run, window

TOL = 0.1


def log_off_mass(ds, P, alpha) -> np.ndarray:
    """log mean_i (1 - s_{i,alpha_i}(W)) for each row W of P (R, d*d), in the log domain."""
    P = model.t(P)
    lo = cross.log_unselected_mass(cross.w_problem([ds] * P.shape[0]), P, alpha)
    return (torch.logsumexp(lo, -1) - math.log(ds.n)).numpy()


def law_rates(ds, eta: float) -> dict:
    """c_NGD and c_Polyak of the law, and their ingredients (Z, ||W_mm||, rho_0)."""
    res, _ = gmm(ds)
    Z = float(np.linalg.norm(res.problem.A, axis=1).max())
    w = float(np.linalg.norm(res.x))
    g = model.scores(ds)
    opt = model.optimal_tokens(ds)
    loss = cross.w_problem([ds]).loss
    top = torch.as_tensor([g[i, opt[i]] for i in range(ds.n)])
    low = torch.as_tensor(g.min(-1))
    rho0 = float((loss.deriv(top) / loss.deriv(low)).min())
    return {"Z": Z, "norm_w_mm": w, "rho0": rho0, "ngd": eta / (Z * w * w), "polyak": rho0 / (Z * Z * w * w)}


def fit_rate(steps, log_m) -> float:
    """Minus the least-squares slope of log m(t) against t over the window."""
    w = window(steps)
    return float(-np.polyfit(np.asarray(steps, dtype=np.float64)[w], np.asarray(log_m)[w], 1)[0])


def sparsification(inst, budget) -> Outcome:
    ds = inst.dataset
    opt = model.optimal_tokens(ds)
    law = law_rates(ds, inst.params["eta"])
    detail = {"law": law}
    for factor in (1, CONFIRM):
        tr = run(inst, budget, RULES, factor)
        if any(s != "ok" for s in tr.status):
            return Outcome(None, detail={**detail, "status": tr.status}, reason=f"run status {tr.status}")
        margins = {}
        for b, name in enumerate(RULES):
            log_m = log_off_mass(ds, tr.p[:, b], opt)
            r = fit_rate(tr.steps, log_m)
            margins[name] = r / law[name] - (1 - TOL)
            detail[name] = {"rate": r, "law_rate": law[name], "ratio": r / law[name],
                            "final_log_off_mass": float(log_m[-1]), "selected": tr.selected[b].tolist()}
            detail[f"{name}_ratio"] = r / law[name]
        detail.update(horizon=tr.steps[-1], horizon_factor=factor, opt=opt.tolist())
        margin = min(margins.values())
        if margin > 0:
            break
    return Outcome(margin > 0, detail=detail, margin=margin)


claim = Claim(
    name="rates-sparsity",
    evaluations=12,
    statement="in the covered settings (rates-global), NGD and Polyak sparsify attention exponentially: "
              "mean_i (1 - s_{i,opt}(W_t)) <= C exp(-c t) with c_NGD = eta/(Z ||W_mm||^2), "
              "c_Polyak = rho_0/(Z^2 ||W_mm||^2) (reconstructed law), judged by the fitted rate",
    hypotheses=HYPOTHESES,
    conclusion=sparsification,
    instances=lambda dropped: instance_strategy(dropped),
    measures=("ngd_ratio", "polyak_ratio"),
    proxy=f"minus the slope of log(mean_i (1 - s_i,opt)) vs t over t in [H/{WINDOW}, H], H = 200 or 1000 x horizon "
          f"steps (NGD eta 0.5, Polyak f_star = L_inf), at least (1 - {TOL}) x the law's rate; slower is re-measured at "
          f"{CONFIRM} x H",
    horizon="200 or 1000 x budget horizon steps", tolerance=f"rate >= (1 - {TOL}) c",
)
