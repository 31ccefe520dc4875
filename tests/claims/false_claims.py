"""False claims in attnsvm's vocabulary, of the kinds a user writes (variants of the papers'
statements on small configurations). Each must be REFUTED at the quick budget; none states a
margin unless it says so, so the search must find them by its exhaustive scopes or at random.
`true_claims.py` holds true neighbours of these, which must not be refuted."""

import numpy as np

from attnsvm.attention import model
from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.claims.strategies import instances, integer_datasets, keyed_datasets, sampled_from, seeds
from attnsvm.dynamics import NormalizedGD, Problem, run
from attnsvm.svm import geometry

STRICT = Hypothesis("strict_optimality", "unique top score per input", lambda i: model.strict_optimality(i.dataset))
GMM = Hypothesis("gmm_feasible", "ATT-SVM(opt) feasible", lambda i: geometry.gmm(i.dataset).feasible)


def descends(inst, budget):
    """<grad L(p), p_mm> < 0 at seeded random points p (log-radius in [-1, 2])."""
    ds = inst.dataset
    q = geometry.gmm(ds).p_mm
    rng = np.random.default_rng(inst.params["seed"])
    for _ in range(16):
        u = rng.normal(size=ds.d)
        p = u / np.linalg.norm(u) * 10 ** rng.uniform(-1, 2)
        g = model.grad_p(ds, p).numpy()
        if g @ q >= 0 and np.linalg.norm(g) > 1e-12:
            return Outcome(False, detail={"p": p.tolist(), "inner": float(g @ q)})
    return Outcome(True)


# Lemma 4 without Assumption B: three tokens with free integer scores.
descent_without_B = Claim(
    "descent-without-B", "n = 1, T = 3, strict optimality, GMM feasible => <grad L(p), p_mm> < 0 for every p",
    (STRICT, GMM), descends,
    lambda dropped: instances(keyed_datasets(n=1, T=3, dk=2, lo=-2, hi=2, scores="any"), seed=seeds()))


def at_most_T_lmms(inst, budget):
    k = len(geometry.lmms(inst.dataset))
    return Outcome(k <= inst.dataset.T, detail={"lmms": k})


# A dataset with four LMMs exists (about one draw in a thousand).
few_lmms = Claim(
    "at-most-T-lmms", "n = 2, T = 3 => at most T locally optimal selections",
    (), at_most_T_lmms, lambda dropped: instances(keyed_datasets(n=2, T=3, dk=2, lo=-2, hi=2, scores="any")))


def ngd_to_gmm(inst, budget):
    ds = inst.dataset
    q = geometry.gmm(ds).p_mm
    tr = run(Problem.from_datasets([ds]), NormalizedGD(0.1), np.array(inst.params["start"], float),
             int(2000 * budget.horizon))
    c = float(tr.final[0].numpy() @ q / (np.linalg.norm(tr.final[0].numpy()) * np.linalg.norm(q)))
    return Outcome(c > 0.99, detail={"corr": c})


# Appendix E: with two inputs a second LMM can attract normalized GD.
ngd_global = Claim(
    "ngd-global-n2", "n = 2, T = 2, strict optimality, GMM feasible => NGD from any start aligns with the GMM",
    (STRICT, GMM), ngd_to_gmm,
    lambda dropped: instances(integer_datasets(n=2, T=2, d=2, lo=-2, hi=2, labels="positive"),
                              start=sampled_from([[0, 0], [4, 4], [-4, 4], [4, -4], [-4, -4], [6, 0], [0, 6]])))


def feasible(inst, budget):
    s = geometry.gmm(inst.dataset)
    return Outcome(s.feasible, certified=s.certified)


# Lemma 2 without its label condition.
feasible_any_labels = Claim(
    "gmm-feasible-any-labels", "strict optimality and W = I => ATT-SVM(opt) is feasible",
    (STRICT,), feasible, lambda dropped: instances(integer_datasets(n=(1, 3), T=(2, 3), d=(1, 2))))


