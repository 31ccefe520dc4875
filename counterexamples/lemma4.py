"""Lemma 4 without Assumption B: with unequal non-optimal scores the covariance
Cov_s(K p_mm, gamma) can be negative (a lower-score token with the larger logit), so p_mm
is an ascent direction at some p."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "assumption_B": Search(note="T = 3..4 with free integer scores: a low-score token outranking a better non-optimal one"),
}
