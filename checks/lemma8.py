"""Lemma 8, first statement (Appendix B.5.1, (62)-(64)): unit directions p, q with the same
unique selected tokens alpha, both neighbour-optimal (Definition 3), and directional margins
Gamma(p) > Gamma(q) (delta = Gamma(p) - Gamma(q)): there is R_delta with L(R p) < L(R q) for all
R >= R_delta. (The formulas are lost in our text; reconstructed from the proof: both risks approach
the baseline L_*(alpha) from above, at rates e^{-R Gamma(p)} and e^{-R Gamma(q)}.)

The second statement (q with a unique, better-scoring directional neighbour beats p) is what the
necessity search of `q_neighbor_optimal` exhibits (counterexamples/lemma8.py).

Each instance: an integer dataset, integer directions p and q (unit directions p/||p||, q/||q||),
a loss of Assumption A; Definition 3 and the margin order are decided exactly
(`attnsvm.svm.directional`). Proxy: L(R p^) - L(R q^) in mpmath on R_k = 2^k R_1, k < 6 + log2(horizon) (R x logit spread <= 3000),
R_1 = 4/min(delta, Delta_p, Delta_q, 1) (Delta: gap from the margin to the next row value, per unit
norm); holds when negative at the last 3 radii, fails when nonnegative there."""

import math

from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import integer_datasets
from attnsvm.svm.directional import direction, mp_risk, unit_margin_order
from attnsvm.results.checks.lemma9 import G, MAX_EXPONENT, decide, radii_count, ray_instances, risk_gaps


def _gap(D, norm) -> float:
    rows = sorted(set(D.values.values()))
    return float(rows[1] - rows[0]) / norm if len(rows) > 1 else 1.0


def ray_comparison(inst, budget) -> Outcome:
    ds, P = inst.dataset, inst.params
    p, q = P["p"], P["q"]
    np_, nq = math.sqrt(sum(x * x for x in p)), math.sqrt(sum(x * x for x in q))
    Dp, Dq = direction(ds, p), direction(ds, q)
    delta = abs(float(Dp.margin) / np_ - float(Dq.margin) / nq)
    R1 = 4 / min([x for x in (delta, _gap(Dp, np_), _gap(Dq, nq), 1.0) if x > 0])
    radii = [R1 * 2 ** k for k in range(radii_count(budget.horizon))]
    # risk_gaps normalises its direction itself: L(R p^) - L(R q^), with q^ = q/||q|| at the same R
    ref = lambda R, _: mp_risk(ds, [R * x / nq for x in q], P["loss"])
    gaps = risk_gaps(ds, p, P["loss"], radii, ref)
    out = decide([(R, g, R / nq) for R, g, _ in gaps], Dq.margin)
    return Outcome(out.holds, reason=out.reason, margin=out.margin,
                   detail={"alpha": list(Dp.alpha), "Gamma_p_unit": float(Dp.margin) / np_, "Gamma_q_unit": float(Dq.margin) / nq,
                           "neighbors_p": [list(t) for t in Dp.neighbors], "neighbors_q": [list(t) for t in Dq.neighbors],
                           **out.detail})


def _same(inst) -> bool:
    Dp, Dq = direction(inst.dataset, inst.params["p"]), direction(inst.dataset, inst.params["q"])
    return Dp.unique and Dq.unique and Dp.alpha == Dq.alpha


def _p_opt(inst) -> bool:
    return direction(inst.dataset, inst.params["p"]).neighbor_optimal


def _q_opt(inst) -> bool:
    return direction(inst.dataset, inst.params["q"]).neighbor_optimal


def _order(inst) -> bool:
    return unit_margin_order(inst.dataset, inst.params["p"], inst.params["q"]) > 0


def _p_direction(c, ds):
    p = [c.integer(-2, 2, "entry") for _ in range(ds.d)]
    if not any(p):
        c.reject()
    return {"p": p}


claim = Claim(
    name="lemma8",
    evaluations=170,
    statement="unit p, q with the same unique selected tokens, both neighbour-optimal, Gamma(p) > Gamma(q) => "
              "L(R p) < L(R q) for all large R",
    hypotheses=(hyp.get("loss.assumption_A"),
                Hypothesis("same_selection", "p and q select the same tokens, each uniquely (exact)", _same),
                Hypothesis("margin_order", "Gamma(p)/||p|| > Gamma(q)/||q|| (exact)", _order),
                Hypothesis("p_neighbor_optimal", "p's directional neighbours score below their selected tokens (exact)", _p_opt),
                Hypothesis("q_neighbor_optimal", "q's directional neighbours score below their selected tokens (exact)", _q_opt)),
    conclusion=ray_comparison,
    instances=lambda dropped: ray_instances(integer_datasets(n=(1, 2), T=(2, 3), d=2), extra=_p_direction),
    proxy=f"mpmath L(R p^) - L(R q^) on R_k = 2^k R_1, k < {G} + log2(horizon), R x spread <= {MAX_EXPONENT}, R_1 = 4/min(delta, Delta_p, Delta_q, 1); holds "
          f"when negative at the last 3 radii",
    horizon=f"{G} radii + log2(horizon)",
    measures=("margin",),
)