def every_input_has_a_neighbour(inst, budget):
    s = geometry.gmm(inst.dataset)
    return Outcome(all(len(t) > 0 for t in s.neighbors), certified=s.certified, detail={"neighbours": s.neighbors})


# The GMM's support: an input may have no SVM-neighbour.
gmm_support = Claim(
    "gmm-every-input-supports", "strict optimality, GMM feasible => every input has an SVM-neighbour at the GMM",
    (STRICT, GMM), every_input_has_a_neighbour, lambda dropped: instances(integer_datasets(n=2, T=(2, 3), d=2)))


def w_rank_below_n(inst, budget):
    from attnsvm.svm import w_svm

    res = w_svm(inst.dataset, model.optimal_tokens(inst.dataset))
    if not res.ok:
        return Outcome(None, reason="W-SVM infeasible")
    rank = int(np.linalg.matrix_rank(res.solution, tol=1e-8))
    return Outcome(rank < inst.dataset.n, detail={"rank": rank})


# Transformers as SVMs: rank(W_mm) <= n, not < n.
rank_below_n = Claim(
    "w-rank-below-n", "strict optimality => rank(W_mm) < n", (STRICT,), w_rank_below_n,
    lambda dropped: instances(integer_datasets(n=2, T=2, d=3, lo=-2, hi=2)))


def w_feasible(inst, budget):
    s = geometry.gmm(inst.dataset)
    return Outcome(s.feasible, certified=s.certified)


# Lemma 2 asks v in range(W) (or W full rank), not merely W != 0.
feasible_w_nonzero = Claim(
    "gmm-feasible-w-nonzero", "positive labels, strict optimality, W != 0 => ATT-SVM(opt) is feasible",
    (STRICT, Hypothesis("w_nonzero", "W != 0", lambda i: bool(np.any(i.dataset.W)))), w_feasible,
    lambda dropped: instances(integer_datasets(n=(1, 2), T=(2, 3), d=2, lo=-1, hi=1, labels="positive", W="integer")))


def unique_lmm(inst, budget):
    found = geometry.lmms(inst.dataset)
    return Outcome(len(found) <= 1, detail={"lmms": [list(s.alpha) for s in found]})


# n = 1 with three tokens can have two LMMs.
one_lmm = Claim(
    "one-input-one-lmm", "n = 1, T = 3 => at most one LMM", (), unique_lmm,
    lambda dropped: instances(keyed_datasets(n=1, T=3, dk=2, lo=-2, hi=2, scores="any")))


def feasible_every_alpha(inst, budget):
    ds = inst.dataset
    bad = [a for a in np.ndindex(*([ds.T] * ds.n)) if not geometry.select(ds, a).feasible]
    return Outcome(not bad, detail={"infeasible": [list(map(int, a)) for a in bad]})


# Transformers as SVMs' feasibility needs d >= n too, not only d >= T - 1.
feasible_d_ge_T = Claim(
    "feasible-d-ge-T-minus-1", "d >= T - 1 => ATT-SVM feasible for every alpha", (), feasible_every_alpha,
    lambda dropped: instances(integer_datasets(n=3, T=2, d=1, lo=-2, hi=2)))


def norm_grows(inst, budget):
    ds = inst.dataset
    tr = run(Problem.from_datasets([ds]), NormalizedGD(0.1), np.zeros(ds.d), int(200 * budget.horizon))
    n = tr.p[:, 0].norm(dim=-1).numpy()
    return Outcome(bool(n[-1] > 5), detail={"norm": float(n[-1])})


# Without a separable GMM the iterate may stay bounded (a finite minimiser).
norm_diverges = Claim(
    "ngd-norm-diverges", "strict optimality => normalized GD's norm grows past 5 in 200 steps", (STRICT,), norm_grows,
    lambda dropped: instances(integer_datasets(n=2, T=2, d=1, lo=-2, hi=2)))
