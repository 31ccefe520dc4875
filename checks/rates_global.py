"""Implicit Bias and Fast Convergence Rates for Self-attention (paper C;
docs/statements.md#rates-global): normalized GD and the Polyak step converge in direction to
W_mm (alpha = opt) from ANY start, in the data settings the paper covers.

The paper's abstract only says "scenarios"; the covered settings here are OUR reconstruction
from the core paper and Transformers-as-SVMs: self-attention (z_i = x_i1), linear head,
logistic loss, and
  (B)  every input's non-optimal tokens share one score, strictly below the optimal one
       (Assumption B), W_mm(opt) feasible,
  (S)  n = 1 (the core paper's Theorem 2(b) in R^{d^2}), or every non-optimal token is a
       support vector of W_mm(opt) (all constraints active, as in TF-as-SVM's global theorem),
  (L)  no selection other than opt is locally optimal for the W-SVM (a descent method converges
       locally to any such LMM).
Polyak uses f_star = L_inf = mean_i loss(gamma_{i,opt}): for a fixed head the loss infimum is
not 0 but this limit value at the GMM, approached iff W_mm(opt) is feasible; the gap L - L_inf
is evaluated without cancellation (`Grad.log_excess`).

Proxy (`attnsvm.dynamics.rates`, with this check's own tolerances): from the instance's start
W_0 (random of scale 0.1 or 1 for 200 steps, or `init_scale` W_mm(alpha)/||W_mm(alpha)|| of a
feasible alpha != opt at scale 0.1 or 1 for 1000 steps), NGD (eta 0.5) runs for H = steps x
horizon iterations and Polyak for POLYAK_STEPS x horizon from every start (its step adapts: it
needs no time to turn; each rule one batched run per shape); each must end with
gap = 1 - corr(W_H, W_mm(opt)) <= TOL. A larger gap is a failure when the run has settled:
  - its attention has separated (every softmax value above SEP_HIGH or at most SEP_LOW: single
    tokens or a selected set, e.g. a pair of tied non-optimal tokens), and
  - the gap's limit extrapolated from H/4, H/2, H (Aitken, `trends.limit_estimate`: a plateau
    within PLATEAU extrapolates to itself) exceeds TOL,
and the failure can be trusted (`rates.doubt`, the rule rates-polyak and rates-speedup use,
with this check's constants): the run does not coast (its norm grew by at least 1/TRUST.coast over
the last octave) and its float64 gradient agrees with an exact mpmath one at its deeply
saturated points. A failure must persist at CONFIRM x H (engine option). Anything else with a
gap above TOL is undecided (re-run at EXTEND x H): still moving, not separated, coasting, or
faked by float64.

Hard starts of scale 5 and 20 are rates-ngd's (NGD from them is judged there): from them Polyak's
first step is capped at 1e6 (the gradient is exponentially small, L - L_inf is not), after which
the run coasts, its direction frozen for about 1e6 steps; at quick about half of those runs were
undecided, nothing a finite horizon can read.

This is the one rule of the rate results: a Polyak run trapped for good on tied non-optimal
tokens (capped steps of 1e6 at every step, L - L_inf > 0, in float64 and in mpmath alike) is
seen and refutes, as it refutes rates-polyak (NOTES.md).

Count: QUICK = 1000 instances at --budget quick (a SUPPORTED rules out failure rates above 0.3%)."""

import numpy as np

from attnsvm.attention import model
from attnsvm.claims import Claim, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.dynamics import rates
from attnsvm.dynamics.trends import limit_estimate

TOL = 0.01              # 1 - corr(W_H, W_mm(opt)) at most this
PLATEAU = 1e-3          # a gap moving by less than this (relative) over two octaves has settled
SEP_HIGH, SEP_LOW = 1e-3, 1e-6      # separated attention: every softmax value above HIGH or at most LOW
TRUST = rates.Trust(coast=3, deep=700.0, agree=1e-9, rows=16, digits=50)     # this check's trust rule (rates.doubt)
RECORDS = 16            # recorded rows per run (H/4, H/2 and H among them)
POLYAK_STEPS = 200      # Polyak's horizon from every start (its steps adapt: it needs no time to turn)
HARD_SCALES = (0.1, 1.0)    # hard starts' scales (larger ones: rates-ngd; Polyak's first capped step throws them)
CONFIRM = 4             # a failure is re-run at CONFIRM x H and must persist
EXTEND = 4              # an undecided instance is re-run at EXTEND x H
RULES = ("ngd", "polyak")
QUICK = 1000            # instances at --budget quick


