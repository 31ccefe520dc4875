"""Lemma 9 (Appendix B.5.2, (69)): for a unit direction q with unique selected tokens alpha whose
directional neighbours all score strictly ABOVE their selected tokens, there is R_0 with
L(R q) < L_*(alpha) = (1/n) sum_i loss(gamma_{i,alpha_i}) for all R >= R_0 (the ray beats the risk of
selecting alpha exactly, the "directional risk baseline"; the formula is our reconstruction).

Each instance: an integer dataset, an integer direction q (unit direction q/||q||) and a loss of
Assumption A. Definition 3 is decided exactly (`attnsvm.svm.directional`). Proxy: the risk
difference L(R q^) - L_* is evaluated in mpmath (enough digits for e^{-R Gamma}) on the grid
R_k = 2^k R_1, k = 0..G-1 (G = 6, one more per doubling of the horizon;
only R with R x (logit spread) <= MAX_EXPONENT), R_1 = 4 ||q|| / min(Gamma, Delta, 1) with Gamma the margin
and Delta the gap to the next row value (the proof's R_0 is of order log / Delta); it holds when
the difference is negative at the last LAST radii and fails when it is nonnegative there. Margin:
-(L - L_*) / e^{-R Gamma / ||q||} at the last radius, clipped to [-1, 1]."""

import math

import mpmath
import numpy as np

from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import integer_datasets
from attnsvm.svm.directional import direction, mp_baseline, mp_risk

G = 6
LAST = 3
MAX_EXPONENT = 3000.0      # largest R x (logit spread) evaluated (about 2600 digits)


def ray_grid(q, D, horizon: float) -> list[float]:
    """R_k = 2^k R_1 (see the module docstring)."""
    nq = math.sqrt(sum(x * x for x in q))
    rows = sorted(set(D.values.values()))
    delta = float(rows[1] - rows[0]) if len(rows) > 1 else 1.0
    R1 = 4 * nq / min(float(D.margin), delta, 1.0)
    return [R1 * 2 ** k for k in range(radii_count(horizon))]


def radii_count(horizon: float) -> int:
    """G radii at horizon 1, one more per doubling of the horizon."""
    return G + max(0, round(math.log2(horizon)))


def risk_gaps(ds, q, loss, radii, reference) -> list:
    """[(R, L(R q^) - reference(R), scale e^{-R Gamma/||q||})] in mpmath; reference(R) an mpf."""
    nq = math.sqrt(sum(x * x for x in q))
    K = model.keys(ds)
    spread = max(float(np.linalg.norm(K[i][:, None] - K[i][None], axis=-1).max()) for i in range(ds.n))
    out = []
    for R in radii:
        if R * max(spread, 1.0) > MAX_EXPONENT:
            break                                  # e^{-R spread} past what the working precision should carry
        with mpmath.workdps(30 + int(2 * R * max(spread, 1.0) / math.log(10))):      # resolves e^{-R spread} against 1
            p = [mpmath.mpf(R) * x / mpmath.sqrt(sum(mpmath.mpf(y) ** 2 for y in q)) for x in q]
            out.append((R, mp_risk(ds, p, loss) - reference(R, p), R / nq))
    return out


def decide(gaps, margin_gamma) -> Outcome:
    """Negative at the last LAST radii: holds; nonnegative there: fails; mixed: inconclusive."""
    if len(gaps) < LAST:
        return Outcome(None, detail={"radii": [x for x, _, _ in gaps]},
                       reason=f"fewer than {LAST} radii below R x spread = {MAX_EXPONENT}: margins too small for the grid")
    tail = gaps[-LAST:]
    signs = [g < 0 for _, g, _ in tail]
    R, g, r = tail[-1]
    scale = mpmath.exp(-r * mpmath.mpf(float(margin_gamma)))
    m = float(max(-1, min(1, -g / scale))) if scale > 0 else (1.0 if g < 0 else -1.0)
    detail = {"radii": [x for x, _, _ in gaps], "differences": [mpmath.nstr(x, 6) for _, x, _ in gaps], "margin": m}
    if all(signs):
        return Outcome(True, detail=detail, margin=m)
    if not any(signs):
        return Outcome(False, detail=detail, margin=min(m, 0.0))
    return Outcome(None, detail=detail, reason=f"the sign of the risk difference changes within the last {LAST} radii")


def below_baseline(inst, budget) -> Outcome:
    ds, P = inst.dataset, inst.params
    q = P["q"]
    D = direction(ds, q)
    gaps = risk_gaps(ds, q, P["loss"], ray_grid(q, D, budget.horizon), lambda R, p: mp_baseline(ds, D.alpha, P["loss"]))
    out = decide(gaps, D.margin)
    return Outcome(out.holds, detail={"alpha": list(D.alpha), "neighbors": [list(t) for t in D.neighbors], **out.detail},
                   reason=out.reason, margin=out.margin)


def ray_instances(datasets, lo: int = -2, hi: int = 2, extra=None) -> Space:
    """A dataset, a loss of Assumption A and an integer direction q != 0 (params 'q', 'loss'; `extra(c, ds)` may add more)."""
    losses = sorted(LOSSES)

    def generate(c):
        ds = datasets.generate(c)
        q = [c.integer(lo, hi, "entry") for _ in range(ds.d)]
        if not any(q):
            c.reject()
        params = {"q": q, "loss": c.sampled_from(losses)}
        if extra is not None:
            params.update(extra(c, ds))
        return Instance(ds, params)
    return Space(generate, f"{datasets.description}; integer q in [{lo}, {hi}]^d, q != 0; loss in {losses}")


def _unique(inst) -> bool:
    return direction(inst.dataset, inst.params["q"]).unique


def _better(inst) -> bool:
    return direction(inst.dataset, inst.params["q"]).neighbors_better


claim = Claim(
    name="lemma9",
    evaluations=520,
    statement="unit q with unique selected tokens alpha, every directional neighbour scoring above its selected token "
              "=> L(R q) < (1/n) sum_i loss(gamma_{i,alpha_i}) for all large R",
    hypotheses=(hyp.get("loss.assumption_A"),
                Hypothesis("unique_selection", "every input's max-logit token along q is unique (exact)", _unique),
                Hypothesis("neighbors_better", "every directional neighbour of q scores strictly above its selected token "
                           "(exact)", _better)),
    conclusion=below_baseline,
    instances=lambda dropped: ray_instances(integer_datasets(n=(1, 2), T=(2, 3), d=(1, 2))),
    proxy=f"mpmath risk difference on R_k = 2^k R_1, k < {G} + log2(horizon), R x spread <= {MAX_EXPONENT}, R_1 = 4 ||q||/min(Gamma, Delta, 1); holds when "
          f"negative at the last {LAST} radii",
    horizon=f"{G} radii + log2(horizon)",
    measures=("margin",),
)
