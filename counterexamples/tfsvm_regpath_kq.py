"""tfsvm-regpath-kq: dropping the (K, Q) ball (running the Frobenius path min_{||W||_F <= R} L(W) on the same
data, where W_mm and W*_mm differ) gives W_mm, whose nuclear norm exceeds the optimum: the excess settles
at ||W_mm / margin||_* / ||W*_mm||_* - 1 > 0. Strict optimality and feasibility are not searched (without
them the limit the statement names is undefined); svms_differ only makes the check discriminating."""

from attnsvm.claims.registry import Search
from attnsvm.results.checks.tfsvm_regpath_kq import kq_instances

SEARCHES = {
    "kq_parameterisation": Search(instances=lambda dropped: kq_instances(param="W", narrow=False),
                                  note="the Frobenius ball: the path goes to W_mm, not a nuclear-norm solution"),
}