def judge(inst, run: rates.Run) -> tuple[bool | None, dict, str]:
    """One rule's run: (holds, detail, reason) by the module docstring's rule."""
    ds = inst.dataset
    g = run.gap
    q, h = run.at(run.horizon / 4), run.at(run.horizon / 2)
    norm, half = run.octave_growth()
    detail = {"horizon": run.horizon, "gap": float(g[-1]), "gap_half": float(g[h]), "gap_quarter": float(g[q]),
              "selected": list(run.selected), "norm": norm, "norm_half": half, "status": run.status}
    if not run.trusted:
        return None, detail, rates.doubt(ds, run, TRUST)
    if g[-1] <= TOL:
        return True, detail, ""
    limit = limit_estimate(float(g[q]), float(g[h]), float(g[-1]), PLATEAU)
    sep = rates.separated(ds, run.p[-1], SEP_HIGH, SEP_LOW)
    detail.update(gap_limit_estimate=limit, separated=sep)
    if not sep or limit is None or limit <= TOL:
        what = "not separated" if not sep else "still moving" if limit is None else f"limit estimate {limit:.3g}"
        return None, detail, (f"{run.rule}: gap {g[-1]:.3g} > {TOL} at H = {run.horizon} ({what}; selected "
                              f"{list(run.selected)}, opt {model.optimal_tokens(ds).tolist()})")
    why = rates.doubt(ds, run, TRUST)
    if why:
        return None, detail, why
    detail["exact_check"] = "float64 gradient agrees with mpmath at the deeply saturated recorded points"
    return False, detail, ""


@batched
def converges_globally(insts, budget):
    runs = {"ngd": rates.race(insts, budget, "ngd", RECORDS),
            "polyak": rates.race(insts, budget, "polyak", RECORDS,
                                 horizons=[rates.horizon(inst, budget, POLYAK_STEPS) for inst in insts])}
    outs = []
    for k, inst in enumerate(insts):
        detail, verdicts, reasons = {"opt": model.optimal_tokens(inst.dataset).tolist()}, [], []
        for r in RULES:
            holds, d, reason = judge(inst, runs[r][k])
            detail[r] = d
            verdicts.append(holds)
            reasons += [reason] if reason else []
        if None in verdicts and False not in verdicts:
            outs.append(rates.undecided(detail, "; ".join(reasons)))
            continue
        for r in RULES:
            detail[f"{r}_gap"] = detail[r]["gap"]
        margin = float(np.clip(min((TOL - detail[r]["gap"]) / TOL for r in RULES), -10.0, 10.0))
        outs.append(Outcome(False not in verdicts, detail=detail, margin=margin))
    return outs


claim = Claim(
    name="rates-global",
    evaluations=QUICK,
    statement="in the covered settings (reconstruction: Assumption B, feasible W_mm(opt), n = 1 or all tokens support "
              "vectors, no other W-LMM), NGD and Polyak converge in direction to W_mm(opt) from any start",
    hypotheses=hyp.of("rates-global"),
    conclusion=converges_globally,
    instances=lambda dropped: rates.instances(rates.score_datasets(), hard_scales=HARD_SCALES),
    measures=("ngd_gap", "polyak_gap"),
    confirm=(CONFIRM,),
    extend=(EXTEND,),
    tolerances={"gap": TOL, "plateau": PLATEAU, "separated_high": SEP_HIGH, "separated_low": SEP_LOW,
                **TRUST.tolerances(),
                },
    proxy=f"1 - corr(W_H, W_mm(opt)) <= {TOL} for NGD (eta 0.5) at H = 200 x horizon steps from random starts (scale "
          "0.1 or 1) and 1000 x horizon from hard starts (on another selection's W_mm, scale 0.1 or 1), and for "
          f"Polyak (f_star = L_inf) at H = {POLYAK_STEPS} x horizon from both; a larger gap refutes when the run has "
          f"separated (every softmax value > {SEP_HIGH} or <= {SEP_LOW}) with an Aitken-extrapolated gap limit above "
          f"{TOL}, does not coast (norm grown by >= 1/{TRUST.coast:g} over the last octave), is not held at a "
          "selection that is not locally optimal and its float64 gradient agrees with mpmath's where deeply "
          f"saturated, at H and again at {CONFIRM} x H; else undecided (re-run at {EXTEND} x H)",
    horizon=f"NGD 200 or 1000, Polyak {POLYAK_STEPS} x budget horizon steps", tolerance=f"1 - corr <= {TOL}",
)
