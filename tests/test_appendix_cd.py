"""Appendices C and D of the core paper: Lemmas 12, 13 and 14, Theorem 8, the (ATT-SVM') non-convexity
example, and the (ATT-SVM') solver (`svm.generalized`): verdicts of every part pinned, and the
solver's answers checked against independent exact computations."""

from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsvm.attention import losses
from attnsvm.claims import Instance, Verdict, get_budget, registry, runner
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import keyed_dataset
from attnsvm.svm import generalized

IDS = ("lemma12", "lemma13", "lemma14", "theorem8", "example-attsvm-prime-nonconvex")
DERIVATION = {"lemma12": "PROVED", "lemma13": "PARTIAL", "lemma14": "PARTIAL", "theorem8": "PARTIAL",
              "example-attsvm-prime-nonconvex": "PROVED"}


# ---- verdicts ---------------------------------------------------------------------------------

@pytest.mark.parametrize("id", IDS)
def test_result_verdicts_as_expected(id):
    """Derivation and check as registered; every stored necessity witness replays REFUTED; stored claim witnesses
    (the example's hand instance) refute."""
    e = registry.entry(id)
    reports = list(runner.reports(e, "quick", 0))
    assert [r.part for r in reports][:2] == ["derivation", "check"]
    assert len(reports) == 2 + len(registry.searches(e)) + len(registry.claim_witnesses(e))
    for r in reports:
        assert r.as_expected, (r.part, r.verdict, r.evidence)
        if r.part.startswith("drop:") or r.part.startswith("witness:"):
            assert r.verdict is Verdict.REFUTED and r.evidence.get("replayed"), r.evidence
    assert str(reports[0].verdict) == DERIVATION[id]


def test_registry_entries_and_assumption_D():
    for id in IDS:
        e = registry.entry(id)
        short = [hyp.short(q) for q in e.hypotheses]
        assert set(e.necessity) == set(registry.searches(e)) and set(e.necessity) <= set(short)
        assert registry.claim(e).hypothesis_names() == short
    assert "(q^p)^{1 + mu}" in registry.entry("assumption-D").statement
    assert registry.entry("example-attsvm-prime-nonconvex").kind == "example"


# ---- the (ATT-SVM') solver --------------------------------------------------------------------

PAPER = keyed_dataset([[[1, 0], [-1, 0], [0, 0]]], [[1, 1, 0]])


def _values(ds, sets, p):
    """max_{j in O_i} (k_ij - k_it)^T p, recomputed here from the exact keys."""
    from attnsvm.attention import model

    K = model.exact_keys(ds)
    dot = lambda i, t: sum((K[i, t, k] * Fraction(p[k]) for k in range(ds.d)), Fraction(0))
    return [max(dot(i, j) for j in O) - dot(i, t) for i, O in enumerate(sets) for t in range(ds.T) if t not in O]


def test_paper_example_solution_set_and_midpoint():
    sol = generalized.att_svm_prime(PAPER, [[0, 1]])
    assert sol.certified and sol.value2 == 1
    assert sorted(sol.solutions) == sorted([(Fraction(1), Fraction(0), Fraction(0)),
                                            (Fraction(-1), Fraction(0), Fraction(0))])
    assert sol.convexity.startswith("not convex")
    a, b = ([Fraction(x) for x in w] for w in sol.evidence["witness_points"])
    assert min(_values(PAPER, [[0, 1]], a)) >= 1 and min(_values(PAPER, [[0, 1]], b)) >= 1
    assert min(_values(PAPER, [[0, 1]], [(x + y) / 2 for x, y in zip(a, b)])) < 1


def test_containment_certifies_convexity():
    """keys (1,0), (2,0), 0 with O = {1, 2}: F(alpha = 1) = {2 p_1 >= 1} contains F(alpha = 0) = {p_1 >= 1}."""
    ds = keyed_dataset([[[1, 0], [2, 0], [0, 0]]], [[1, 1, 0]])
    sol = generalized.att_svm_prime(ds, [[0, 1]])
    assert sol.convexity == "convex: one piece contains the others" and sol.evidence["containing_alpha"] == [1]
    assert sol.value2 == Fraction(1, 4) and sol.solutions == [(Fraction(1, 2), Fraction(0), Fraction(0))]


