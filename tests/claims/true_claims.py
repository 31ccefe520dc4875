"""True neighbours of `false_claims.py`: the same kinds of statement with the hypothesis that
makes them hold. None may be refuted at the quick budget."""

import numpy as np

from attnsvm.attention import model
from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.claims.strategies import gaussian_datasets, instances, integer_datasets, keyed_datasets, seeds
from attnsvm.dynamics import Problem
from attnsvm.svm import geometry

STRICT = Hypothesis("strict_optimality", "unique top score per input", lambda i: model.strict_optimality(i.dataset))
GMM = Hypothesis("gmm_feasible", "ATT-SVM(opt) feasible", lambda i: geometry.gmm(i.dataset).feasible)


def descends(inst, budget):
    """corr(grad L(p), p_mm) at seeded random p, from the cancellation-free gradient's direction:
    the textbook closed form (`model.grad_p`) loses its sign at saturation (at ||p|| ~ 9 on
    keys of size 2 it returns 6e-17 pointing up the risk; the exact direction points down)."""
    ds = inst.dataset
    q = geometry.gmm(ds).p_mm
    rng = np.random.default_rng(inst.params["seed"])
    u = rng.normal(size=(16, ds.d))
    P = u / np.linalg.norm(u, axis=1, keepdims=True) * 10 ** rng.uniform(-1, 1, size=(16, 1))
    g = Problem.from_datasets([ds] * 16).grad(model.t(P)).direction.numpy()
    worst = float((g @ q).max() / np.linalg.norm(q))
    return Outcome(worst < 0, detail={"max_corr": worst})


# Lemma 4: with Assumption B the covariance is positive, p_mm a descent direction.
descent_with_B = Claim(
    "descent-with-B", "n = 1, T = 3, Assumption B, GMM feasible => <grad L(p), p_mm> < 0", (STRICT, GMM), descends,
    lambda dropped: instances(keyed_datasets(n=1, T=3, dk=2, lo=-2, hi=2, scores="B"), seed=seeds()))


def gap_at_least_one(inst, budget):
    s = geometry.gmm(inst.dataset)
    return Outcome(s.score_gap >= 1, certified=s.certified, detail={"gap": s.score_gap})


# Integer scores and strict optimality: every neighbour scores at least 1 lower.
gap_one = Claim(
    "gmm-gap-at-least-one", "integer scores, strict optimality, GMM feasible => the GMM's score gap is at least 1",
    (STRICT, GMM), gap_at_least_one, lambda dropped: instances(keyed_datasets(n=2, T=2, dk=1, scores="any")))


def feasible(inst, budget):
    s = geometry.gmm(inst.dataset)
    return Outcome(s.feasible, certified=s.certified)


# Lemma 2: one common label and W = I (full rank).
lemma2 = Claim(
    "gmm-feasible-common-label", "positive labels, strict optimality, W = I => ATT-SVM(opt) is feasible",
    (STRICT,), feasible, lambda dropped: instances(integer_datasets(n=(1, 3), T=(2, 3), d=(1, 2), labels="positive")))


def w_rank_at_most_n(inst, budget):
    from attnsvm.svm import w_svm

    res = w_svm(inst.dataset, model.optimal_tokens(inst.dataset))
    if not res.ok:
        return Outcome(None, reason="W-SVM infeasible")
    rank = int(np.linalg.matrix_rank(res.solution, tol=1e-8))
    return Outcome(rank <= inst.dataset.n, detail={"rank": rank})


rank_at_most_n = Claim(
    "w-rank-at-most-n", "rank(W_mm) <= n", (STRICT,), w_rank_at_most_n,
    lambda dropped: instances(gaussian_datasets(n=2, T=2, d=3)))


def one_lmm(inst, budget):
    found = geometry.lmms(inst.dataset)
    return Outcome(len(found) == 1 and found[0].is_gmm, certified=all(s.certified for s in found))


# n = 1, T = 2: the other token's only possible neighbour is the optimal one, which scores higher.
two_tokens_one_lmm = Claim(
    "two-tokens-one-lmm", "n = 1, T = 2, strict optimality, distinct keys => the GMM is the only LMM",
    (STRICT, Hypothesis("distinct", "distinct keys",
                        lambda i: bool(np.any(model.keys(i.dataset)[0, 0] != model.keys(i.dataset)[0, 1])))),
    one_lmm, lambda dropped: instances(integer_datasets(n=1, T=2, d=(1, 2), lo=-2, hi=2)))


def feasible_every_alpha(inst, budget):
    ds = inst.dataset
    bad = [a for a in np.ndindex(*([ds.T] * ds.n)) if not geometry.select(ds, a).feasible]
    return Outcome(not bad)


# n (T - 1) <= d constraint rows of generic data are independent: every alpha is separable.
feasible_overparameterised = Claim(
    "feasible-few-rows", "n (T - 1) <= d, Gaussian data => ATT-SVM feasible for every alpha", (),
    feasible_every_alpha, lambda dropped: instances(gaussian_datasets(n=(1, 2), T=2, d=(2, 3))))
