"""Lemma 2: each hypothesis dropped in turn; the search then looks among integer datasets
violating it for an infeasible (ATT-SVM), shown by an exact Farkas certificate. Mixed labels
need their own space (the claim's draws one common sign); the others are searched in the
claim's own."""

from attnsvm.claims.registry import Search
from attnsvm.claims.strategies import instances, integer_datasets

SEARCHES = {
    "common_label": Search(instances=lambda dropped: instances(integer_datasets(n=(1, 3), T=(2, 4), d=(1, 3),
                                                                                labels="any", W="integer")),
                           note="mixed labels: the same tokens must be separated both ways"),
    "strict_optimality": Search(note="a tied optimal token with the same key cannot be separated"),
    "v_in_range_W": Search(note="v outside range(W): W p cannot reproduce the score order"),
}