def test_singleton_sets_are_att_svm():
    """Singleton sets: one piece, convex, and the solution meets (ATT-SVM)'s constraints with some equality."""
    ds = keyed_dataset([[[1, 0], [0, 1], [0, 0]], [[2, 1], [0, 0], [1, -1]]], [[1, 0, -1], [1, 0, -1]])
    sets = generalized.top_sets(ds)
    sol = generalized.att_svm_prime(ds, sets)
    assert sol.convexity == "convex: singleton sets" and len(sol.pieces) == 1
    vals = _values(ds, sets, sol.solutions[0])
    assert min(vals) == 1


@st.composite
def tied_data(draw):
    n, T = draw(st.integers(1, 2)), draw(st.integers(3, 4))
    keys = draw(st.lists(st.lists(st.lists(st.integers(-2, 2), min_size=2, max_size=2), min_size=T, max_size=T),
                         min_size=n, max_size=n))
    scores = draw(st.lists(st.lists(st.integers(-1, 1), min_size=T, max_size=T), min_size=n, max_size=n))
    return keyed_dataset(keys, scores)


@settings(max_examples=25, deadline=None)
@given(ds=tied_data(), u=st.lists(st.integers(-3, 3), min_size=2, max_size=2))
def test_solver_optimal_against_scaled_directions(ds, u):
    """Every solution is feasible (exactly, recomputed here) with norm^2 = Xi^2; any direction u that can be scaled to
    feasibility reaches it only at norm^2 >= Xi^2 (exact); infeasible problems have no such direction."""
    sets = generalized.top_sets(ds)
    sol = generalized.att_svm_prime(ds, sets, convexity=False)
    assert sol.certified
    u = [Fraction(x) for x in u] + [Fraction(0)]
    dots = _values(ds, sets, u)
    scalable = bool(dots) and min(dots) > 0
    if not sol.feasible:
        assert not scalable
        return
    for x in sol.solutions:
        assert min(_values(ds, sets, x), default=1) >= 1 and sum(a * a for a in x) == sol.value2
    if scalable:
        lam = 1 / min(dots)                      # the smallest lambda with lambda u feasible
        assert lam * lam * sum(a * a for a in u) >= sol.value2


def test_set_rows_match_the_generalized_w_svm_definition():
    """cross.generalized_w_svm's rows (shared `set_rows`): vec((x_io - x_it) z_i^T) and the within-set equalities."""
    from attnsvm.attention import model
    from attnsvm.dynamics.cross import generalized_w_svm

    ds = keyed_dataset([[[1, 0], [0, 1], [2, 2]], [[1, 1], [0, 2], [1, 0]]], [[1, 1, 0], [0, 1, -1]])
    sets = [[0, 1], [1]]
    res, N, E = generalized_w_svm(ds, sets)
    Z = model.queries(ds)
    rows = [np.outer(ds.X[i, o] - ds.X[i, t], Z[i]).ravel() for i, O in enumerate(sets) for o in O
            for t in range(ds.T) if t not in O]
    np.testing.assert_allclose(res.problem.A, np.array(rows) @ N, atol=1e-12)
    np.testing.assert_allclose(E, [np.outer(ds.X[0, 0] - ds.X[0, 1], Z[0]).ravel()], atol=1e-12)


def test_check_sets_rejects_bad_sets():
    from attnsvm.errors import UserError

    with pytest.raises(UserError):
        generalized.att_svm_prime(PAPER, [[]])
    with pytest.raises(UserError):
        generalized.att_svm_prime(PAPER, [[0], [1]])


# ---- Theorem 8's heads and Lemma 14's check ---------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(u=st.floats(-2, 2), c=st.floats(1e-3, 1), loss=st.sampled_from(sorted(losses.LOSSES)),
       head=st.sampled_from(["tanh", "cubic"]))
