"""Lemma 3 (key lemma, Appendix A.1): for a = K q, s = S(K p), scores gamma and a reference token o,

    |a^T diag(s) gamma - a^T s s^T gamma - sum_{t != o} (a_o - a_t) s_t (gamma_o - gamma_t)| <= 2 Gamma A (1 - s_o)^2

(Gamma = max |gamma_t - gamma_tau|, A = max_t |a_t|; reconstruction, see lemmas/lemma3.py).

Each instance: one input of an integer dataset (keys K = X W and scores exact), an integer
direction q (entries in [-3, 3], from the seed), p = r u (u uniform on the sphere, log10 r uniform
in [-1, 1.5]: from a flat softmax to deep saturation) and the reference token o = ref mod T.
The left side is evaluated as written (the textbook covariance form, no identity of the proof
used) in mpmath with enough digits that the softmax's smallest weights and the cancellation in
the covariance are resolved (digits grow with the logit spread). The margin is
1 - |left| / bound (0 at equality: the bound is attained for T = 2, a_o = -a_t, |a_o| = A)."""

import math

import mpmath
import numpy as np

from attnsvm.attention import model
from attnsvm.claims import Claim, Outcome, batched
from attnsvm.claims.strategies import instances, integer_datasets, integers, seeds

LOG10_RADII = (-1.0, 1.5)
SLACK = 1e-30            # relative: far below the working precision's resolution of the bound


def key_lemma_one(inst) -> Outcome:
    ds, P = inst.dataset, inst.params
    K, g = model.exact_keys(ds)[0], model.exact_scores(ds)[0]
    rng = np.random.default_rng(P["seed"])
    q = rng.integers(-3, 4, size=ds.d).tolist()
    u = rng.normal(size=ds.d)
    p = u / np.linalg.norm(u) * 10.0 ** rng.uniform(*LOG10_RADII)
    o = P["ref"] % ds.T
    logits = [float(sum(float(K[t][j]) * p[j] for j in range(ds.d))) for t in range(ds.T)]
    spread = max(logits) - min(logits)
    with mpmath.workdps(40 + int(3 * spread / math.log(10))):
        a = [mpmath.mpf(sum(K[t][j] * q[j] for j in range(ds.d)).numerator)
             / sum(K[t][j] * q[j] for j in range(ds.d)).denominator
             for t in range(ds.T)]
        gm = [mpmath.mpf(x.numerator) / x.denominator for x in g]
        e = [mpmath.exp(mpmath.mpf(x) - max(logits)) for x in logits]
        Z = mpmath.fsum(e)
        s = [x / Z for x in e]
        left = (mpmath.fsum(a[t] * s[t] * gm[t] for t in range(ds.T))
                - mpmath.fsum(a[t] * s[t] for t in range(ds.T)) * mpmath.fsum(s[t] * gm[t] for t in range(ds.T))
                - mpmath.fsum((a[o] - a[t]) * s[t] * (gm[o] - gm[t]) for t in range(ds.T) if t != o))
        Gamma = max(gm) - min(gm)
        A = max(abs(x) for x in a)
        rest = mpmath.fsum(s[t] for t in range(ds.T) if t != o)
        bound = 2 * Gamma * A * rest ** 2
        detail = {"q": q, "p": p.tolist(), "o": o, "left": float(left), "bound": float(bound),
                  "one_minus_s_o": float(rest), "digits": mpmath.mp.dps}
        if bound == 0:                      # Gamma = 0 or A = 0: the left side must vanish exactly
            zero = bool(abs(left) <= mpmath.mpf(10) ** (-mpmath.mp.dps + 10))
            return Outcome(zero, detail=detail, margin=0.0 if zero else -1.0)
        ratio = abs(left) / bound
        detail["ratio"] = float(ratio)
        return Outcome(bool(ratio <= 1 + mpmath.mpf(SLACK)), detail=detail, margin=float(1 - ratio))


@batched
def key_lemma(insts, budget) -> list[Outcome]:
    return [key_lemma_one(inst) for inst in insts]


claim = Claim(
    name="lemma3",
    evaluations=1300,
    statement="|a^T diag(s) gamma - a^T s s^T gamma - sum_{t != o} (a_o - a_t) s_t (gamma_o - gamma_t)| <= 2 Gamma A "
              "(1 - s_o)^2 for a = K q, s = S(K p), any token o",
    hypotheses=(),
    conclusion=key_lemma,
    instances=lambda dropped: instances(integer_datasets(n=1, T=(2, 5), d=(1, 3)), seed=seeds(), ref=integers(0, 4)),
    proxy=f"exact keys, scores and integer q; p = r u with log10 r uniform in {list(LOG10_RADII)}; both sides in "
          f"mpmath at 40 + 3 x (logit spread)/ln 10 digits; holds when |left|/bound <= 1 + {SLACK}",
    measures=("ratio", "one_minus_s_o"),
    tolerances={"relative_slack": SLACK},
)
