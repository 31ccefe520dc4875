"""Transformers as SVMs, claim 2 (paper B;
docs/statements.md#tfsvm-nuclear): attention trained in (K, Q) (W = K Q^T, width
m >= d) converges in direction to the nuclear-norm max-margin W*_mm(alpha) of the tokens alpha
it selects, not to the Frobenius W_mm where the two differ.

W*_mm need not be unique (nuclear-norm problems are not strictly convex), so the measure is
not corr with cvxpy's W*_mm but the nuclear-norm optimality of the direction: W_H scaled to
margin 1 on alpha's constraints, excess = ||W_H / margin||_* / ||W*_mm||_* - 1 >= 0 (0 iff W_H's
direction is a nuclear max-margin solution). cvxpy's status must be optimal, else untrusted.
Proxy and judging as in tfsvm-frobenius (`judge`): NGD in theta = (K, Q), excess <= TOL at
the horizon; a larger excess refutes only if its extrapolated limit does too, also at 4 x H."""

import numpy as np

from attnsvm.attention import model
from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.claims.strategies import gaussian_datasets, instances, just, seeds
from attnsvm.svm import w_svm
from attnsvm.results.checks.tfsvm_frobenius import SAT, conclude

TOL = 0.05
DISCRIMINATES = 2 * TOL


def frobenius_excess(ds) -> float | None:
    """||W_mm||_* / ||W*_mm||_* - 1 at the optimal tokens: how far the Frobenius solution is from
    nuclear-norm optimal (W_mm has margin 1). None when either SVM is infeasible or unsolved."""
    opt = model.optimal_tokens(ds)
    fro, nuc = w_svm(ds, opt, "fro"), w_svm(ds, opt, "nuclear")
    if not (fro.ok and nuc.ok):
        return None
    return float(np.linalg.norm(fro.solution, "nuc") / np.linalg.norm(nuc.solution, "nuc") - 1)


def discriminating(inst) -> bool:
    """W_mm and W*_mm differ at the optimal tokens: W_mm's nuclear excess is above 2 x TOL, so a
    run converging to the Frobenius direction fails the check (n = 1 instances, where the two
    coincide, are not counted)."""
    e = inst.dataset.memo("frobenius_nuclear_excess", lambda: frobenius_excess(inst.dataset))
    return e is not None and e > DISCRIMINATES


def converges_to_w_star(inst, budget) -> Outcome:
    return conclude(inst, budget, "nuclear", "nuclear_excess", TOL)


def kq_parameterisation(inst) -> bool:
    return inst.params["param"] == "KQ"


def width_m_ge_d(inst) -> bool:
    """m >= d (the paper's W*_mm carries rank(W) <= m; with m >= d that constraint is void)."""
    return inst.params["param"] != "KQ" or inst.params["m"] >= inst.dataset.d


def _instances(dropped):
    if "kq_parameterisation" in dropped:
        ds, param, m = gaussian_datasets(n=(2, 3), T=2, d=3), "W", None
    elif "width_m_ge_d" in dropped:
        ds, param, m = gaussian_datasets(n=(3, 4), T=(2, 3), d=3), "KQ", 1
    else:
        ds, param, m = gaussian_datasets(n=(2, 3), T=(2, 3), d=(2, 3)), "KQ", 3
    return instances(ds, param=just(param), m=just(m), eta=just(0.5), steps=just(300),
                     init_scale=just(0.1), seed=seeds(), starts=just(1))


claim = Claim(
    name="tfsvm-nuclear",
    evaluations=22,
    statement="(K, Q)-parameterised normalized GD (m >= d) converges in direction to a nuclear-norm W*_mm(alpha), "
              "alpha its selected tokens",
    hypotheses=(
        Hypothesis("kq_parameterisation", "the trained variables are K, Q with W = K Q^T", kq_parameterisation),
        Hypothesis("width_m_ge_d", "K, Q in R^{d x m} with m >= d", width_m_ge_d),
        Hypothesis("discriminating", f"||W_mm||_*/||W*_mm||_* - 1 > {DISCRIMINATES} at the optimal tokens "
                                     "(the Frobenius direction would fail)", discriminating),
    ),
    conclusion=converges_to_w_star,
    instances=_instances,
    measures=("worst_nuclear_excess",),
    proxy=f"||W_H / margin||_* / ||W*_mm(alpha_H)||_* - 1 <= {TOL} at H = steps x horizon NGD iterations in (K, Q) "
          f"(eta 0.5, init N(0, 0.01/m)), saturated runs only (1 - max softmax < {SAT}); a larger excess refutes only "
          "if its Aitken-extrapolated limit from H/4, H/2, H also exceeds the tolerance, and again at 4 x H; "
          "cvxpy status checked",
)
