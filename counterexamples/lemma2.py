"""Lemma 2: each hypothesis dropped in turn; the claim's integer strategy then searches
datasets violating it for an infeasible (ATT-SVM), shown by an exact Farkas certificate."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "common_label": Search(note="mixed labels: the same tokens must be separated both ways"),
    "strict_optimality": Search(note="a tied optimal token with the same key cannot be separated"),
    "v_in_range_W": Search(note="v outside range(W): W p cannot reproduce the score order"),
}
