"""Proof outlines (attnsvm.claims.outline, lemmas/<id>.py): a verdict follows its steps' statuses (PROVED
only when every step is machine-checked at general sizes), every machine-checked step of every
result verifies, a failing or crashing step refutes, and the symbolic-size sums the outlines
use agree with explicit sums."""

import re

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from attnsvm.claims import registry
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.symbolic import T, o, t, total

IDS = [e.id for e in registry.ENTRIES]
PAPER_IDS = re.compile(r"^(lemma([1-9]|1[0-4])|theorem[1-8]|definition[1-3]|assumption-[A-D])$")


@pytest.mark.parametrize("id", IDS)
def test_outline_verdict_follows_its_steps(id, outline_report):
    rep = outline_report(id)
    assert rep.error is None and rep.as_expected, (rep.verdict, rep.evidence.get("summary"))
    steps = rep.evidence["steps"]
    checked = [s for s in steps if s["status"] == "exact" or (s["status"] == "symbolic" and s["sizes"] == "general")]
    assert all(s["verified"] for s in steps if "verified" in s), [s for s in steps if not s.get("verified", True)]
    assert all("verified" in s for s in steps if s["status"] in ("symbolic", "exact"))
    assert all(s.get("reference") for s in steps if s["status"] in ("cited", "numeric"))
    assert all(PAPER_IDS.match(b) or b in IDS for s in steps for b in s.get("by", ())), "unknown id in a step's `by`"
    assert (str(rep.verdict) == "PROVED") == (len(checked) == len(steps))
    if str(rep.verdict) == "PARTIAL":
        assert rep.evidence["summary"].startswith(f"{len(checked)} of {len(steps)} steps machine-checked")


def test_proved_outline_is_machine_checked_at_general_sizes(outline_report):
    rep = outline_report("lemma1")
    assert str(rep.verdict) == "PROVED"
    assert [s["status"] for s in rep.evidence["steps"]] == ["symbolic"] * 3
    assert all(s["sizes"] == "general" and s["verified"] for s in rep.evidence["steps"])


def test_partial_summary_names_what_is_not_machine_checked(outline_report):
    rep = outline_report("theorem2")
    summary = rep.evidence["summary"]
    assert str(rep.verdict) == "PARTIAL"
    assert summary.startswith("3 of 7 steps machine-checked") and "cited: step 1, 2, 3, 5" in summary
    assert "Lemma 5" in summary and "numeric" not in summary
    rep = outline_report("theorem3")
    assert "numeric: step 1, 2, 4" in rep.evidence["summary"] and "checks/theorem3.py" in rep.evidence["summary"]


def test_a_failing_symbolic_step_refutes():
    """Lemma 1's identity with the wrong scaling 2 u^T leaves a nonzero residual: REFUTED, the step named."""
    from attnsvm.claims.symbolic import residuals
    from attnsvm.results.lemmas.lemma1 import residual

    wrong = Outline("grad L_W = grad L_p(W u) (2u)^T", (
        Step("an identity that holds", "symbolic", lambda: residuals(zero=sp.Integer(0))),
        Step("the wrong scaling", "symbolic", lambda: residuals(residual=residual(2, 2, factor=2))),
    ))
    rep = wrong.check("wrong", ("PROVED",))
    assert str(rep.verdict) == "REFUTED" and not rep.as_expected
    assert [s["verified"] for s in rep.evidence["steps"]] == [True, False]
    assert rep.evidence["steps"][1]["detail"]["residual"] != "0" and "[2]" in rep.evidence["summary"]


def test_a_crashing_step_refutes_and_records_the_error():
    rep = Outline("s", (Step("divides by zero", "exact", lambda: {"ok": 1 / 0}),)).check("crash", ("REFUTED",))
    assert str(rep.verdict) == "REFUTED" and rep.error["type"] == "ZeroDivisionError" and not rep.as_expected


def test_fixed_sizes_cited_numeric_open_steps_make_it_partial():
    ok = lambda: {"ok": True}
    rep = Outline("s", (Step("checked for T = 2..5 only", "symbolic", ok, sizes="T = 2..5"),
                        Step("a general identity", "symbolic", ok),
                        Step("a known theorem", "cited", reference="Soudry et al. 2018"),
                        Step("supported by a check", "numeric", reference="checks/x.py"),
                        Step("not established", "open"))).check("s")
    assert str(rep.verdict) == "PARTIAL"
    assert rep.evidence["summary"] == ("1 of 5 steps machine-checked; fixed sizes: step 1 (1: T = 2..5); numeric: step "
                                       "4 (4: checks/x.py); cited: step 3 (3: Soudry et al. 2018); "
                                       "open: step 5 (5: open)")


def test_a_step_states_how_it_is_known():
    with pytest.raises(ValueError, match="needs a verify"):
        Step("an identity", "symbolic")
    with pytest.raises(ValueError, match="reference"):
        Step("a theorem", "cited")
    with pytest.raises(ValueError, match="not one of"):
        Step("a guess", "plausible")


@given(n=st.integers(1, 5), opt=st.integers(1, 5), coef=st.integers(-3, 3), es=st.integers(0, 2),
       ea=st.integers(0, 2), delta=st.booleans(), outer=st.booleans())
def test_symbolic_sums_agree_with_explicit_sums(n, opt, coef, es, ea, delta, outer):
    """total(expr) for a symbolic T, evaluated at T = n, is the explicit sum over t = 1..n (o <= n)."""
    opt = min(opt, n)
    s, a = sp.IndexedBase("s"), sp.IndexedBase("a")
    expr = coef * s[t] ** es * a[t] ** ea * (sp.KroneckerDelta(t, o) if delta else 1) * (a[o] if outer else 1) + s[t]
    symbolic = total(expr).subs({T: n, o: opt}).doit()
    explicit = sum(expr.subs({o: opt}).subs(t, i) for i in range(1, n + 1))
    assert sp.expand(symbolic - explicit) == 0


def test_assumption_A_strictly_decreasing_is_not_enough():
    """loss(x) = (1 - x)^3 is strictly decreasing with a Lipschitz, bounded derivative on bounded intervals
    (Assumption A as stated), yet loss'(1) = 0: on one input with k_opt - k_other = e_1 (p_mm = e_1) and scores
    (2, 0), the margin at p = 0 is 1, so grad L(0) = 0 exactly: <grad L(0), p_mm> = 0 (Lemma 4 needs < 0) and GD
    from p_0 = 0 never moves (Theorem 2(a) fails). Lemma 4's outline reads A as loss' < 0."""
    x, p1, p2 = sp.symbols("x p1 p2", real=True)
    loss = (1 - x) ** 3
    assert sp.solve(sp.diff(loss, x), x) == [1] and sp.simplify(sp.diff(loss, x) + 3 * (1 - x) ** 2) == 0
    K, gamma = sp.Matrix([[1, 0], [0, 0]]), sp.Matrix([2, 0])
    logits = K * sp.Matrix([p1, p2])
    s = [sp.exp(a) / sum(sp.exp(b) for b in logits) for a in logits]
    L = loss.subs(x, sum(si * gi for si, gi in zip(s, gamma)))
    grad = [sp.simplify(sp.diff(L, v).subs({p1: 0, p2: 0})) for v in (p1, p2)]
    assert grad == [0, 0]
