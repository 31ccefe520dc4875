"""Lemma 14 without linear label mixing: the sets O_i are changed by one token, so a token
outside O_i can tie with the top score (c = 0: mixing it in costs nothing) or a lower-score token
sits inside O_i. Then Assumption D fails: a p that mixes in the tied outside token has no more
risk than a p' with exponentially less non-optimal mass.

Assumption A is not searched (only library losses, all with -loss' > 0, have a stored form);
prime_feasible is what makes q -> 0 reachable at all (without it the premise of Assumption D
cannot be met by the proxy's p')."""

from attnsvm.claims.registry import Search
from attnsvm.results.checks.lemma14 import mixing_instances


def change_one_set(c, sets, T):
    """One input's set with one token added or removed (neither empty nor every token)."""
    i, t = c.integer(0, len(sets) - 1, "index"), c.integer(0, T - 1, "index")
    sets[i] = sorted(set(sets[i]) ^ {t})
    if not sets[i] or len(sets[i]) == T:
        c.reject()
    return sets


SEARCHES = {
    "label_mixing": Search(instances=lambda dropped: mixing_instances(change_one_set),
                           note="one input's set changed by one token: a tied top token left outside O_i (c = 0) "
                                "makes L(p') < L(p) fail"),
}
