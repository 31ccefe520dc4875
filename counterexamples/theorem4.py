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

from attnsvm.claims.registry import Search

SEARCHES = {
    "q_not_lmm": Search(note="q = p_mm(alpha) of an LMM: the restricted path converges to q"),
    "distinct_scores": Search(note="a tied active SVM-neighbour makes q non-LMM by Definition 2, yet q is the limit"),
    "general_position": Search(note="a repeated key: no LMM exists, the path still converges to q"),
}
