"""rates-global: each reconstructed covering hypothesis dropped in turn; the searches start the
runs on the max-margin direction of another token choice (a candidate LMM), where a non-global
limit can hold them. Feasibility of W_mm(opt) is not searched: without it W_mm does not exist."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "assumption_B": Search(note="n = 1, distinct non-optimal scores: a locally optimal non-GMM selection traps the runs"),
    "n1_or_all_support": Search(note="n = 2 with a non-support token (Appendix E's tightness geometry): an LMM traps the runs"),
}
