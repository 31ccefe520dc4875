"""Lemma 1: dropping the rank-one start or the 1/||u||^2 step scaling breaks W_t = p_t u^T/||u||^2.

With the start dropped the search keeps W_0 u = p_0 and adds N (I - u u^T/||u||^2): the
witness shows the extra component persists while W_t u = p_t still holds (max_rel_gap_Wu),
so the start matters for the matrix identity, not for the induced token dynamics."""

from attnsvm.claims import lifting
from attnsvm.claims.registry import Search

SEARCHES = {
    "rank_one_start": Search(instances=lambda dropped: lifting.starts(rank_one=False),
                             note="W_0 = p_0 u^T/||u||^2 + N(I - uu^T/||u||^2): N never decays"),
    "step_scaling": Search(instances=lambda dropped: lifting.starts(scaled=False),
                           note="unscaled step: W_t u follows GD on p with step eta ||u||^2"),
}
