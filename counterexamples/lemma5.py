"""Lemma 5 without n = 1: two inputs under Assumption B (Appendix E's situation); along the
direction of another LMM, -grad L is more aligned with p than with p_mm at every radius (the
input whose optimal token is not selected contributes only through tiny softmax products).
Without Assumption B (one input, free integer scores): a non-optimal pair of tokens with a
lower-score token behind a higher one makes <-grad L, p_mm> small or negative while p keeps a
positive correlation."""

from attnsvm.attention.losses import LOSSES
from attnsvm.claims.registry import Search
from attnsvm.claims.strategies import instances, just, keyed_datasets, sampled_from, seeds


def _space(n, T, scores):
    return instances(keyed_datasets(n=n, T=T, dk=2, scores=scores, labels="positive"),
                     loss=sampled_from(sorted(LOSSES)), seed=seeds(), points=just(16))


SEARCHES = {
    "single_input": Search(instances=lambda dropped: _space((1, 2), (2, 4), "B"),
                           note="n = 2 under Assumption B: a point along another LMM's direction"),
    "assumption_B": Search(instances=lambda dropped: _space(1, (3, 4), "any"),
                           note="n = 1, T = 3..4, free scores: a non-optimal token pair pulling away from p_mm"),
}
