"""Transformers as SVMs, feasibility (paper B, claim 3;
docs/statements.md#tfsvm-feasibility): d >= max(T-1, n) and generic data
make (Att-SVM) feasible for every alpha. Each alpha's verdict is exact: a verified KKT
certificate of `svm.w_svm_problem` (feasible) or a verified Farkas certificate (infeasible).

"Generic" is general position, checked exactly: in each input every min(T, d+1) tokens are
affinely independent and every min(n, d) queries are linearly independent (with d >= T-1 and
d >= n this is the rank condition the derivation needs; below the threshold it rules out
degenerate witnesses such as repeated tokens). Queries are the
dataset's z when drawn, else z_i = x_i1 (self-attention)."""

import itertools

import numpy as np
import sympy as sp
from hypothesis import strategies as st

from attnsvm.attention.data import Dataset
from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.svm import w_svm
from attnsvm.svm.certificates import certify

MAX_ALPHAS = 27   # every alpha when T^n <= 27, else a seeded sample of 27


def _exact_queries(ds: Dataset) -> sp.Matrix:
    Z = ds.exact["z"] if ds.z is not None else ds.exact["X"][:, 0, :]
    return sp.Matrix(Z.tolist())


def d_ge_T_minus_1(inst) -> bool:
    return inst.dataset.d >= inst.dataset.T - 1


def d_ge_n(inst) -> bool:
    return inst.dataset.d >= inst.dataset.n


def generic(inst) -> bool:
    """General position, exactly: in each input every min(T, d+1) tokens are affinely
    independent, every min(n, d) queries are linearly independent."""
    ds = inst.dataset
    X = ds.exact["X"]
    for i in range(ds.n):
        for sub in itertools.combinations(range(ds.T), min(ds.T, ds.d + 1)):
            diffs = sp.Matrix([[X[i, t, c] - X[i, sub[0], c] for c in range(ds.d)] for t in sub[1:]])
            if diffs.rank() != len(sub) - 1:
                return False
    Z = _exact_queries(ds)
    return all(Z.extract(list(sub), list(range(ds.d))).rank() == len(sub)
               for sub in itertools.combinations(range(ds.n), min(ds.n, ds.d)))


def alphas(ds: Dataset):
    if ds.T ** ds.n <= MAX_ALPHAS:
        return list(itertools.product(range(ds.T), repeat=ds.n))
    rng = np.random.default_rng(0)
    return [tuple(int(a) for a in rng.integers(0, ds.T, ds.n)) for _ in range(MAX_ALPHAS)]


def feasible_for_every_alpha(inst, budget) -> Outcome:
    ds = inst.dataset
    checked = 0
    for alpha in alphas(ds):
        res = w_svm(ds, alpha)
        cert = certify(res)
        if not cert.verified:
            return Outcome(None, detail={"alpha": list(alpha), "status": res.status},
                           reason=f"alpha {list(alpha)}: {res.status} but certificate not verified: {cert.reason}")
        if cert.kind == "farkas":
            return Outcome(False, certified=True, detail={
                "alpha": list(alpha), "status": res.status, "farkas": [str(q) for q in cert.lam],
                "rows": [list(t) for t in res.problem.tags], "alphas_checked": checked + 1})
        checked += 1
    every = ds.T ** ds.n <= MAX_ALPHAS          # exact only when every alpha was decided, not a sample of them
    return Outcome(True, certified=every, detail={"alphas_checked": checked, "all_alphas": every})


@st.composite
def datasets(draw, dropped=frozenset()):
    """Small-integer datasets (entries in [-3, 3]) sized to meet, or to violate, the dimension
    hypotheses; half of them carry cross-attention queries z."""
    if "d_ge_T_minus_1" in dropped:
        T = draw(st.integers(3, 4))
        n = draw(st.integers(1, 2))
        d = draw(st.integers(min(n, T - 2), T - 2))
    elif "d_ge_n" in dropped:
        n = draw(st.integers(2, 3))
        T = draw(st.integers(2, 3))
        d = draw(st.integers(min(T - 1, n - 1), n - 1))
    else:
        n, T = draw(st.integers(1, 3)), draw(st.integers(2, 4))
        lo = max(T - 1, n)
        d = draw(st.integers(lo, lo + 1))
    ints = st.integers(-3, 3)
    X = np.array(draw(st.lists(ints, min_size=n * T * d, max_size=n * T * d))).reshape(n, T, d)
    Y = draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n))
    v = draw(st.lists(ints, min_size=d, max_size=d))
    z = None
    if draw(st.booleans()):
        z = np.array(draw(st.lists(ints, min_size=n * d, max_size=n * d))).reshape(n, d)
    return Dataset.from_arrays(X, Y, v, z=z, name="hypothesis-integer")


def _instances(dropped):
    return st.builds(lambda ds: Instance(ds, {}), datasets(dropped))


claim = Claim(
    name="tfsvm-feasibility",
    evaluations=250,
    statement="d >= T-1, d >= n and generic data => the W-SVM (Att-SVM) is feasible for every alpha",
    hypotheses=(
        Hypothesis("d_ge_T_minus_1", "d >= T - 1", d_ge_T_minus_1),
        Hypothesis("d_ge_n", "d >= n", d_ge_n),
        Hypothesis("generic", "general position: every min(T, d+1) tokens of an input affinely independent, "
                   "every min(n, d) queries linearly independent", generic),
    ),
    conclusion=feasible_for_every_alpha,
    instances=_instances,
    proxy=f"exact: per alpha (all of [T]^n when T^n <= {MAX_ALPHAS}, else {MAX_ALPHAS} seeded), a KKT certificate "
          "(feasible) or Farkas certificate (infeasible) in rational arithmetic",
)
