"""Theorem 2: under Assumptions A and B with n = 1 and (ATT-SVM) for the optimal tokens
feasible, GD with eta <= 1/L_p from any p_0 has ||p_t|| -> infinity and p_t/||p_t|| -> p_mm/||p_mm||.
Normalized GD is checked alongside (the same proxy; Theorem 2's step bound does not apply to it).

Instances: one input in the paper's Figure 1 construction (integer keys in [-1, 1]^2, scores
obeying B), a loss of Assumption A, `starts` (integers / 2 in the key plane: the score
coordinate of p is inert, keys have no component there), and the rule: fixed-step GD with
eta = eta_factor / L_p, or normalized GD with step `eta`.

Proxy (`attnsvm.dynamics.limits`): run GD_STEPS (NGD_STEPS) x horizon iterations, extended up to 4x
while a start is undecided. A start converges to the GMM when at the horizon, with alpha = its
max-softmax tokens = opt: the step direction aligns with p_mm (1 - corr(-grad L, p_mm) <=
ALIGN), ||p_t|| increases over H/4, H/2, H, and 1 - corr(p_t, p_mm) does not increase over
the last octave (or is below 1e-3). It fails when the run converges in that sense to the
p_mm(alpha) of other tokens alpha, confirmed at 4x the horizon. Reported per start: the
alignment, 1 - corr and norms at the checkpoints, the fitted slope of log(1 - corr) against
log t, and the growth of the residual ||p_t - p_mm log t|| over the last octave (bounded when
p_mm is the limit of fixed-step GD).
"""

import numpy as np
from hypothesis import strategies as st

from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import keyed_datasets
from attnsvm.dynamics import GD, NormalizedGD, Problem, limits
from attnsvm.dynamics.smoothness import smoothness_constant
from attnsvm.svm import att_svm, geometry

GD_STEPS = 512
NGD_STEPS = 128
NGD_ETA = 0.25
TOL = limits.Tolerances(align=0.05, floor=1e-3)


def step_size(inst) -> bool:
    """eta <= 1/L_p for fixed-step GD (normalized GD takes steps of fixed length)."""
    return inst.params["rule"] == "ngd" or 0 < inst.params["eta_factor"] <= 1


def rule_of(inst):
    P = inst.params
    if P["rule"] == "ngd":
        return NormalizedGD(P.get("eta", NGD_ETA)), NGD_STEPS
    return GD(P["eta_factor"] / smoothness_constant(inst.dataset, P["loss"])), GD_STEPS


def limits_of(inst, budget, steps: int | None = None, extend_on=("undecided", "other")) -> tuple[list[limits.Limit], dict]:
    """Run every start of the instance (`steps` x horizon iterations, default by rule) and
    classify its limit (`attnsvm.dynamics.limits.run_to_limit`)."""
    ds, P = inst.dataset, inst.params
    rule, default = rule_of(inst)
    starts = np.asarray(P["starts"], dtype=float)
    problem = Problem.from_datasets([ds] * len(starts), P["loss"])
    tr, lims = limits.run_to_limit(ds, problem, rule, starts, int((steps or default) * budget.horizon), tol=TOL,
                                   extend_on=extend_on)
    detail = {"rule": P["rule"], "eta": float(rule.eta), "horizon": tr.steps[-1],
              "gmm": geometry.gmm(ds).p_mm.tolist(), "limits": [l.kind for l in lims],
              "starts": [{**l.detail, "kind": l.kind, "reason": l.reason} for l in lims]}
    return lims, detail


def _worst(lims: list[limits.Limit], gd: bool) -> dict:
    """Over the starts: the largest final alignment gap, 1 - corr and fitted slope of
    log(1 - corr) against log t towards the GMM, and (fixed-step GD: p_t ~ p_mm log t) the
    largest growth of ||p_t - p_mm log t|| over the last octave."""
    d = [l.detail["to_gmm"] for l in lims if "to_gmm" in l.detail]
    if not d:
        return {}
    out = {"worst_align_gap": max(x["align_gap"][-1] for x in d), "worst_corr_gap": max(x["corr_gap"][-1] for x in d),
           "worst_corr_gap_slope": max((x["corr_gap_slope_vs_log_t"] for x in d if x["corr_gap_slope_vs_log_t"] is not None), default=None)}
    if gd:
        out["worst_residual_growth"] = max(x["residual_growth_last_octave"] for x in d)
    return out


