"""The SVM layer's answers are exact and scale-free: LMM sets decided by certificates (a constraint
1e-12 from active stays inactive), the same sets and p_mm / c at any scale c that float64 holds
(or a one-line refusal), JSON without inf/nan, sampled or cut-short searches that say so."""

import json
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnsvm.attention.data import Dataset
from attnsvm.claims.strategies import gaussian_dataset, integer_datasets
from attnsvm.errors import UserError
from attnsvm.interfaces import cli
from attnsvm.interfaces.analysis import analyze_dataset
from attnsvm.svm import geometry, margin
from attnsvm.svm.certificates import certify

TIGHT_X = [[[1, 0], [0, 0]], [[0, 0], [2, 1]]]
EPS = Fraction(1, 10**12)
# Input 2's non-selected row of alpha = (0, 1) is (1 + 1e-12, 1): its value at p_mm = (1, 0) is
# 1 + 1e-12, inactive; a numeric active set (tolerance 1e-9) calls it active, with a negative gap.
NEAR = {"name": "near-active", "X": [[[1, 0], [0, 0]], [[0, 0], ["1000000000001/1000000000000", 1]]],
        "Y": [1, 1], "v": [1, -3]}


def scaled(X, c: Fraction, v=(1, -3), name="scaled") -> Dataset:
    return Dataset.from_arrays([[[str(Fraction(x) * c) for x in tok] for tok in inp] for inp in X], [1] * len(X),
                               list(v), name=name)


def strict_json(obj) -> dict:
    """Round trip through strict JSON (inf / nan raise)."""
    return json.loads(json.dumps(obj, allow_nan=False, default=str))


def test_float_active_set_misreads_a_constraint_1e12_from_active():
    """The numeric path alone is wrong on NEAR: at tolerance 1e-9 it calls row 1 (value 1 + 1e-12)
    active and alpha = (0, 1) not locally optimal; it flags the decision as uncertain, so the
    exact path must decide it (next test)."""
    ds = Dataset._from_raw(NEAR, "near-active")
    numeric = geometry.select(ds, (0, 1), exact=False)
    exact = geometry.select(ds, (0, 1))
    assert exact.locally_optimal and exact.decision == "exact"          # the truth (next test: why)
    assert 1 in numeric.result.active and not numeric.locally_optimal   # the float reading disagrees with it ...
    assert numeric.decision == "uncertain"                              # ... and says it is not robust: never screened


def test_constraint_1e12_from_active_keeps_both_lmms_exactly():
    ds = Dataset._from_raw(NEAR, "near-active")
    exact = geometry.select(ds, (0, 1))                                 # the certificate: row 1 inactive, an LMM
    assert exact.locally_optimal and exact.neighbors == ((1,), ()) and exact.decision == "exact"
    res = strict_json(analyze_dataset(ds))
    lmms = {tuple(s["alpha"]): s for s in res["lmms"]}
    assert set(lmms) == {(0, 0), (0, 1)} and res["lmm_set_exact"] and res["search"]["decided_exactly"] == 4
    assert lmms[(0, 1)]["neighbors"] == [[1], []] and lmms[(0, 1)]["decision"] == "exact"
    assert lmms[(0, 1)]["p_mm_exact"] == ["1", "0"] and lmms[(0, 0)]["p_mm_exact"] == ["1", str(-2 - EPS)]
    cert = certify(margin.att_svm(ds, (0, 1)))
    vals = cert.x[0] * (1 + EPS) + cert.x[1]                            # row (1 + eps, 1) at p_mm
    assert cert.verified and vals == 1 + EPS and cert.active == (0,)
    # a screened search must not drop it either: the candidate is not robust, so it is certified
    assert {s.alpha for s in geometry.search(ds, screen=True).lmms} == {(0, 0), (0, 1)}


def test_analyze_cli_finds_both_lmms_of_the_near_active_dataset(monkeypatch, capsys, tmp_path):
    p = tmp_path / "near.json"
    p.write_text(json.dumps(NEAR))
    monkeypatch.setattr(sys, "argv", ["attnsvm", "analyze", str(p), "--json", str(tmp_path / "a.json")])
    with pytest.raises(SystemExit) as e:
        cli.main()
    out = capsys.readouterr().out
    res = json.loads((tmp_path / "a.json").read_text(), parse_constant=lambda c: pytest.fail(f"non-strict JSON {c}"))
    assert e.value.code == 0 and "LMM set exact" in out
    assert {tuple(s["alpha"]) for s in res["lmms"]} == {(0, 0), (0, 1)} and res["lmm_set_exact"]


