"""Theorem 8 without Assumption D: the sets O_i given to (ATT-SVM') are not the optimal ones.

With the head h(x) = phi(v^T x), Assumption D holds (Lemma 14) for O_i = the top-score tokens.
The search changes one input's set (adds a lower-score token, or removes a tied top token) and
keeps every other hypothesis: the path still selects the true optimal sets, so it converges to
the (ATT-SVM') solution of THOSE sets and stays away from the one of the given sets.

Assumption A is not searched (only library losses have a stored form); neither is feasibility
of (ATT-SVM') (without it the solution set the conclusion names does not exist)."""

from attnsvm.claims.registry import Search
from attnsvm.results.checks.theorem8 import tied_instances


def change_one_set(c, sets, T):
    """One input's set with one token added or removed (neither empty nor every token)."""
    i = c.integer(0, len(sets) - 1, "index")
    t = c.integer(0, T - 1, "index")
    sets[i] = sorted(set(sets[i]) ^ {t})
    if not sets[i] or len(sets[i]) == T:
        c.reject()
    return sets


SEARCHES = {
    "assumption_D": Search(instances=lambda dropped: tied_instances(change_one_set),
                           note="one input's set changed by one token (a lower-score token added or a tied top token "
                                "removed): the path converges to the true sets' (ATT-SVM') direction instead"),
}
