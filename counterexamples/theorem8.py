"""Theorem 8 without Assumption D: the sets O_i given to (ATT-SVM') are not the optimal ones.

With the head h(x) = phi(v^T x), Assumption D holds (Lemma 14) for O_i = the top-score tokens.
The search changes one input's set (adds a lower-score token, or removes a tied top token) and
keeps every other hypothesis: the path still selects the true optimal sets, so it converges to
the (ATT-SVM') solution of THOSE sets and stays away from the one of the given sets.

Assumption A is not searched (only library losses have a stored form); neither is feasibility
of (ATT-SVM') (without it the solution set the conclusion names does not exist)."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "assumption_D": Search(note="one input's set changed by one token (a lower-score token added or a tied top token "
                                "removed): the path converges to the true sets' (ATT-SVM') direction instead"),
}
