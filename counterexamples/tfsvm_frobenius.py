"""tfsvm-frobenius: with the W-parameterisation dropped the same measurement runs W = K Q^T
(m = 3 >= d): its limit is the nuclear-norm solution W*_mm, which differs from W_mm on data
with n >= 2 distinct queries, so 1 - corr with W_mm stays large."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "w_parameterisation": Search(note="(K, Q) training converges to W*_mm (nuclear), not W_mm, where they differ"),
}
