"""Lemma 12 (core paper, Appendix C.2, first step of Theorem 6's proof; statement reconstructed,
its formulas are lost in the extraction): if the joint path selects alpha asymptotically,
s_{i,alpha_i}(p(r, R)) -> 1, then for all large R it lies in the quadrant (77)

    (k_{i,alpha_i} - k_it)^T p >= 0   for every i and t != alpha_i.

The proof is pointwise: once s_{i,alpha_i}(p) > 1/2, a token t with a logit >= alpha_i's would
have s_t >= s_{i,alpha_i}, so s_{i,alpha_i} <= 1/2. The check tests that pointwise step at every
point p meeting its premise: hypothesis `softmax.selects_alpha` (min_i s_{i,alpha_i}(p) > 1/2,
computed with log-softmax, with a float margin of 1e-12), conclusion (77) decided exactly (integer
keys and p). Margin: min_{i,t} (k_{i,alpha_i} - k_it)^T p / max(1, ||p||_1 max|k|). Instances:
integer datasets n 1..2, T 2..4, d 1..3, integer p in [-4, 4]^d, alpha one index per input.

The path part (s -> 1 makes s > 1/2 for large R) is the definition of a limit; the path itself is
Theorem 6's (`checks/theorem6.py`)."""

import numpy as np

from attnsvm.attention import model
from attnsvm.claims import Claim, Instance, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.hypotheses.softmax import FLOAT_MARGIN, selected_mass
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import integer_datasets


@batched
def in_quadrant(insts, budget) -> list[Outcome]:
    outs = []
    for inst in insts:
        ds, P = inst.dataset, inst.params
        K = model.exact_keys(ds)
        p = P["p"]
        vals = [(sum(((K[i, P["alpha"][i], k] - K[i, t, k]) * p[k] for k in range(ds.d)), 0), i, t)
                for i in range(ds.n) for t in range(ds.T) if t != P["alpha"][i]]
        low, i, t = min(vals)
        scale = max(1.0, float(np.abs(model.keys(ds)).max()) * float(np.abs(p).sum()))
        detail = {"least_value": str(low), "at": [i, t], "selected_mass": selected_mass(inst).tolist()}
        outs.append(Outcome(low >= 0, certified=True, detail=detail, margin=float(low) / scale))
    return outs


def _instances(dropped):
    data = integer_datasets(n=(1, 2), T=(2, 4), d=(1, 3), lo=-2, hi=2)

    def generate(c) -> Instance:
        ds = data.generate(c)
        p = [c.integer(-4, 4, "entry") for _ in range(ds.d)]
        alpha = [c.integer(0, ds.T - 1, "index") for _ in range(ds.n)]
        return Instance(ds, {"p": p, "alpha": alpha})

    return Space(generate, data.description + "; p integer in [-4, 4]^d; alpha one index per input",
                 params={"p": Space(lambda c: None, "integer point"), "alpha": Space(lambda c: None, "token indices")})


claim = Claim(
    name="lemma12",
    evaluations=2000,
    statement="min_i s_{i,alpha_i}(p) > 1/2 (eventually true when the path selects alpha) => (k_{i,alpha_i} - k_it)^T "
              "p >= 0 for all i, t != alpha_i (the quadrant (77))",
    hypotheses=hyp.of("lemma12"),
    conclusion=in_quadrant,
    instances=_instances,
    tolerances={"selected_mass_float_margin": FLOAT_MARGIN},
)
