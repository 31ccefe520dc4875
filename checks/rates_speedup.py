"""Implicit Bias and Fast Convergence Rates for Self-attention (paper C;
docs/statements.md#rates-speedup): normalized GD and
the Polyak step (f_star = L_inf, see rates-global) converge in direction to W_mm faster than
fixed-step GD, in the covered settings of rates-global (random and hard starts).

"Faster" is read as a rate, the paper's sense, against EVERY stable fixed step tried: GD runs
at 1, 4, 16 and 64 times 1/L_p (our reconstruction of L_p for the W-problem,
`cross.smoothness`), and a step counts as stable when its risk never rises and its status is
ok (or stationary). A rule's rate is the log-log slope of 1 - corr(W_t, W_mm) over the last
octave [H/2, H]; a gap at the float floor FLOOR counts as infinitely fast. For each adaptive
rule A (NGD, Polyak) and each stable GD step g, A is faster if its slope is below g's by
RATE_MARGIN (or A reached the floor and g did not); a pair with both at the floor has no rate to
compare and is skipped (an instance with no comparable pair does not apply).

A pair where A is not faster is only a candidate: a finite window can catch a GD transient.
Turning toward W_mm from a hard start, GD's gap can fall like t^-2 to t^-4.5 for three or four
octaves while it stays orders of magnitude above NGD's, then flatten (asymptotically its direction
converges like 1/log t). Example (NOTES.md): n = 2, start on W_mm((0, 0)) at scale 0.1, GD at
1/L_p has octave slopes -3.45, -4.35, -3.55 ending at t = 1000, 2000, 4000, then -1.78, -0.86,
-0.55, -0.43 ending at 8000 .. 64000, its gap 2e3 to 5e4 times NGD's throughout, NGD's slope -2.0.
So the GD run of a candidate pair and the adaptive rules are re-run at CONFIRM x H and at
CONFIRM^2 x H and the pair is judged again over each last octave; the instance fails only if some
pair is not faster at all three horizons (with CONFIRM x H alone, that instance and others like it
refute through the transient). A candidate that a longer run cannot judge (both at the floor, the
adaptive run frozen there, the GD step no longer stable) leaves the instance undecided. GD's
runs at 4^k/L_p are themselves close to the run at 1/L_p seen at 4^k times the time (slopes
-3.545 at 4/L_p over [H/2, H] and -3.546 at 1/L_p over [2H, 4H] in that example), so the
step range also shows each transient at several stages within H.
Iteration counts to corr LEVEL are reported but do not decide (from small starts a large
stable GD step reaches corr 0.99 in fewer iterations than NGD, NOTES.md).

Untrusted (holds None): a non-finite adaptive run; and a candidate failure of an adaptive run
that coasts (`checks.rates_global.frozen`: its norm grew by less than 1/COAST over the last
octave, most of it an offset from a throw by huge capped Polyak steps or from its start, so its
slope cannot show its rate; rates-global uses the same rule) or whose float64
gradient disagrees with an exact mpmath one at its deeply saturated points
(`checks.rates_polyak.exact_disagreement`: a library underflow that fakes traps). A run still
thrown at every step (capped steps of 1e6 along a fixed direction) is trapped, not frozen, and is
judged: the stored counterexample `rates-speedup--polyak_small_start_trap.json` is one, confirmed
in exact arithmetic (NOTES.md)."""

import math

import numpy as np
from hypothesis import strategies as st

from attnsvm import dynamics
from attnsvm.attention import model
from attnsvm.claims import Claim, Outcome
from attnsvm.dynamics import cross
from attnsvm.dynamics.trends import loglog_slope
from attnsvm.results.checks.rates_global import COAST, HYPOTHESES, frozen, gmm, instance_strategy, rule, start
from attnsvm.results.checks.rates_polyak import exact_disagreement
from attnsvm.results.checks.tfsvm_frobenius import CONFIRM

LEVEL = 0.99
FLOOR = 1e-12          # a gap at float resolution has no rate left to measure
RATE_MARGIN = 0.1      # log-log slopes must differ by this much to call one rule faster
WINDOW = 2             # slopes over the last octave [H / WINDOW, H]
RECORDS = 128          # recorded rows per run (uniform grid; iteration counts to LEVEL are read on it)
NAMES = ("gd", "ngd", "polyak")
ADAPTIVE = ("ngd", "polyak")

CONFIRMS = (1, 2)       # a pair not faster at H is re-judged at CONFIRM x H, then CONFIRM^2 x H
GD_FACTORS = (1.0, 4.0, 16.0, 64.0)     # GD's steps tried, times 1/L_p: NGD and Polyak must beat every stable one


def _stable(values: np.ndarray) -> bool:
    """The risk never rose (relative slack 1e-12): the step is within GD's stable range here."""
    return bool(np.all(np.diff(values) <= 1e-12 * np.abs(values[:-1])))


