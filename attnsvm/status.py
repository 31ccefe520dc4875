"""Status constants, in families (CVXPY's `settings.py` style), and the one map from any
status to what it means for a verdict.

Every numeric answer attnsvm computes carries a status: an SVM solve, a run of the dynamics, a
regularization-path solve, an LMM decision. Each status belongs to one family:

- TRUSTED: the answer means what it says (a check may decide on it);
- UNTRUSTED: an answer exists but the numerics cannot vouch for it (the instance is undecided,
  with the status as its reason);
- FAILED: no answer (the instance is undecided; a solver error is reported as such).

`meaning(status)` gives the family; `undecided_reason(statuses)` the reason an instance is
undecided (empty when every status is trusted).
"""

from __future__ import annotations

from collections.abc import Iterable

# SVM solves (attnsvm.svm.margin.SVMResult.status)
OPTIMAL = "optimal"
INFEASIBLE = "infeasible"               # proved by a Farkas certificate where `certified`
SOLVER_ERROR = "error"
# exact decisions of a selection (attnsvm.svm.geometry.Selection.decision)
EXACT = "exact"
NUMERIC = "numeric"                     # a robust numeric screen (sampled searches only)
UNCERTAIN = "uncertain"
# runs of the dynamics (attnsvm.dynamics.Trajectory.status)
OK = "ok"
STATIONARY = "stationary"               # p stopped moving at a gradient above float64's range
STALLED = "stalled"                     # fixed-step GD whose step underflowed
NON_FINITE = "non-finite"
# regularization-path solves (attnsvm.dynamics.regpath)
CONVERGED = "converged"
RESOLUTION = "resolution"               # stationary to float64's resolution of the risk
UNDERFLOW = "underflow"                 # a gradient left float64's range: trial points incomparable
NOT_CONVERGED = "not converged"

TRUSTED = frozenset({OPTIMAL, INFEASIBLE, EXACT, OK, STATIONARY, CONVERGED, RESOLUTION})
UNTRUSTED = frozenset({NUMERIC, UNCERTAIN, STALLED, UNDERFLOW, NOT_CONVERGED})
FAILED = frozenset({SOLVER_ERROR, NON_FINITE})
FAMILIES = {"trusted": TRUSTED, "untrusted": UNTRUSTED, "failed": FAILED}


def meaning(status: str) -> str:
    """'trusted', 'untrusted' or 'failed'; an unknown status is 'failed' (fail closed)."""
    for family, members in FAMILIES.items():
        if status in members:
            return family
    return "failed"


def undecided_reason(statuses: Iterable[str], what: str = "") -> str:
    """Why an instance with these statuses is undecided ('' when all are trusted)."""
    bad = sorted({s for s in statuses if meaning(s) != "trusted"})
    return f"{what + ' ' if what else ''}status {', '.join(bad)}: {meaning(bad[0])}" if bad else ""
