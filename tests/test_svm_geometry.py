"""SVMs: quadprog hot path against cvxpy; exact KKT and Farkas certificates, including that a
wrong solution is rejected; Definition 2 on the tightness instance (docs/statements.md#theorem2-tightness)."""

from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from attnsvm import svm
from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.claims.strategies import gaussian_dataset, integer_datasets
from attnsvm.svm import geometry
from attnsvm.svm.certificates import certify

TIGHT = Dataset.from_arrays([[[1, 0], [0, 0]], [[0, 0], [2, 1]]], [1, 1], [1, -3], name="tightness")


@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(2, 5), st.integers(2, 6))
def test_quadprog_agrees_with_cvxpy(seed, n, T, d):
    ds = gaussian_dataset(seed, n, T, d)
    alpha = np.random.default_rng(seed).integers(0, T, n)
    fast, ref = svm.att_svm(ds, alpha), svm.att_svm(ds, alpha, solver="cvxpy")
    assert fast.status == ref.status
    if fast.ok:   # cvxpy (Clarabel) is accurate to ~1e-5; the exact certificate decides
        assert np.allclose(fast.x, ref.x, atol=1e-4 * max(1, np.abs(ref.x).max()))
        assert certify(fast).verified
        assert np.linalg.norm(fast.x) <= np.linalg.norm(ref.x) * (1 + 1e-9) or min(ref.problem.A @ ref.x) < 1
    else:
        assert certify(fast).verified and certify(fast).kind == "farkas"


@given(integer_datasets(W="integer").strategy())
def test_certificates_decide_every_integer_instance(ds):
    res = svm.att_svm(ds, model.optimal_tokens(ds))
    cert = certify(res)
    assert cert.verified
    eA = res.problem.exact().fractions()
    if cert.kind == "kkt":
        vals = [sum(a * x for a, x in zip(row, cert.x)) for row in eA]
        assert min(vals) >= 1 and {j for j, v in enumerate(vals) if v == 1} == set(cert.active)
    else:
        lam = cert.lam
        assert all(l >= 0 for l in lam) and sum(lam) == 1
        assert all(sum(l * row[c] for l, row in zip(lam, eA)) == 0 for c in range(eA.shape[1]))


def test_certificate_rejects_a_wrong_solution():
    res = svm.att_svm(TIGHT, (0, 0))
    assert certify(res).verified and certify(res).x == (Fraction(1), Fraction(-3))
    wrong = svm.SVMResult(res.problem, "optimal", "test", np.array([1.0, -3.5]), np.array([0.0, 1.0]), (1,))
    assert not certify(wrong).verified


def test_infeasible_problem_returns_status_and_exact_farkas():
    ds = Dataset.from_arrays([[[1], [0]], [[1], [0]]], [1, -1], [1])   # opt = (0, 1): p >= 1 and -p >= 1
    res = svm.att_svm(ds, model.optimal_tokens(ds))
    assert res.status == "infeasible" and res.solution is None
    cert = certify(res)
    assert cert.verified and cert.lam == (Fraction(1, 2), Fraction(1, 2))


def test_tightness_instance_geometry():
    g = geometry.gmm(TIGHT)
    assert g.certified and g.is_gmm and np.allclose(g.p_mm, [1, -3]) and g.neighbors == ((1,), (1,))
    found = {s.alpha: s for s in geometry.lmms(TIGHT)}
    assert set(found) == {(0, 0), (0, 1)}
    lmm = found[(0, 1)]
    assert np.allclose(lmm.p_mm, [1, 0]) and lmm.neighbors == ((1,), ()) and not lmm.is_gmm
    assert not geometry.select(TIGHT, (1, 0)).locally_optimal


def test_non_locally_optimal_neighbour_with_higher_score():
    # input 0: selected token 1 has an SVM-neighbour (token 0) with a higher score.
    ds = Dataset.from_arrays([[[1, 0], [0, 1]]], [1], [1, 0])
    s = geometry.select(ds, (1,))
    assert s.feasible and s.neighbors == ((0,),) and s.score_gap == -1 and not s.locally_optimal


@given(st.integers(0, 1000), st.floats(0.01, 0.5), st.floats(0.5, 50))
def test_cone_samples_lie_in_the_cone(seed, mu, R):
    q = np.random.default_rng(seed).normal(size=3)
    for p in geometry.sample_cone(q, mu, R, np.random.default_rng(seed), size=5):
        assert geometry.in_cone(p, q, mu + 1e-12, R * (1 - 1e-12))


def test_w_svm_nuclear_and_frobenius_on_self_attention():
    ds = gaussian_dataset(4, 2, 3, 4)
    fro, nuc = svm.w_svm(ds, (1, 2)), svm.w_svm(ds, (1, 2), norm="nuclear")
    assert fro.ok and nuc.ok and fro.solution.shape == (4, 4)
    assert np.linalg.norm(nuc.solution, "nuc") <= np.linalg.norm(fro.solution, "nuc") + 1e-6
    assert np.linalg.norm(fro.solution) <= np.linalg.norm(nuc.solution) + 1e-6


@given(integer_datasets(n=(1, 3), T=(2, 3), d=(1, 3), W="integer").strategy())
def test_numeric_screening_finds_the_same_lmms_as_exact_classification(ds):
    exact = {a for a in geometry.candidate_alphas(ds) if geometry.select(ds, a).locally_optimal}
    screened = geometry.lmms(ds)
    assert {s.alpha for s in screened} == exact and all(s.certified for s in screened)
