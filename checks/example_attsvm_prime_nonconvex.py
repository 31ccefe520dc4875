"""Appendix D's example, as a claim expected to be REFUTED: "(ATT-SVM') is convex", i.e. its
feasible set  {p : max_{j in O_i} (k_ij - k_it)^T p >= 1, t not in O_i}  is convex, once some
optimal set O_i has two or more tokens. The paper's instance (stored witness
`example-attsvm-prime-nonconvex--hand.json`): one input, tokens with keys e1, -e1 and 0, the first
two optimal: the solution set is {e1, -e1} and their midpoint 0 violates the constraints.

Decided exactly by `svm.generalized.att_svm_prime` (every piece certified; the keyed datasets
have integer keys): holds when convexity is certified (one piece contains the others, exact LP
duals), fails on an exact non-convexity witness (two feasible points whose midpoint violates a
constraint), undecided otherwise. Instances: keyed datasets (Figure-1 construction) with integer
keys in [-2, 2]^2 and scores in [-1, 1], sets = the top-score tokens."""

from attnsvm.claims import Claim, Instance, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import keyed_dataset
from attnsvm.svm import generalized


def sets_of(inst):
    return tuple(tuple(O) for O in inst.params["sets"])


def feasible_set_convex(inst, budget) -> Outcome:
    """One instance at a time on purpose: the claim is expected REFUTED and its counterexamples are
    common, so a batched conclusion would solve a whole batch (256 instances, 2 s) before the
    search reaches the failure that the first evaluation usually shows."""
    sol = generalized.att_svm_prime(inst.dataset, sets_of(inst))
    detail = sol.to_json()
    if not sol.certified:
        return Outcome(None, detail=detail, reason="a piece of (ATT-SVM') is not certified")
    if sol.convexity.startswith("not convex"):
        return Outcome(False, certified=True, detail=detail)
    if sol.convexity.startswith("convex"):
        return Outcome(True, certified=True, detail=detail)
    return Outcome(None, detail=detail, reason=sol.evidence.get("reason", sol.convexity))


def _instances(dropped):
    def generate(c) -> Instance:
        nn, TT = c.integer(1, 2, "size"), c.integer(3, 4, "size")
        keys = [[[c.integer(-2, 2, "entry") for _ in range(2)] for _ in range(TT)] for _ in range(nn)]
        scores = [[c.integer(-1, 1, "entry") for _ in range(TT)] for _ in range(nn)]
        ds = keyed_dataset(keys, scores, name="keyed-tied")
        return Instance(ds, {"sets": [list(O) for O in generalized.top_sets(ds)]})

    return Space(generate, "keyed datasets n 1..2, T 3..4, keys in [-2, 2]^2, scores in [-1, 1]; "
                           "sets = top-score tokens",
                 params={"sets": Space(lambda c: None, "optimal sets O_i (lists of token indices)")})


claim = Claim(
    name="example-attsvm-prime-nonconvex",
    statement="some O_i has two or more tokens (and none is all of [T]) => the feasible set of (ATT-SVM') is convex",
    hypotheses=hyp.of("example-attsvm-prime-nonconvex"),
    conclusion=feasible_set_convex,
    instances=_instances,
    expected=("REFUTED",),
)
