"""Theorem 2 without Assumption B (n = 1, T = 3, unequal non-optimal scores): a locally
optimal non-optimal token can attract GD, which then converges in direction to that LMM's
p_mm instead of the GMM. n = 1 itself is shown necessary by `theorem2-tightness` (n = 2)."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "assumption_B": Search(note="n = 1, T = 3, free scores; one start aimed at r p_mm(alpha) of a non-global LMM"),
}