@given(st.integers(-300, 300))
def test_tightness_example_is_scale_covariant(k):
    """Keys scaled by c = 10^k: the same LMM set, exact p_mm divided by c, floats to rounding."""
    c = Fraction(10) ** k
    res = strict_json(analyze_dataset(scaled(TIGHT_X, c)))
    lmms = {tuple(s["alpha"]): s for s in res["lmms"]}
    assert set(lmms) == {(0, 0), (0, 1)} and res["lmm_set_exact"] and lmms[(0, 0)]["is_gmm"]
    for alpha, p in (((0, 0), (1, -3)), ((0, 1), (1, 0))):
        assert [Fraction(q) for q in lmms[alpha]["p_mm_exact"]] == [Fraction(x) / c for x in p]
        assert np.allclose(np.array(lmms[alpha]["p_mm"]) * float(c), p, rtol=1e-12, atol=0)
        assert lmms[alpha]["neighbors"] == ([[1], [1]] if alpha == (0, 0) else [[1], []])


@given(integer_datasets(n=(1, 2), T=(2, 3), d=(1, 3), W="integer").strategy(), st.integers(-250, 250),
       st.integers(-30, 30))
def test_lmm_sets_do_not_change_with_scale(ds, k, j):
    """Any small integer dataset, X scaled by 10^k 2^j: identical decisions, exact p_mm / c."""
    c = Fraction(10) ** k * Fraction(2) ** j
    big = ds.with_(X=np.vectorize(lambda q: q * c, otypes=[object])(ds.exact["X"]))
    base, other = geometry.search(ds), geometry.search(big)
    assert base.exact and other.exact
    assert [(s.alpha, s.feasible, s.locally_optimal, s.neighbors) for s in base.selections] == \
           [(s.alpha, s.feasible, s.locally_optimal, s.neighbors) for s in other.selections]
    for s, t in zip(base.selections, other.selections):
        if s.feasible:
            assert t.certificate.x == tuple(q / c for q in s.certificate.x)


def test_unrepresentable_scale_is_refused_in_one_line(monkeypatch, capsys, tmp_path):
    ds = scaled(TIGHT_X, Fraction(1, 10**320))                 # p_mm ~ 1e320 is beyond float64
    with pytest.raises(UserError, match="not representable"):
        analyze_dataset(ds)
    p = tmp_path / "tiny.json"
    p.write_text(json.dumps(ds.to_json()))
    monkeypatch.setattr(sys, "argv", ["attnsvm", "analyze", str(p)])
    with pytest.raises(SystemExit) as e:
        cli.main()
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and "not representable" in err


def test_keys_near_float_max_give_strict_json_and_the_right_lmms():
    ds = Dataset.from_arrays([[[1e308, 0], [0, 0]], [[0, 0], [1e308, 5e307]]], [1, 1], [1, -3])
    res = strict_json(analyze_dataset(ds))
    # alpha = (0, 1): p_mm = (1e-308, 0) makes input 2's row (1e308, 5e307) active with gap -5e307 < 0
    assert [s["alpha"] for s in res["lmms"]] == [[0, 0]] and res["lmm_set_exact"]
    g = res["gmm"]
    assert g["certified"]
    assert [Fraction(q) for q in g["p_mm_exact"]] == [Fraction(1) / Fraction(1e308), Fraction(-4) / Fraction(1e308)]


def test_gaps_are_exact_and_json_safe_and_infeasible_is_null_with_its_reason():
    s = geometry.select(Dataset.from_arrays([[[1, 0], [0, 0], [-1, 5]]], [1], [1, 0]), (0,))
    assert s.neighbors == ((1,),) and s.gap == 1 and strict_json(s.to_json())["score_gap_exact"] == "1"
    clash = Dataset.from_arrays([[[1], [0]], [[0], [1]]], [1, 1], [1])           # alpha = (0, 0): p >= 1, -p >= 1
    bad = geometry.select(clash, (0, 0))
    out = strict_json(bad.to_json())
    assert bad.certificate.kind == "farkas" and bad.decision == "exact" and not bad.locally_optimal
    assert out["score_gap"] is None and out["score_gap_exact"] == "none: infeasible"


