"""Hypotheses on the data's sizes and shape."""

from attnsvm.claims.claim import Hypothesis
from attnsvm.claims.hypotheses import table


def _independent_queries(inst) -> bool:
    """The queries z_i (the dataset's z, else z_i = x_i1) are linearly independent: exact rank n (FLINT)."""
    from attnsvm.dynamics.seq2seq import exact_rank
    from attnsvm.svm import wlift

    ds = inst.dataset
    return ds.n <= ds.d and exact_rank(wlift.exact_queries(ds).tolist()) == ds.n


SINGLE_INPUT = Hypothesis("single_input", "n = 1", lambda inst: inst.dataset.n == 1)
TWO_INPUTS_TWO_TOKENS = Hypothesis("two_inputs_two_tokens", "n = 2 inputs of T = 2 tokens",
                                   lambda inst: inst.dataset.n == 2 and inst.dataset.T == 2)
INDEPENDENT_QUERIES = Hypothesis("independent_queries", "the queries z_1..z_n are linearly independent (exact; needs "
                                 "d >= n)", _independent_queries)


def _common_label(inst) -> bool:
    return len(set(inst.dataset.Y.tolist())) == 1


def _v_in_range_W(inst) -> bool:
    """v = W c for some c: rank [W | v] == rank W (exact)."""
    from attnsvm.svm.directional import exact_rank

    ex = inst.dataset.exact
    W = ex["W"].tolist()
    return exact_rank(W) == exact_rank([row + [x] for row, x in zip(W, ex["v"].tolist())])


def general_position(ds) -> bool:
    """In each input every min(T, d+1) tokens are affinely independent and every min(n, d) queries
    (the dataset's z, else z_i = x_i1) are linearly independent: exact (memoized on the dataset)."""
    import itertools

    from attnsvm.svm.directional import exact_rank

    def compute() -> bool:
        X = ds.exact["X"]
        for i in range(ds.n):
            for sub in itertools.combinations(range(ds.T), min(ds.T, ds.d + 1)):
                diffs = [[X[i, t, c] - X[i, sub[0], c] for c in range(ds.d)] for t in sub[1:]]
                if diffs and exact_rank(diffs) != len(sub) - 1:
                    return False
        Z = ds.exact["z"] if ds.z is not None else ds.exact["X"][:, 0, :]
        return all(exact_rank([list(Z[i]) for i in sub]) == len(sub)
                   for sub in itertools.combinations(range(ds.n), min(ds.n, ds.d)))

    return ds.memo("general_position_tokens_queries", compute)


COMMON_LABEL = Hypothesis("common_label", "all Y_i share one sign", _common_label)
V_IN_RANGE_W = Hypothesis("v_in_range_W", "v in range(W) (exact; implied by W full rank)", _v_in_range_W)
D_GE_T_MINUS_1 = Hypothesis("d_ge_T_minus_1", "d >= T - 1", lambda inst: inst.dataset.d >= inst.dataset.T - 1)
D_GE_N = Hypothesis("d_ge_n", "d >= n", lambda inst: inst.dataset.d >= inst.dataset.n)
GENERIC = Hypothesis("generic", "general position: every min(T, d+1) tokens of an input affinely independent, every "
                     "min(n, d) queries linearly independent (exact)", lambda inst: general_position(inst.dataset))

HYPOTHESES = table(SINGLE_INPUT, TWO_INPUTS_TWO_TOKENS, INDEPENDENT_QUERIES, COMMON_LABEL, V_IN_RANGE_W,
                   D_GE_T_MINUS_1, D_GE_N, GENERIC)
