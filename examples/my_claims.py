"""Example user claims in attnsvm's vocabulary: `attnsvm check examples/my_claims.py`.

Each module-level Claim is checked; `expected` pins the verdict the author wants (the
command exits 1 otherwise). Pin them in pytest with `attnsvm.claims.testing.assert_verdict`.
"""

from attnsvm.attention import model
from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.claims.strategies import instances, integer_datasets
from attnsvm.svm import geometry


def strict_optimality(inst):
    return model.strict_optimality(inst.dataset)


def gmm_feasible(inst):
    return geometry.gmm(inst.dataset).feasible


def distinct_keys(inst):
    K = model.keys(inst.dataset)
    return all(len({tuple(k) for k in Ki}) == inst.dataset.T for Ki in K)


def only_lmm_is_gmm(inst, budget):
    """Every locally optimal selection (Definition 2) is the optimal one. The margin (how far
    from failing) is minus the best score gap of a feasible non-optimal selection: a selection
    with a positive gap would be a second LMM, so the search steers toward one."""
    sels = list(geometry.selections(inst.dataset))
    others = [list(s.alpha) for s in sels if s.locally_optimal and not s.is_gmm]
    gaps = [s.score_gap for s in sels if s.feasible and not s.is_gmm]
    margin = -max(gaps) if gaps and max(gaps) < float("inf") else (-1.0 if gaps else 1.0)
    return Outcome(not others, certified=all(s.certified for s in sels if s.locally_optimal),
                   detail={"other_lmms": others}, margin=margin)


# False: Appendix E's tightness instance has a second LMM; the search finds one like it.
unique_lmm = Claim(
    name="two-by-two-unique-lmm",
    statement="n = 2, T = 2, strict optimality, GMM feasible => the GMM is the only LMM",
    hypotheses=(Hypothesis("strict_optimality", "gamma_{i,opt_i} > gamma_it", strict_optimality),
                Hypothesis("gmm_feasible", "(ATT-SVM) with alpha = opt is feasible", gmm_feasible)),
    conclusion=only_lmm_is_gmm,
    instances=lambda dropped: instances(integer_datasets(n=2, T=2, d=2)),
    expected=("REFUTED",),
)


def gmm_is_feasible(inst, budget):
    s = geometry.gmm(inst.dataset)
    return Outcome(s.feasible, certified=s.certified, detail={"status": s.result.status})


# True: with two distinct keys the single constraint (k_opt - k_other)^T p >= 1 is satisfiable.
# Over entries in [-1, 1] with d = 1 the space is finite: every case is decided exactly.
two_token_separable = Claim(
    name="two-token-gmm-feasible",
    statement="n = 1, T = 2, d = 1, integer entries in [-1, 1] and distinct keys => (ATT-SVM) with "
              "alpha = opt is feasible",
    hypotheses=(Hypothesis("distinct_keys", "the keys of an input are pairwise distinct", distinct_keys),),
    conclusion=gmm_is_feasible,
    instances=lambda dropped: instances(integer_datasets(n=1, T=2, d=1, lo=-1, hi=1, W="integer")),
    expected=("CERTIFIED",),
)