def test_sampled_and_time_bounded_searches_say_so():
    ds = gaussian_dataset(3, 3, 3, 2)
    s = geometry.search(ds, limit=5)
    assert s.sampled and not s.exact and len(s.selections) == 5 and "sampled 5 of 3^3" in s.summary()
    assert s.summary().startswith("LMM set NOT exact")
    cut = geometry.search(ds, limit=10_000, seconds=0.0)
    assert not cut.exact and cut.stopped.startswith("time limit") and "covered" in cut.summary()
    full = geometry.search(ds, limit=10_000)
    assert full.exhaustive and full.exact == (full.count("exact") == 27)


@given(integer_datasets(n=(1, 3), T=(2, 3), d=(1, 3)).strategy())
def test_numeric_screen_only_drops_non_lmms_and_is_counted(ds):
    exact = geometry.search(ds, screen=False)
    screened = geometry.search(ds, screen=True)
    assert exact.exact or exact.count("uncertain")
    assert {s.alpha for s in exact.lmms} == {s.alpha for s in screened.lmms}
    assert all(not s.locally_optimal for s in screened.selections if s.decision == "numeric")
    assert screened.exact == (screened.count("numeric") == 0 and exact.exact)


def test_high_dimension_solves_in_the_row_span_and_certifies():
    ds = gaussian_dataset(5, 1, 3, 3000)                      # m = 2 rows, d = 3000
    g = geometry.gmm(ds)
    assert g.certified and g.decision == "exact"
    x = np.array([float(q) for q in g.certificate.x])
    assert np.allclose(g.p_mm, x, rtol=1e-9, atol=1e-12 * np.abs(x).max())
    K = ds.X[0]
    rows = K[g.alpha[0]] - np.delete(K, g.alpha[0], axis=0)
    assert np.allclose(x, rows.T @ np.linalg.lstsq(rows.T, x, rcond=None)[0])   # p_mm in the rows' span


# ---- scales float64 cannot hold together: the exact solve (issue 22)

@given(integer_datasets(n=(1, 3), T=(2, 3), d=(1, 3)), st.data())
def test_exact_solve_gives_the_certified_float_answer(ds, data):
    """Where the float solve certifies, the exact active-set solve finds the same optimum (or the
    same infeasibility) and the same active rows."""
    from attnsvm.svm.exact import solve_exact

    alpha = data.draw(st.lists(st.integers(0, ds.T - 1), min_size=ds.n, max_size=ds.n))
    res = margin.att_svm(ds, alpha)
    cert = certify(res)
    exact, exact_cert = solve_exact(res.problem)
    assert cert.verified and exact_cert.verified and exact_cert.kind == cert.kind
    if cert.kind == "kkt":
        assert exact_cert.x == cert.x and exact_cert.active == cert.active and exact.status == "optimal"


@pytest.mark.parametrize("entry", [Fraction(10) ** 200, Fraction(10) ** -150, Fraction(1, 7 ** 4000)])
def test_one_entry_far_from_the_others_scale_is_decided_exactly(entry):
    """Appendix E's tightness data with one key entry scaled far away: every selection decided by
    a certificate, the GMM feasible (its p_mm's entries ~1/entry and ~1), never 'infeasible'."""
    X = [[[str(Fraction(1) if entry < 1 else entry), str(entry) if entry < 1 else "0"], [0, 0]], [[0, 0], [2, 1]]]
    ds = Dataset.from_arrays(X, [1, 1], [1, -3], name="mixed")
    found = geometry.search(ds)
    g = geometry.gmm(ds)
    assert found.exact and g.feasible and g.certified and g.decision == "exact"
    assert strict_json(g.to_json())["status"] == "optimal"


def test_an_undecided_selection_is_never_reported_infeasible(monkeypatch):
    """With the exact solve out of reach (limit 0 rows) a selection whose float certificate fails
    is undecided in JSON: feasible null, status 'undecided', with the reason."""
    from attnsvm.svm import exact

    monkeypatch.setattr(exact, "EXACT_ENTRIES", 0)
    X = [[["1e200", 0], [0, 0]], [[0, 0], [2, 1]]]
    ds = Dataset.from_arrays(X, [1, 1], [1, -3], name="mixed")
    out = strict_json(geometry.gmm(ds).to_json())
    assert out["feasible"] is None and out["status"] == "undecided" and "out of reach" in out["undecided_because"]
