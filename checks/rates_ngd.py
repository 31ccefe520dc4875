"""Implicit Bias and Fast Convergence Rates for Self-attention (paper C;
docs/statements.md#rates-ngd): the finite-time directional rate of normalized GD,
W_{t+1} = W_t - eta grad L / ||grad L||, to W_mm(opt), judged as a FITTED EXPONENT against the law.

Law (OUR reconstruction: paper C's expressions are not in papers/): in the covered settings of
rates-global, 1 - corr(W_t, W_mm) <= C log(t) / t, the standard rate of normalized GD on separable
exponential-tailed problems (normalized margin gap O(log t / t), Nacson et al. 2019; Ji & Telgarsky
2021), which applies because under Assumption B -grad L is a positive combination of the key
differences z_it = k_{i,opt} - k_it (lemmas/rates_ngd.py), as in linear logistic regression.
Fixed-step GD has the slower O(1 / log^2 t).

Proxy (`attnsvm.dynamics.rates`, with this check's own tolerances): NGD (eta 0.5) runs H = steps x
horizon iterations from rates-global's starts (random of scale 0.1 or 1 for 200 steps, or hard
starts on another selection's W_mm at scale 0.1 to 20 for 1000 steps), recorded every H/RECORDS;
the exponent b is the least-squares slope of log(1 - corr) against log t over t in [H/WINDOW, H];
the law's local exponent there is a = -1 + 1/ln t_c (t_c the window's geometric centre). Holds if
b <= a + TOL (margin a + TOL - b); a final gap below FLOOR is float64 noise of a converged run
and holds. A slower exponent refutes when the run can be trusted (`rates.doubt`: not coasting,
not held at a selection that is not locally optimal, float64 agreeing with mpmath where deeply
saturated) and again at CONFIRM x H (engine option; a run trapped at another selection has b ~ 0).
A run held at a selection that is not locally optimal is undecided: it stays there only while its
start's offset lasts (an NGD run from scale 20 sat on W_mm((1, 1)) with the optimal token's term
e^-25 below the other input's, to leave after some e^25 steps; tests/test_rates_laws.py).
1000 instances at --budget quick (normalized GD runs on the fused kernel)."""

from attnsvm.attention import model
from attnsvm.claims import Claim, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.dynamics import rates

TOL = 0.1           # the fitted exponent may exceed the law's by this
WINDOW = 8          # fit over t in [H / WINDOW, H]
RECORDS = 32        # recorded rows per run
FLOOR = 1e-14       # 1 - corr below this is float64 noise
TRUST = rates.Trust(coast=3, deep=700.0, agree=1e-9, rows=16, digits=50)     # this check's trust rule (rates.doubt)
CONFIRM = 4         # a failure is re-run at CONFIRM x H and must persist
EXTEND = 4          # an undecided instance is re-run at EXTEND x H
QUICK = 1000        # instances evaluated at --budget quick


def judge(inst, run: rates.Run) -> Outcome:
    """The law on one NGD (or GD) run, by the module docstring's rule."""
    ds = inst.dataset
    fit = rates.fit_direction(run.steps, run.gap, WINDOW, FLOOR)
    detail = {"rule": run.rule, **fit, "selected": list(run.selected), "opt": model.optimal_tokens(ds).tolist(),
              "status": run.status}
    if not run.trusted:
        return rates.undecided(detail, rates.doubt(ds, run, TRUST))
    holds, margin = rates.judge_direction(fit, TOL, FLOOR)
    if holds is None:
        return rates.undecided(detail, "too few points of 1 - corr above the float floor in the window")
    if not holds:
        why = rates.doubt(ds, run, TRUST)
        if why:
            return rates.undecided(detail, why)
        detail["exact_check"] = "float64 gradient agrees with mpmath at the deeply saturated recorded points"
    return Outcome(holds, detail=detail, margin=margin)


@batched
def directional_rate(insts, budget):
    return [judge(inst, run) for inst, run in zip(insts, rates.race(insts, budget, "ngd", RECORDS))]


claim = Claim(
    name="rates-ngd",
    evaluations=QUICK,
    statement="in the covered settings (rates-global), normalized GD has 1 - corr(W_t, W_mm(opt)) <= C log(t)/t "
              "(reconstructed law), judged by the fitted exponent",
    hypotheses=hyp.of("rates-ngd"),
    conclusion=directional_rate,
    instances=lambda dropped: rates.instances(rates.score_datasets()),
    measures=("exponent", "law_exponent", "final_gap"),
    confirm=(CONFIRM,),
    extend=(EXTEND,),
    tolerances={"exponent": TOL, "window": WINDOW, "floor": FLOOR, **TRUST.tolerances()},
    proxy=f"slope of log(1 - corr) vs log t over t in [H/{WINDOW}, H], H = 200 (random starts) or 1000 (hard starts) "
          f"x horizon NGD steps (eta 0.5), at most -1 + 1/ln t_c + {TOL} (the local exponent of log t / t); slower "
          f"refutes on a run that does not coast (norm grown by >= 1/{TRUST.coast:g} over the last octave), is not "
          "held at a selection that is not locally optimal and whose float64 gradient agrees with mpmath's where "
          f"deeply saturated, at H and again at {CONFIRM} x H",
    horizon="200 or 1000 x budget horizon steps", tolerance=f"exponent + {TOL}",
)