def to_gmm(inst, budget) -> Outcome:
    lims, detail = limits_of(inst, budget)
    detail.update(_worst(lims, inst.params["rule"] == "gd"))
    if any(l.kind == "other" for l in lims):
        return Outcome(False, detail=detail)
    undecided = [l for l in lims if l.kind == "undecided"]
    if undecided:
        return Outcome(None, detail=detail, reason=undecided[0].reason)
    return Outcome(True, detail=detail)


halves = st.integers(-4, 4).map(lambda k: k / 2)


def key_plane_starts(ds, count: int = 2):
    """`count` starts with coordinates in {-2, -1.5, ..., 2} on the keys' coordinates, 0 elsewhere."""
    dk = ds.d - 1
    return st.lists(st.lists(halves, min_size=dk, max_size=dk).map(lambda x: x + [0.0]), min_size=count, max_size=count)


def other_lmm_directions(ds) -> list[np.ndarray]:
    """p_mm(alpha) of the numerically locally optimal alpha != opt (float solve, no certificate:
    only used to aim starts; verdicts never rest on it)."""
    g, opt, out = model.scores(ds), tuple(model.optimal_tokens(ds)), []
    for alpha in geometry.candidate_alphas(ds, 256):
        res = att_svm(ds, alpha) if alpha != opt else None
        if res is not None and res.ok:
            gaps = [g[i, alpha[i]] - g[i, t] for i, t in res.active_tags]
            if min(gaps, default=np.inf) > 0:
                out.append(res.x)
    return out


@st.composite
def lmm_aimed_starts(draw, ds, others=None):
    """One start at r p_mm(alpha) for a locally optimal alpha != opt (r in {2, 3, 4}: margin r)
    when such an LMM exists, plus one start from `key_plane_starts`: aimed at a non-global limit."""
    others = other_lmm_directions(ds) if others is None else others
    starts = draw(key_plane_starts(ds, 1))
    if others:
        q = others[draw(st.integers(0, len(others) - 1))]
        starts = [(draw(st.sampled_from([2.0, 3.0, 4.0])) * q).tolist()] + starts
    return starts


@st.composite
def _instances(draw, dropped):
    T = st.just(3) if "assumption_B" in dropped else st.integers(2, 4)
    ds = draw(keyed_datasets(n=st.just(1), T=T, dk=st.just(2), lo=-1, hi=1,
                             scores="any" if "assumption_B" in dropped else "B"))
    rule = "gd" if "assumption_B" in dropped else draw(st.sampled_from(["gd", "ngd"]))
    starts = draw(lmm_aimed_starts(ds) if "assumption_B" in dropped else key_plane_starts(ds))
    return Instance(ds, {"loss": draw(st.sampled_from(sorted(LOSSES))), "rule": rule, "eta_factor": 1.0,
                         "starts": starts})


claim = Claim(
    name="theorem2",
    statement="Assumptions A, B, n = 1, ATT-SVM(opt) feasible, eta <= 1/L_p => ||p_t|| -> inf and "
              "p_t/||p_t|| -> p_mm/||p_mm|| (GD; normalized GD alongside)",
    hypotheses=(
        hyp.ASSUMPTION_A,
        hyp.STRICT_OPTIMALITY,
        hyp.ASSUMPTION_B,
        hyp.GMM_FEASIBLE,
        hyp.SINGLE_INPUT,
        Hypothesis("step_size", "eta <= 1/L_p (fixed-step GD)", step_size),
    ),
    conclusion=to_gmm,
    instances=_instances,
    proxy=f"GD (eta = 1/L_p) for {GD_STEPS} x horizon steps or normalized GD (eta {NGD_ETA}) for {NGD_STEPS} x horizon, "
          f"extended to 4x while undecided; converged to p_mm when at the horizon 1 - corr(-grad L, p_mm) <= {TOL.align}, "
          f"||p_t|| grows over H/4, H/2, H, 1 - corr(p_t, p_mm) is not increasing over the last octave (or <= {TOL.floor}) "
          f"and the max-softmax tokens are opt; failed when that holds for the p_mm(alpha) of other tokens at 4x the horizon",
    measures=("worst_align_gap", "worst_corr_gap", "worst_corr_gap_slope", "worst_residual_growth", "horizon"),
)
