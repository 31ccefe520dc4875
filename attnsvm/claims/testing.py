"""Pin verdicts in your own pytest suite: `assert_verdict(claim, "SUPPORTED")` (see also the
pytest plugin, `pytest --attnsvm-claims FILE.py`)."""

from __future__ import annotations

from attnsvm.claims.budget import Budget
from attnsvm.claims.claim import Claim
from attnsvm.claims.search import check
from attnsvm.claims.verdicts import Report


def assert_verdict(claim: Claim, *expected: str, budget: str | Budget = "quick", seed: int = 0) -> Report:
    """Check `claim` and fail with the evidence unless its verdict is one of `expected`."""
    if not expected:
        raise ValueError("give at least one expected verdict, e.g. assert_verdict(claim, 'SUPPORTED')")
    rep = check(claim, budget, seed)
    if str(rep.verdict) not in expected or rep.error is not None:
        detail = rep.error or (rep.witness["outcome"] if rep.witness else rep.evidence)
        raise AssertionError(f"{claim.name} [{claim.part}]: verdict {rep.verdict}, expected "
                             f"{' or '.join(expected)}; {detail}")
    return rep
