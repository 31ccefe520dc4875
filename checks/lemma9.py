"""Lemma 9 (Appendix B.5.2, (69)): for a unit direction q with unique selected tokens alpha whose
directional neighbours all score strictly ABOVE their selected tokens, there is R_0 with
L(R q) < L_*(alpha) = (1/n) sum_i loss(gamma_{i,alpha_i}) for all R >= R_0 (the ray beats the risk of
selecting alpha exactly, the "directional risk baseline"; the formula is our reconstruction).

Each instance: an integer dataset, an integer direction q (unit direction q/||q||) and a loss of
Assumption A. Definition 3 is decided exactly (`attnsvm.svm.directional`). Proxy: the sign of
L(R q^) - L_* on the grid R_k = 2^k R_1, k = 0..G-1 (G = 6, one more per doubling of the horizon;
only R with R x (logit spread) <= MAX_EXPONENT), R_1 = 4 ||q|| / min(Gamma, Delta, 1) with Gamma the
margin and Delta the gap to the next row value (the proof's R_0 is of order log / Delta); the
difference is computed in float64's log domain with a rounding bound on every term, in mpmath
where the bound cannot settle its sign (`claims.rays`). It holds when the difference is negative at
the last LAST radii and fails when it is nonnegative there. Margin: -(L - L_*) / e^{-R Gamma / ||q||}
at the last radius, clipped to [-1, 1]."""

import math

from attnsvm.claims import Claim, Outcome, batched, rays
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import integer_datasets
from attnsvm.svm.directional import direction_of

G = 6
LAST = 3
MAX_EXPONENT = 3000.0      # largest R x (logit spread) evaluated (mpmath fallback: about 2600 digits)


def radii_count(horizon: float) -> int:
    """G radii at horizon 1, one more per doubling of the horizon."""
    return G + max(0, round(math.log2(horizon)))


def ray_grid(q, D, horizon: float) -> list[float]:
    """R_k = 2^k R_1 (see the module docstring)."""
    values = sorted(set(D.values.values()))
    delta = float(values[1] - values[0]) if len(values) > 1 else 1.0
    return rays.radii(4 * rays.norm(q) / min(float(D.margin), delta, 1.0), radii_count(horizon))


def below_baseline_one(inst, budget) -> Outcome:
    ds, P = inst.dataset, inst.params
    q = P["q"]
    D = direction_of(ds, q)
    found = rays.gaps(ds, P["loss"], ray_grid(q, D, budget.horizon), q, None, MAX_EXPONENT, rays.norm(q))
    out = rays.decide(found, D.margin, LAST, MAX_EXPONENT)
    return Outcome(out.holds,
                   detail={"alpha": list(D.alpha), "neighbors": [list(t) for t in D.neighbors], **out.detail},
                   reason=out.reason, margin=out.margin)


@batched
def below_baseline(insts, budget) -> list[Outcome]:
    return [below_baseline_one(inst, budget) for inst in insts]


claim = Claim(
    name="lemma9",
    evaluations=1100,
    statement="unit q with unique selected tokens alpha, every directional neighbour scoring above its selected token "
              "=> L(R q) < (1/n) sum_i loss(gamma_{i,alpha_i}) for all large R",
    hypotheses=hyp.of("lemma9"),
    conclusion=below_baseline,
    instances=lambda dropped: rays.directions(integer_datasets(n=(1, 2), T=(2, 3), d=(1, 2)), losses=True),
    proxy=f"sign of L(R q^) - L_* on R_k = 2^k R_1, k < {G} + log2(horizon), R x spread <= {MAX_EXPONENT}, R_1 = "
          f"4 ||q||/min(Gamma, Delta, 1), in float64's log domain with a rounding bound (mpmath where it cannot settle "
          f"the sign); holds when negative at the last {LAST} radii",
    horizon=f"{G} radii + log2(horizon)",
    measures=("margin",),
    tolerances={"radii": G, "last_radii": LAST, "max_exponent": MAX_EXPONENT},
)
