"""Transformers as SVMs, claim 2 (SPEC.md B): attention trained in (K, Q) (W = K Q^T, width
m >= d) converges in direction to the nuclear-norm max-margin W*_mm(alpha) of the tokens alpha
it selects, not to the Frobenius W_mm where the two differ.

W*_mm need not be unique (nuclear-norm problems are not strictly convex), so the measure is
not corr with cvxpy's W*_mm but the nuclear-norm optimality of the direction: W_H scaled to
margin 1 on alpha's constraints, excess = ||W_H / margin||_* / ||W*_mm||_* - 1 >= 0 (0 iff W_H's
direction is a nuclear max-margin solution). cvxpy's status must be optimal, else untrusted.
Proxy and judging as in tfsvm-frobenius (`judge`): NGD in theta = (K, Q), excess <= TOL at
the horizon; a larger excess refutes only if its extrapolated limit does too, also at 4 x H."""

from hypothesis import strategies as st

from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.claims.strategies import gaussian_datasets, instances
from checks.tfsvm_frobenius import SAT, conclude

TOL = 0.05


def converges_to_w_star(inst, budget) -> Outcome:
    return conclude(inst, budget, "nuclear", "nuclear_excess", TOL)


def kq_parameterisation(inst) -> bool:
    return inst.params["param"] == "KQ"


def width_m_ge_d(inst) -> bool:
    """m >= d (the paper's W*_mm carries rank(W) <= m; with m >= d that constraint is void)."""
    return inst.params["param"] != "KQ" or inst.params["m"] >= inst.dataset.d


def _instances(dropped):
    if "kq_parameterisation" in dropped:
        ds, param, m = gaussian_datasets(n=st.integers(2, 3), T=st.just(2), d=st.just(3)), "W", None
    elif "width_m_ge_d" in dropped:
        ds, param, m = gaussian_datasets(n=st.integers(3, 4), T=st.integers(2, 3), d=st.just(3)), "KQ", 1
    else:
        ds, param, m = gaussian_datasets(n=st.integers(1, 3), T=st.integers(2, 3), d=st.integers(2, 3)), "KQ", 3
    return instances(ds, param=st.just(param), m=st.just(m), eta=st.just(0.5), steps=st.just(300),
                     init_scale=st.just(0.1), seed=st.integers(0, 2**16), starts=st.just(1))


claim = Claim(
    name="tfsvm-nuclear",
    statement="(K, Q)-parameterised normalized GD (m >= d) converges in direction to a nuclear-norm W*_mm(alpha), "
              "alpha its selected tokens",
    hypotheses=(
        Hypothesis("kq_parameterisation", "the trained variables are K, Q with W = K Q^T", kq_parameterisation),
        Hypothesis("width_m_ge_d", "K, Q in R^{d x m} with m >= d", width_m_ge_d),
    ),
    conclusion=converges_to_w_star,
    instances=_instances,
    measures=("worst_nuclear_excess",),
    proxy=f"||W_H / margin||_* / ||W*_mm(alpha_H)||_* - 1 <= {TOL} at H = steps x horizon NGD iterations in (K, Q) "
          f"(eta 0.5, init N(0, 0.01/m)), saturated runs only (1 - max softmax < {SAT}); a larger excess refutes only "
          "if its Aitken-extrapolated limit from H/4, H/2, H also exceeds the tolerance, and again at 4 x H; "
          "cvxpy status checked",
)
