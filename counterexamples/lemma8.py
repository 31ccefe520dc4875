"""Lemma 8's hypotheses, each dropped: q not neighbour-optimal (the lemma's second statement: a
better-scoring neighbour takes q's risk below the baseline and below p's); the margin order
strictly reversed (q's excess over the baseline then decays faster); two different unique
selections (p's limit risk is larger). The reversed-order and different-selection searches
keep only strict cases (equal margins, e.g. p = q, or a tied selection are left out).
p's neighbour-optimality has no search: dropping it only helps p (its risk then approaches the
baseline from below, or from above more slowly than q's); tests pin that the check still holds
without it."""

from attnsvm.claims import rays
from attnsvm.claims.registry import Search
from attnsvm.claims.strategies import integer_datasets
from attnsvm.svm.directional import direction_of, unit_margin_order


def _space():
    return rays.directions(integer_datasets(n=(1, 2), T=(2, 3), d=2), losses=True, pair=True)


def _reversed(inst) -> bool:
    return unit_margin_order(inst.dataset, inst.params["p"], inst.params["q"]) < 0


def _different_unique(inst) -> bool:
    Dp, Dq = direction_of(inst.dataset, inst.params["p"]), direction_of(inst.dataset, inst.params["q"])
    return Dp.unique and Dq.unique and Dp.alpha != Dq.alpha


SEARCHES = {
    "same_selection": Search(instances=lambda dropped: _space().filter(_different_unique),
                             note="two different unique selections: p's limit risk is larger"),
    "margin_order": Search(instances=lambda dropped: _space().filter(_reversed),
                           note="Gamma(p) < Gamma(q) strictly, both neighbour-optimal: q wins"),
    "q_neighbor_optimal": Search(instances=lambda dropped: _space(),
                                 note="q with a better-scoring directional neighbour beats p along rays"),
}
