"""Lemma 5 without n = 1: two inputs under Assumption B (Appendix E's situation); along the
direction of another LMM, -grad L is more aligned with p than with p_mm at every radius (the
input whose optimal token is not selected contributes only through tiny softmax products).
Without Assumption B (one input, free integer scores): a non-optimal pair of tokens with a
lower-score token behind a higher one makes <-grad L, p_mm> small or negative while p keeps a
positive correlation."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "single_input": Search(note="n = 2 under Assumption B: a point along another LMM's direction"),
    "assumption_B": Search(note="n = 1, T = 3..4, free scores: a non-optimal token pair pulling away from p_mm"),
}
