"""Appendix E: the claim itself (n = 2, T = 2) is expected to be REFUTED by its own search;
no hypothesis is dropped. The hand instance (docs/statements.md#theorem2-tightness) is stored as
witnesses/theorem2-tightness--hand.json (replayed by tests/test_descent_convergence.py);
the necessity of Assumption B at n = 1 is theorem2's `assumption_B` witness."""

SEARCHES: dict = {}