def test_head_loss_increment_and_derivative(u, c, loss, head):
    L = generalized.head_loss(loss, head)
    phi = generalized._phi(head)[0]
    base = losses.get_loss(loss)
    U, Cc = torch.tensor(u, dtype=torch.float64), torch.tensor(c, dtype=torch.float64)
    direct = base.value(phi(U - Cc)) - base.value(phi(U))
    assert float(L.increment(U, Cc)) == pytest.approx(float(direct), rel=1e-9, abs=1e-12)
    x = U.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(base.value(phi(x)), x)
    assert float(L.deriv(U)) == pytest.approx(float(g), rel=1e-9, abs=1e-12)


def test_lemma14_check_fails_with_a_too_large_threshold(monkeypatch):
    """The proxy can fail: with Q_mu = 1 (no threshold) and mu = 1/4, a p' with less non-optimal mass spread over the
    input of larger score gaps has the larger risk."""
    import attnsvm.results.checks.lemma14 as l14

    ds = keyed_dataset([[[0, 0], [1, 2], [-2, -2]], [[2, 2], [-1, -1], [2, 0]]], [[-2, 2, -2], [-1, 1, 0]], [1, 1])
    inst = Instance(ds, {"loss": "exponential", "head": "linear", "mu": 0.25, "seed": 0,
                         "sets": [list(O) for O in generalized.top_sets(ds)]})
    assert l14.mixing_hurts(inst, get_budget("quick")).holds is True
    monkeypatch.setattr(l14, "q_mu", lambda *a: 1.0)
    out = l14.mixing_hurts(inst, get_budget("quick"))
    assert out.holds is False and out.detail["failing_pair"]["excess_p_prime"] >= out.detail["failing_pair"]["excess_p"]


def test_lemma12_threshold_is_one_half():
    """s_alpha > 1/2 forces alpha to be the argmax; at s_alpha = 1/2 exactly two tied logits are possible."""
    from attnsvm.results.checks.lemma12 import in_quadrant

    selects_alpha = hyp.get("softmax.selects_alpha").decide
    ds = keyed_dataset([[[0, 0], [1, 0]]], [[0, 0]])
    tied = Instance(ds, {"p": [0, 0, 0], "alpha": [0]})
    assert not selects_alpha(tied) and in_quadrant(tied, get_budget("quick")).holds is True
    ahead = Instance(ds, {"p": [-1, 0, 0], "alpha": [0]})
    assert selects_alpha(ahead) and in_quadrant(ahead, get_budget("quick")).holds is True


def test_lemma13_competitor_on_figure3b():
    """Figure 3(b): input 3 is not a support vector; (78) at eps = 1/2 sits between p_relax and the interpolation."""
    from attnsvm.results.checks.lemma13 import competitor_margin
    from attnsvm.svm.joint import best_selection, figure3

    ds = figure3(("1/2", "3/2"))
    out = competitor_margin(Instance(ds, {"alpha": best_selection(ds), "eps": "1/2"}), get_budget("quick"))
    assert out.holds is True and out.certified and out.detail["support"] == [0, 1]
    assert (Fraction(out.detail["norm2_relax"]) <= Fraction(out.detail["norm2_78"])
            <= Fraction(out.detail["norm2_combination"]))


def test_tied_generalized_svm_is_a_strict_restriction():
    """Transformers-as-SVMs' generalized SVM (every token of O_i separated, O_i tied: `set_rows` with its equality rows)
    is a convex restriction of (ATT-SVM'): on the paper's example it is infeasible (p_1 = -p_1 and p_1 >= 1), while
    (ATT-SVM') has the solutions +-e1 that the regularization path reaches (Theorem 8's check)."""
    from scipy.linalg import null_space

    from attnsvm.attention import model
    from attnsvm.svm.margin import MarginProblem, solve

    rows, tags, E = generalized.set_rows(model.keys(PAPER), [[0, 1]])
    assert tags == ((0, 0, 2), (0, 1, 2)) and E.shape == (1, 3)
    N = null_space(E)
    assert solve(MarginProblem(rows @ N, tags)).status == "infeasible"
    assert generalized.att_svm_prime(PAPER, [[0, 1]], convexity=False).value2 == 1
