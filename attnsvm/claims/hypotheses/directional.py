"""Hypotheses on directions q (and p) of the key space (paper A, Definition 3,
docs/statements.md#definition3): the tokens q selects, its directional neighbours and margin,
and Theorem 7's general position of the keys. Each is decided exactly (rational arithmetic,
`attnsvm.svm.directional`); directions are the instance's params['q'] (and params['p'])."""

import itertools

from attnsvm.attention import model
from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table
from attnsvm.svm.directional import direction_of, exact_rank, unit_margin_order

GENERAL_POSITION_LIMIT = 64     # T^n above this: general position is not decided (treated as not met)


def general_position(inst) -> bool:
    """Keys in general position (Theorem 7), exactly: for every alpha and every set of distinct
    rows k_{i,alpha_i} - k_it (t != alpha_i), a set of at most d rows is linearly independent and
    a set of d + 1 rows M has no p with M p = 1 (then no larger set has one either)."""
    ds = inst.dataset
    return ds.memo("general_position", lambda: _general_position(ds))


def _general_position(ds) -> bool:
    K = model.exact_keys(ds)
    if ds.T ** ds.n > GENERAL_POSITION_LIMIT:
        return False                                        # not decided exhaustively: treated as not met
    for alpha in itertools.product(range(ds.T), repeat=ds.n):
        rows = [[K[i, alpha[i]][c] - K[i, t][c] for c in range(ds.d)] for i in range(ds.n) for t in range(ds.T)
                if t != alpha[i]]
        for size in range(1, min(len(rows), ds.d + 1) + 1):
            for sub in itertools.combinations(rows, size):
                if size <= ds.d and exact_rank(sub) < size:
                    return False
                if size == ds.d + 1 and exact_rank(sub) == exact_rank([list(r) + [1] for r in sub]):
                    return False
    return True


def _q(inst):
    return direction_of(inst.dataset, inst.params["q"])


def _p(inst):
    return direction_of(inst.dataset, inst.params["p"])


def _same_selection(inst) -> bool:
    Dp, Dq = _p(inst), _q(inst)
    return Dp.unique and Dq.unique and Dp.alpha == Dq.alpha


GENERAL_POSITION = Hypothesis("general_position", "keys in general position (Theorem 7; exact, every alpha)",
                              general_position)
UNIQUE_SELECTION = Hypothesis("unique_selection", "every input's max-logit token along q is unique (exact)",
                              lambda inst: _q(inst).unique)
NEIGHBORS_BETTER = Hypothesis("neighbors_better", "every directional neighbour of q scores strictly above its "
                              "selected token (exact)", lambda inst: _q(inst).neighbors_better)
SAME_SELECTION = Hypothesis("same_selection", "p and q select the same tokens, each uniquely (exact)", _same_selection)
MARGIN_ORDER = Hypothesis("margin_order", "Gamma(p)/||p|| > Gamma(q)/||q|| (exact)",
                          lambda inst: unit_margin_order(inst.dataset, inst.params["p"], inst.params["q"]) > 0)
P_NEIGHBOR_OPTIMAL = Hypothesis("p_neighbor_optimal", "p's directional neighbours score below their selected tokens "
                                "(exact)", lambda inst: _p(inst).neighbor_optimal)
Q_NEIGHBOR_OPTIMAL = Hypothesis("q_neighbor_optimal", "q's directional neighbours score below their selected tokens "
                                "(exact)", lambda inst: _q(inst).neighbor_optimal)

HYPOTHESES = table(GENERAL_POSITION, UNIQUE_SELECTION, NEIGHBORS_BETTER, SAME_SELECTION, MARGIN_ORDER,
                   P_NEIGHBOR_OPTIMAL, Q_NEIGHBOR_OPTIMAL)
