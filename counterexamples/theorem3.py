"""Theorem 3 without local optimality: alpha feasible, but an SVM-neighbour scores at least as
high as the selected token (Definition 2 fails). The search draws such alphas; on every rung
of the cone ladder the gradient at some cone point pulls away from p_mm (mixing in the better
neighbour lowers the loss) and GD started in the cone leaves it or selects other tokens. This
is Figure 9's "negative score gap" case: the direction p_mm(alpha) is not a limit of GD."""

from attnsvm.claims.registry import Search
from attnsvm.results.checks.theorem3 import alpha_instances

SEARCHES = {
    "locally_optimal": Search(instances=lambda dropped: alpha_instances(locally_opt=False),
                              note="an SVM-neighbour with a higher score: GD started in the cone of "
                                   "p_mm(alpha) leaves it"),
}
