"""Lemma 4 without Assumption B: with unequal non-optimal scores the covariance
Cov_s(K p_mm, gamma) can be negative (a lower-score token with the larger logit), so p_mm
is an ascent direction at some p."""

from attnsvm.attention.losses import LOSSES
from attnsvm.claims.registry import Search
from attnsvm.claims.strategies import instances, just, keyed_datasets, sampled_from, seeds

SEARCHES = {
    "assumption_B": Search(
        instances=lambda dropped: instances(keyed_datasets(n=(1, 3), T=(3, 4), dk=(1, 3), scores="any"),
                                            loss=sampled_from(sorted(LOSSES)), seed=seeds(), points=just(48)),
        note="T = 3..4 with free integer scores: a low-score token outranking a better non-optimal one"),
}
