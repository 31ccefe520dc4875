"""Theorem 6: the rate at which r and R grow together matters (our finding).

Along the ray r = kappa R the risk of a non-support input i carries the label-margin buffer
e^{-kappa R (m_i - 1)/||v_mm||} (m_i = Y_i v_mm^T x_{i,alpha_i} > 1), while the support
inputs' attention terms decay like e^{-R/||p_relax||}. Only when every buffer beats the
attention deficit (kappa > kappa*, see the hypothesis joint.r_dominates_R) do the non-support
inputs drop out and p tend to p_relax; for kappa < kappa* the non-support constraint still
binds and p tends to the solution of the SHIFTED max-margin problem
max_u min_{i,t} [(k_{i,alpha_i} - k_it)^T u + kappa (m_i - 1)/||v_mm||] instead. The paper states
the limit without a rate; its proof (Appendix C.2) needs r large against R. The search sets
kappa = kappa*/2 on Figure-3-like data; e.g. tokens (1, 1/2), (1, 0) [label -1], (1/2, 1/2) with
the zero token shared: kappa* = sqrt(17) ~ 4.12, and at r = R p tends to (0.83, 0.56), not
p_relax = (1, 0) (at kappa = 5 the same data converge to p_relax).

Assumption C over S is not searched: on Figure-3-like and small integer data we found no
instance where dropping it breaks the conclusion while the path still selects alpha (the
instances that violate it mostly fail the premise "the path selects alpha")."""

from fractions import Fraction

from attnsvm.claims.joint import joint_instances
from attnsvm.claims.registry import Search
from attnsvm.results.checks.theorem6 import datasets
from attnsvm.svm import joint


def kappa_below(c, ds, alpha) -> str:
    """Half of kappa* (when kappa* > 0), to violate r_dominates_R."""
    ok = alpha is not None and joint.att_svm(ds, alpha)[0].ok and joint.relaxed_target(ds, alpha)[0].ok
    ks = joint.kappa_star(ds, alpha) if ok else 0.0
    return str(Fraction(ks / 2).limit_denominator(64)) if ks > 0 else "1"


SEARCHES = {
    "r_dominates_R": Search(instances=lambda dropped: joint_instances(datasets(), kappa_below, "kappa*/2"),
                            note="r = kappa R with kappa < kappa*: the non-support input still binds, "
                                 "p misses p_relax"),
}
