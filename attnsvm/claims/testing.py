"""Pin verdicts in your own pytest suite: `assert_verdict(claim, "SUPPORTED")`."""

from __future__ import annotations

from attnsvm.claims.engine import Budget, Claim, Report, check


def assert_verdict(claim: Claim, *expected: str, budget: str | Budget = "quick", seed: int = 0) -> Report:
    """Check `claim` and fail with the evidence unless its verdict is one of `expected`."""
    if not expected:
        raise ValueError("give at least one expected verdict, e.g. assert_verdict(claim, 'SUPPORTED')")
    rep = check(claim, budget, seed)
    if str(rep.verdict) not in expected:
        detail = rep.witness["outcome"] if rep.witness else rep.evidence
        raise AssertionError(f"{claim.name} [{claim.part}]: verdict {rep.verdict}, expected {' or '.join(expected)}; {detail}")
    return rep