def _runs(inst, budget, factor: int, labels: list[str], rules: tuple, paths: dict) -> dict:
    """One batched run of `rules` for `factor` x H steps; per run its rate over the last octave
    (-inf at the float floor), final gap, iterations to LEVEL, stability and frozen flag (and its
    recorded W's in `paths`, for the exact cross-check)."""
    ds, p = inst.dataset, inst.params
    res, _ = gmm(ds)
    steps = int(p["steps"] * budget.horizon) * factor
    tr = dynamics.run(cross.w_problem([ds] * len(rules)), dynamics.PerInstance(rules), start(inst), steps,
                      max(1, steps // RECORDS))
    c = cross.alignment_curves([ds] * len(rules), tr, res.x, model.optimal_tokens(ds))
    H = tr.steps[-1]
    reach = float(np.linalg.norm(start(inst))) + H
    half = min(range(len(tr.steps)), key=lambda r: abs(tr.steps[r] - H / WINDOW))
    tail = [r for r, s in enumerate(tr.steps) if s >= H / WINDOW]
    runs = {}
    for b, label in enumerate(labels):
        g = c["gap"][:, b]
        slope = loglog_slope([tr.steps[r] for r in tail], g[tail], floor=FLOOR, min_points=3)
        floor = float(g[-1]) <= FLOOR
        norm, norm_half = float(tr.p[-1, b].norm()), float(tr.p[half, b].norm())
        paths[label] = tr.p[:, b].numpy()
        runs[label] = {
            "rate": -math.inf if floor else slope, "at_float_floor": floor, "final_gap": float(g[-1]),
            "iterations": cross.first_step_at_least(tr.steps, 1 - g, LEVEL),
            "final_off_mass": float(c["off_mass"][-1, b]), "status": tr.status[b], "horizon": H,
            "stable": label.startswith("gd") and tr.status[b] in ("ok", "stationary") and _stable(tr.value[:, b].numpy()),
            "norm_over_reach": norm / reach, "octave_growth_per_step": (norm - norm_half) / (H - tr.steps[half]),
            "frozen": not label.startswith("gd") and not floor and frozen(norm, norm_half)}
    return runs


def _race(inst, budget, factor: int = 1, gd: tuple[float, ...] | None = None, adaptive=ADAPTIVE) -> dict:
    """GD at the factors `gd` (default: every one tried) in one batch, and each adaptive rule of
    `adaptive` on its own (NGD then takes the fused kernel), for `factor` x H steps."""
    p = inst.params
    base = p.get("gd_factor", 1.0)
    factors = gd or (GD_FACTORS if base == 1.0 else (1.0,))      # a given step races as it is
    labels, paths = [f"gd_x{base * f:g}" for f in factors], {}
    runs = _runs(inst, budget, factor, labels, tuple(rule("gd", p["eta"], inst.dataset, base * f) for f in factors), paths)
    for a in adaptive:
        runs.update(_runs(inst, budget, factor, [a], (rule(a, p["eta"]),), paths))
    return {"horizon": int(p["steps"] * budget.horizon) * factor, "runs": runs, "gd": labels, "paths": paths,
            "adaptive": tuple(adaptive), "factors": dict(zip(labels, factors))}


def _pairs(race: dict) -> dict:
    """(A, g) -> ('faster' | 'not faster' | 'no rate', rate_g - rate_A) for each trusted adaptive
    rule A and stable GD step g ('no rate': both at the float floor, or a slope undefined)."""
    out = {}
    runs = race["runs"]
    for a in race["adaptive"]:
        if runs[a]["status"] == "non-finite":
            continue
        for g in race["gd"]:
            if not runs[g]["stable"]:
                continue
            ra, rg = runs[a]["rate"], runs[g]["rate"]
            if ra is None or rg is None or (ra == -math.inf and rg == -math.inf):
                out[f"{a}/{g}"] = ("no rate", None)
            elif ra == -math.inf:
                out[f"{a}/{g}"] = ("faster", math.inf)
            elif rg == -math.inf:
                out[f"{a}/{g}"] = ("not faster", -math.inf)
            else:
                out[f"{a}/{g}"] = ("faster" if ra < rg - RATE_MARGIN else "not faster", rg - ra)
    return out


def _summary(race: dict, pairs: dict) -> dict:
    runs = race["runs"]
    stable = [g for g in race["gd"] if runs[g]["stable"]]
    gd_rates = [runs[g]["rate"] for g in stable if runs[g]["rate"] is not None]
    out = {"horizon": race["horizon"], "runs": runs, "pairs": {k: v[0] for k, v in pairs.items()},
           "gd_stable_steps": stable,
           "gd_rate_gap_loglog": min(gd_rates) if gd_rates else None,      # the steepest stable GD step
           "gd_iterations": min((runs[g]["iterations"] for g in stable if runs[g]["iterations"] is not None), default=None)}
    for a in race["adaptive"]:
        out[f"{a}_rate_gap_loglog"] = runs[a]["rate"]
        out[f"{a}_iterations"] = runs[a]["iterations"]
    return {k: (None if isinstance(v, float) and v == -math.inf else v) for k, v in out.items()}


def _frozen_reason(r: dict, a: str) -> str:
    return (f"{a}: frozen (||W_H|| grew by {r['octave_growth_per_step']:.3g} per step over the last octave, under "
            f"1/{COAST} of its norm {r['norm_over_reach']:.3g} x (||W_0|| + H)): its slope cannot show its rate")


def speedup(inst, budget) -> Outcome:
    first = _race(inst, budget)
    pairs = _pairs(first)
    detail = {"level": LEVEL, "window": f"[H/{WINDOW}, H]", **_summary(first, pairs)}
    broken = [a for a in ADAPTIVE if first["runs"][a]["status"] == "non-finite"]
    if broken:
        return Outcome(None, detail=detail, reason="; ".join(f"{a}: run became non-finite" for a in broken))
    margins = {k: d for k, (s, d) in pairs.items() if s != "no rate"}
    candidates = [k for k, (s, _) in pairs.items() if s == "not faster"]
    unsettled, last = [], first           # candidate pairs a longer run could not judge; the longest race run
    for a in ADAPTIVE:                    # frozen at H: a longer run (4 or 16 x H) does not outgrow the offset either
        if first["runs"][a]["frozen"] and any(k.startswith(a + "/") for k in candidates):
            unsettled.append(_frozen_reason(first["runs"][a], a))
            candidates = [k for k in candidates if not k.startswith(a + "/")]
    for power in CONFIRMS:
        if not candidates:
            break
        factor = CONFIRM ** power
        gd = tuple(first["factors"][g] for g in first["gd"] if any(k.endswith("/" + g) for k in candidates))
        last = _race(inst, budget, factor, gd, tuple(a for a in ADAPTIVE if any(k.startswith(a + "/") for k in candidates)))
        again = _pairs(last)
        detail[f"confirm_x{factor}"] = {**_summary(last, again), "candidates": candidates}
        unsettled += [f"{k} at {factor} x H: {again[k][0] if k in again else 'GD step no longer stable or run non-finite'}"
                      for k in candidates if again.get(k, ("",))[0] not in ("faster", "not faster")]
        margins.update({k: again[k][1] for k in candidates if k in again and again[k][0] != "no rate"})
        candidates = [k for k in candidates if again.get(k, ("",))[0] == "not faster"]
    for a in {k.split("/")[0] for k in candidates}:      # a failure must be the rule's, not its start's or float64's
        why = _frozen_reason(last["runs"][a], a) if last["runs"][a]["frozen"] else \
            (f"{a}: {x}" if (x := exact_disagreement(inst.dataset, last["paths"][a])) else "")
        if why:
            unsettled.append(why)
            candidates = [k for k in candidates if not k.startswith(a + "/")]
    finite = [d - RATE_MARGIN for d in margins.values()]
    margin = max(-10.0, min(10.0, min(finite))) if finite else None
    if candidates:
        detail["confirmed_not_faster"] = candidates
        return Outcome(False, detail=detail, margin=margin)
    if unsettled:
        return Outcome(None, detail=detail, reason="; ".join(unsettled))
    if not pairs or all(s == "no rate" for s, _ in pairs.values()):
        return Outcome(None, detail=detail, applies=False,
                       reason="no rule pair with a rate to compare (every run at the float floor, or no stable GD step)")
    return Outcome(True, detail=detail, margin=margin)


def _instances(dropped):
    return instance_strategy(dropped, gd_factor=st.just(1.0))


claim = Claim(
    name="rates-speedup",
    evaluations=10,
    statement="in the covered settings, NGD and Polyak converge in direction to W_mm at a faster rate than fixed-step "
              "GD (at any stable step from 1/L_p to 64/L_p)",
    hypotheses=HYPOTHESES,
    conclusion=speedup,
    instances=_instances,
    measures=tuple(f"{n}_{k}" for n in NAMES for k in ("iterations", "rate_gap_loglog")),
    proxy=f"log-log slope of 1 - corr(W_t, W_mm) over the last octave [H/{WINDOW}, H], H = steps x horizon, from "
          f"random and hard starts (rates-global): NGD's and Polyak's each steeper by {RATE_MARGIN} than GD's at EVERY "
          f"stable step of {GD_FACTORS} x 1/L_p (risk monotone, status ok; a gap <= {FLOOR} counts as infinitely fast, "
          f"both at it: no rate, pair skipped); a pair not faster is re-run and re-judged at {CONFIRM} x H and "
          f"{CONFIRM ** 2} x H and refutes only if it persists at all three (a GD transient lasts 3-4 octaves), on an "
          f"adaptive run that does not coast (norm grown by >= 1/{COAST} over the last octave) and whose float64 "
          "gradient agrees with mpmath's where deeply saturated (else undecided); NGD eta 0.5, Polyak f_star = L_inf; "
          "non-finite adaptive runs untrusted",
)
