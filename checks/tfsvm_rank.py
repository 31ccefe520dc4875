"""Transformers as SVMs, claim 5 (SPEC.md B): rank(W_mm(alpha)) <= n, decided exactly: the
KKT certificate gives W_mm in rational arithmetic and its rank is computed over Q. The rank
of the nuclear-norm solution W*_mm (cvxpy) is measured alongside, numerically: singular
values above RANK_TOL * sigma_1 (interior-point accuracy is ~1e-8 relative)."""

import numpy as np
from hypothesis import strategies as st
from sympy import QQ
from sympy.polys.matrices import DomainMatrix

from attnsvm.attention import model
from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims.strategies import gaussian_dataset, integer_datasets
from attnsvm.svm import w_svm
from attnsvm.svm.certificates import certify

RANK_TOL = 1e-5


def numerical_rank(W: np.ndarray, tol: float = RANK_TOL) -> int:
    s = np.linalg.svd(W, compute_uv=False)
    return int((s > tol * s[0]).sum()) if s[0] > 0 else 0


def exact_rank(x, d: int) -> int:
    rows = [[QQ(q.numerator, q.denominator) for q in x[r * d:(r + 1) * d]] for r in range(d)]
    return DomainMatrix(rows, (d, d), QQ).rank()


def _alpha(inst):
    return tuple(inst.params["alpha"])


def feasible(inst) -> bool:
    """(Att-SVM) for alpha is feasible (exact certificate)."""
    cert = certify(w_svm(inst.dataset, _alpha(inst)))
    return cert.verified and cert.kind == "kkt"


def rank_at_most_n(inst, budget) -> Outcome:
    ds = inst.dataset
    res = w_svm(ds, _alpha(inst))
    cert = certify(res)
    if not (cert.verified and cert.kind == "kkt"):
        return Outcome(None, detail={"status": res.status}, reason=f"no exact KKT certificate: {cert.reason}")
    r = exact_rank(cert.x, ds.d)
    detail = {"n": ds.n, "d": ds.d, "rank_W_mm": r, "n_minus_rank_W_mm": ds.n - r}
    nuc = w_svm(ds, _alpha(inst), norm="nuclear")
    detail["nuclear_status"] = nuc.status
    if nuc.ok:
        detail["rank_W_star_mm"] = numerical_rank(nuc.solution)
        detail["rank_W_mm_minus_rank_W_star_mm"] = r - detail["rank_W_star_mm"]
    return Outcome(r <= ds.n, certified=True, detail=detail)


@st.composite
def _datasets(draw):
    n = draw(st.integers(1, 3))
    return draw(integer_datasets(n=st.just(n), T=st.integers(2, 4), d=st.integers(n + 1, n + 3)))


def _instances(dropped):
    def with_alpha(ds):
        return st.lists(st.integers(0, ds.T - 1), min_size=ds.n, max_size=ds.n).map(
            lambda a: Instance(ds, {"alpha": a}))
    return _datasets().flatmap(with_alpha)


def rank_table(ns=(2, 4), T: int = 4, dims=range(2, 9), trials: int = 3, seed: int = 0) -> dict:
    """Mean numerical ranks of W_mm and W*_mm against d, alpha = opt, Gaussian data (the
    authors' SVM-rank experiment in miniature; reported, not a pass/fail check)."""
    out = {}
    for n in ns:
        for d in dims:
            rf, rn = [], []
            for k in range(trials):
                ds = gaussian_dataset(seed + 1000 * d + k, n, T, d)
                a = model.optimal_tokens(ds)
                f = w_svm(ds, a)
                if not f.ok:
                    continue
                rf.append(numerical_rank(f.solution))
                nuc = w_svm(ds, a, norm="nuclear")
                if nuc.ok:
                    rn.append(numerical_rank(nuc.solution))
            out[f"n={n}, d={d}"] = {"W_mm": float(np.mean(rf)) if rf else None,
                                    "W*_mm": float(np.mean(rn)) if rn else None, "runs": len(rf)}
    return out


claim = Claim(
    name="tfsvm-rank",
    statement="if the W-SVM for alpha is feasible, rank(W_mm(alpha)) <= n",
    hypotheses=(Hypothesis("feasible", "(Att-SVM) for alpha is feasible (exact KKT certificate)", feasible),),
    conclusion=rank_at_most_n,
    instances=_instances,
    measures=("rank_W_mm", "rank_W_star_mm", "n_minus_rank_W_mm", "rank_W_mm_minus_rank_W_star_mm"),
    proxy=f"exact: rank over Q of the certified W_mm; instances have d > n so the bound is not trivial. "
          f"W*_mm rank measured with tolerance {RANK_TOL} * sigma_1",
)
