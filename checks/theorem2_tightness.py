"""Appendix E (Figure 8), as a claim expected to be REFUTED: "for n = 2 and T = 2 (Assumption B
holds trivially), GD with eta <= 1/L_p from every initialisation converges in direction to
the GMM". Theorem 2(b) needs n = 1, and the search shows it: datasets with n = 2, T = 2, d = 2
(integer tokens, W = I) that have a locally optimal selection other than the GMM, with one
start at r p_mm(alpha) for such an LMM alpha (r in {2, 3, 4}) and one start in {-2, ..., 2}^2.

The conclusion is Theorem 2's (`checks.theorem2.to_gmm`, proxy of `attnsvm.dynamics.limits`) at a
shorter horizon (HORIZON x budget horizon GD steps, extended 4x before a failure is
accepted; an undecided start is reported undecided at once: the search only needs failures): a start fails the claim when its steps align with the
p_mm(alpha) of the tokens alpha != opt that it selects, its norm grows and 1 - corr(p_t,
p_mm(alpha)) does not grow, still at 4x the horizon. For the hand instance of
docs/statements.md#theorem2-tightness
(stored witness `theorem2-tightness--hand.json`) the derivation proves non-convergence
to the GMM exactly."""

from hypothesis import assume
from hypothesis import strategies as st

from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import integer_datasets
from attnsvm.results.checks.theorem2 import (
    TOL,
    limits_of,
    lmm_aimed_starts,
    other_lmm_directions,
    step_size,
)

HORIZON = 64


def two_inputs_two_tokens(inst) -> bool:
    return inst.dataset.n == 2 and inst.dataset.T == 2


def every_start_to_gmm(inst, budget) -> Outcome:
    lims, detail = limits_of(inst, budget, HORIZON, extend_on=("other",))
    if any(l.kind == "other" for l in lims):
        return Outcome(False, detail=detail)
    undecided = [l for l in lims if l.kind == "undecided"]
    if undecided:
        return Outcome(None, detail=detail, reason=undecided[0].reason)
    return Outcome(True, detail=detail)


@st.composite
def _instances(draw, dropped):
    ds = draw(integer_datasets(n=st.just(2), T=st.just(2), d=st.just(2), lo=-3, hi=3, labels="positive"))
    others = other_lmm_directions(ds)
    assume(others)                                        # aim: a non-global LMM exists
    return Instance(ds, {"loss": "logistic", "rule": "gd", "eta_factor": 1.0,
                         "starts": draw(lmm_aimed_starts(ds, others))})


claim = Claim(
    name="theorem2-tightness",
    evaluations=100,
    statement="n = 2, T = 2 (Assumption B trivially), ATT-SVM(opt) feasible, eta <= 1/L_p => GD from every "
              "initialisation converges in direction to the GMM",
    hypotheses=(
        hyp.get("loss.assumption_A"),
        Hypothesis("two_inputs_two_tokens", "n = 2 inputs of T = 2 tokens", two_inputs_two_tokens),
        hyp.get("scores.assumption_B"),
        hyp.get("att_svm.gmm_feasible"),
        Hypothesis("step_size", "eta <= 1/L_p", step_size),
    ),
    conclusion=every_start_to_gmm,
    instances=_instances,
    proxy=f"Theorem 2's proxy (attnsvm.dynamics.limits) for GD with eta = 1/L_p over {HORIZON} x horizon steps (4x to confirm a failure); "
          f"a start refutes when at 4x the horizon 1 - corr(-grad L, p_mm(alpha)) <= {TOL.align} for its max-softmax "
          f"tokens alpha != opt, ||p_t|| grows and 1 - corr(p_t, p_mm(alpha)) is not increasing (or <= {TOL.floor})",
)
