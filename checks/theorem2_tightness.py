"""Appendix E (Figure 8), as a claim expected to be REFUTED: "for n = 2 and T = 2 (Assumption B
holds trivially), GD with eta <= 1/L_p from every initialisation converges in direction to
the GMM". Theorem 2(b) needs n = 1, and the search shows it: datasets with n = 2, T = 2, d = 2
(integer tokens, W = I) that have a locally optimal selection other than the GMM, with one
start at r p_mm(alpha) for such an LMM alpha (r in {2, 3, 4}) and one start in {-2, ..., 2}^2.

The conclusion is Theorem 2's proxy (`attnsvm.dynamics.limits`, with this claim's own
tolerances) at a shorter horizon (HORIZON x budget horizon GD steps, a failure confirmed at
CONFIRM x that horizon; an undecided instance is reported undecided at once: the search only
needs failures): a start fails the claim when its steps align with the p_mm(alpha) of the tokens
alpha != opt that it selects, its norm grows and 1 - corr(p_t, p_mm(alpha)) does not grow, still
at CONFIRM x the horizon. All instances run as one batch (one shape). For the hand instance of
docs/statements.md#theorem2-tightness
(stored witness `theorem2-tightness--hand.json`) the derivation proves non-convergence
to the GMM exactly."""

from attnsvm.claims import Claim, Instance, Outcome, batched, starts
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import integer_datasets, just
from attnsvm.dynamics import limits
from attnsvm.dynamics.smoothness import smoothness_constant
from attnsvm.svm import geometry

HORIZON = 64
TOL = limits.Tolerances(align=0.05, floor=1e-3)
CONFIRM = 4


@batched
def every_start_to_gmm(insts, budget):
    rules = [("gd", inst.params["eta_factor"] / smoothness_constant(inst.dataset, inst.params["loss"]),
              int(HORIZON * budget.horizon)) for inst in insts]
    out = []
    for inst, run, (_, eta, _) in zip(insts, limits.descend(insts, rules, tol=TOL), rules):
        detail = {"rule": "gd", "eta": float(eta), "horizon": run.tr.steps[-1],
                  "gmm": geometry.gmm(inst.dataset).p_mm.tolist(), "limits": [l.kind for l in run.limits],
                  "starts": [{**l.detail, "kind": l.kind, "reason": l.reason} for l in run.limits]}
        undecided = [l for l in run.limits if l.kind == "undecided"]
        if any(l.kind == "other" for l in run.limits):
            out.append(Outcome(False, detail=detail))
        elif undecided:
            out.append(Outcome(None, detail=detail, reason=undecided[0].reason))
        else:
            out.append(Outcome(True, detail=detail))
    return out


def aimed_instances() -> Space:
    """n = 2, T = 2, d = 2 integer data in [-3, 3] (positive labels) with a non-global LMM, GD at
    eta = 1/L_p from one start aimed at it (`claims.starts.aimed`) and one in the key plane."""
    data = integer_datasets(n=2, T=2, d=2, lo=-3, hi=3, labels="positive")

    def generate(c):
        ds = data.generate(c)
        others = starts.other_lmm_directions(ds)
        if not others:                                    # aim: a non-global LMM exists
            c.reject()
        return Instance(ds, {"loss": "logistic", "rule": "gd", "eta_factor": 1.0,
                             "starts": starts.aimed(c, ds, others)})

    return Space(generate, "integer datasets n 2, T 2, d 2, entries in [-3, 3], positive labels, with a non-global "
                           "LMM; GD from a start aimed at it",
                 params={"loss": just("logistic"), "rule": just("gd"), "eta_factor": just(1.0),
                         "starts": Space(lambda c: None, "start points (lists of d numbers)")})


claim = Claim(
    name="theorem2-tightness",
    evaluations=100,
    statement="n = 2, T = 2 (Assumption B trivially), ATT-SVM(opt) feasible, eta <= 1/L_p => GD from every "
              "initialisation converges in direction to the GMM",
    hypotheses=hyp.of("theorem2-tightness"),
    conclusion=every_start_to_gmm,
    instances=lambda dropped: aimed_instances(),
    confirm=(CONFIRM,),
    extend=(),
    tolerances={"align": TOL.align, "floor": TOL.floor},
    proxy=f"Theorem 2's proxy (attnsvm.dynamics.limits) for GD with eta = 1/L_p over {HORIZON} x horizon steps "
          f"({CONFIRM}x to confirm a failure); a start refutes when at {CONFIRM}x the horizon 1 - corr(-grad L, "
          f"p_mm(alpha)) <= {TOL.align} for its max-softmax tokens alpha != opt, ||p_t|| grows and 1 - corr(p_t, "
          f"p_mm(alpha)) is not increasing (or <= {TOL.floor})",
)
