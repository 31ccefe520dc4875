"""Lemma 12 without its premise: a point where some s_{i,alpha_i} <= 1/2 (the path has not yet
selected alpha) can have a token out-scoring alpha_i, outside the quadrant (77)."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "selects_alpha": Search(note="s_{i,alpha_i}(p) <= 1/2: another token's logit may be larger"),
}
