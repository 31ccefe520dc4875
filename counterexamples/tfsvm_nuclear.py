"""tfsvm-nuclear: dropping the (K, Q) parameterisation (training W itself) gives the Frobenius
W_mm, whose nuclear norm exceeds the optimum on data where the two differ; dropping m >= d
(m = 1) confines K Q^T to rank one, which cannot reach a rank-2 W*_mm."""

from attnsvm.claims.registry import Search
from attnsvm.results.checks.tfsvm_nuclear import kq_instances

SEARCHES = {
    "kq_parameterisation": Search(instances=lambda dropped: kq_instances(T=2, d=3, param="W", m=None),
                                  note="training W converges to the Frobenius W_mm, not a nuclear-norm solution"),
    "width_m_ge_d": Search(instances=lambda dropped: kq_instances(n=(3, 4), d=3, m=1),
                           note="m = 1: K Q^T has rank one; W*_mm of rank two is out of reach"),
}
