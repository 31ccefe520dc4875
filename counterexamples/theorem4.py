"""Theorem 4: each hypothesis dropped in turn makes "the restricted path does not converge to
q" fail, with an aimed search.

- q_not_lmm: q is exactly an LMM direction p_mm(alpha); the path restricted to any cone
  around it converges to it (the gap to q decays like a power of R).
- distinct_scores: one input, keys 0, (a, -c), (0, -b) with 0 < c < b, scores (1, 1, 0).
  Selecting token 1 has the TIED token 2 as an active SVM-neighbour, so Definition 2 calls
  alpha = 1 not locally optimal and q = e_2 = (k1 - k3)/||k1 - k3|| is no LMM direction; but
  mixing a tied token costs nothing, q maximises the margin against token 3, and the path
  restricted around q converges to q.
- general_position: two tokens share one key (a zero row k_1 - k_2): no selection of either is
  feasible, there are no LMMs at all, and the path separates the pair from the third token
  along q. The LMM set then fails to describe the limits."""

from attnsvm.claims.hypotheses.regpath import lmm_directions
from attnsvm.claims.registry import Search
from attnsvm.claims.strategies import gaussian_datasets, keyed_dataset
from attnsvm.results.checks.theorem4 import q_instances


def lmm_q(c, ds) -> list:
    """q = the exact p_mm of one of the dataset's LMMs."""
    lm = lmm_directions(ds)
    return [str(x) for x in lm[c.integer(0, len(lm) - 1, "index")].certificate.x] if lm else ["1", "0"]


def tied_neighbour(c):
    """keys 0, (a, -c), (0, -b), 0 < c < b, scores (1, 1, 0): tokens 1 and 2 tied."""
    b = c.integer(2, 4, "entry")
    cc = c.integer(1, b - 1, "entry")
    a = c.integer(1, 3, "entry")
    return keyed_dataset([[[0, 0], [a, -cc], [0, -b]]], [[1, 1, 0]], [1], name="tied-neighbour")


def repeated_key(c):
    """Tokens 1 and 2 share the key 0, token 3 at (x, 0): the row k_1 - k_2 = 0."""
    x = c.integer(1, 3, "entry")
    return keyed_dataset([[[0, 0], [0, 0], [x, 0]]], [[2, 1, 0]], [1], name="repeated-key")


SEARCHES = {
    "q_not_lmm": Search(instances=lambda dropped: q_instances(gaussian_datasets(n=(1, 2), T=(2, 3), d=2), lmm_q),
                        note="q = p_mm(alpha) of an LMM: the restricted path converges to q"),
    "distinct_scores": Search(instances=lambda dropped: q_instances(tied_neighbour, lambda c, ds: ["0", "1", "0"]),
                              note="a tied active SVM-neighbour makes q non-LMM by Definition 2, yet q is the limit"),
    "general_position": Search(instances=lambda dropped: q_instances(repeated_key, lambda c, ds: ["-1", "0", "0"]),
                               note="a repeated key: no LMM exists, the path still converges to q"),
}
