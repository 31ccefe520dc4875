"""Lemma 8, first statement (Appendix B.5.1, (62)-(64)): unit directions p, q with the same
unique selected tokens alpha, both neighbour-optimal (Definition 3), and directional margins
Gamma(p) > Gamma(q) (delta = Gamma(p) - Gamma(q)): there is R_delta with L(R p) < L(R q) for all
R >= R_delta. (The formulas are lost in our text; reconstructed from the proof: both risks approach
the baseline L_*(alpha) from above, at rates e^{-R Gamma(p)} and e^{-R Gamma(q)}.)

The second statement (q with a unique, better-scoring directional neighbour beats p) is what the
necessity search of `q_neighbor_optimal` exhibits (counterexamples/lemma8.py).

Each instance: an integer dataset, integer directions p and q (unit directions p/||p||, q/||q||),
a loss of Assumption A; Definition 3 and the margin order are decided exactly
(`attnsvm.svm.directional`). Proxy: the sign of L(R p^) - L(R q^) on R_k = 2^k R_1, k < G +
log2(horizon) (R x logit spread <= MAX_EXPONENT), R_1 = 4/min(delta, Delta_p, Delta_q, 1) (Delta: gap
from the margin to the next row value, per unit norm), in float64's log domain with a rounding bound
on every term, in mpmath where the bound cannot settle the sign (`claims.rays`); holds when
negative at the last LAST radii, fails when nonnegative there."""

import math

import numpy as np

from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Instance, Outcome, batched, rays
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import integer_datasets
from attnsvm.svm.directional import direction_of

G = 6
LAST = 3
MAX_EXPONENT = 3000.0      # largest R x (logit spread) evaluated


def radii_count(horizon: float) -> int:
    """G radii at horizon 1, one more per doubling of the horizon."""
    return G + max(0, round(math.log2(horizon)))


def _gap(D, norm) -> float:
    rows = sorted(set(D.values.values()))
    return float(rows[1] - rows[0]) / norm if len(rows) > 1 else 1.0


def ray_comparison_one(inst, budget) -> Outcome:
    ds, P = inst.dataset, inst.params
    p, q = P["p"], P["q"]
    np_, nq = rays.norm(p), rays.norm(q)
    Dp, Dq = direction_of(ds, p), direction_of(ds, q)
    delta = abs(float(Dp.margin) / np_ - float(Dq.margin) / nq)
    R1 = 4 / min([x for x in (delta, _gap(Dp, np_), _gap(Dq, nq), 1.0) if x > 0])
    found = rays.gaps(ds, P["loss"], rays.radii(R1, radii_count(budget.horizon)), p, q, MAX_EXPONENT, nq)
    out = rays.decide(found, Dq.margin, LAST, MAX_EXPONENT)
    return Outcome(out.holds, reason=out.reason, margin=out.margin,
                   detail={"alpha": list(Dp.alpha), "Gamma_p_unit": float(Dp.margin) / np_,
                           "Gamma_q_unit": float(Dq.margin) / nq, "neighbors_p": [list(t) for t in Dp.neighbors],
                           "neighbors_q": [list(t) for t in Dq.neighbors],
                           **out.detail})


@batched
def ray_comparison(insts, budget) -> list[Outcome]:
    return [ray_comparison_one(inst, budget) for inst in insts]


def premise_pairs(datasets: Space, lo: int = -2, hi: int = 2, p_optimal: bool = True) -> Space:
    """A dataset, a loss of Assumption A and one pair (p, q) of integer directions in [lo, hi]^d
    meeting the lemma's premises, picked among all such pairs (screened exactly with
    `rays.table`; the hypotheses then decide each instance again): random pairs meet them
    about once in 25 draws. `p_optimal` False: p is NOT neighbour-optimal instead (the premise
    the lemma turns out not to need)."""
    names = sorted(LOSSES)

    def generate(c) -> Instance:
        ds = datasets.generate(c)
        loss = c.sampled_from(names)
        dirs = rays.candidates(ds.d, lo, hi)
        tb = rays.table(ds, dirs)
        p_ok = tb.unique & (tb.neighbor_optimal == p_optimal)
        q_ok = tb.unique & tb.neighbor_optimal
        ok = (tb.alpha[:, None] == tb.alpha[None, :]).all(-1) & p_ok[:, None] & q_ok[None, :] & (tb.margin_order() > 0)
        pairs = np.argwhere(ok)
        if not len(pairs):
            c.reject()
        a, b = pairs[c.integer(0, len(pairs) - 1, "index")]
        return Instance(ds, {"q": dirs[b].tolist(), "loss": loss, "p": dirs[a].tolist()})

    which = "meeting the premises" + ("" if p_optimal else ", p not neighbour-optimal")
    return Space(generate, f"{datasets.description}; loss in {names}; (p, q) one of the pairs of integer directions "
                           f"in [{lo}, {hi}]^d {which}")


claim = Claim(
    name="lemma8",
    evaluations=1100,
    statement="unit p, q with the same unique selected tokens, both neighbour-optimal, Gamma(p) > Gamma(q) => "
              "L(R p) < L(R q) for all large R",
    hypotheses=hyp.of("lemma8"),
    conclusion=ray_comparison,
    instances=lambda dropped: premise_pairs(integer_datasets(n=(1, 2), T=(2, 3), d=2)),
    proxy=f"sign of L(R p^) - L(R q^) on R_k = 2^k R_1, k < {G} + log2(horizon), R x spread <= {MAX_EXPONENT}, R_1 = "
          f"4/min(delta, Delta_p, Delta_q, 1), in float64's log domain with a rounding bound (mpmath where it cannot "
          f"settle the sign); holds when negative at the last {LAST} radii",
    horizon=f"{G} radii + log2(horizon)",
    measures=("margin",),
    tolerances={"radii": G, "last_radii": LAST, "max_exponent": MAX_EXPONENT},
)
