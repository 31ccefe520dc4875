"""Lemma 7 without local optimality: alpha feasible, but an SVM-neighbour scores STRICTLY higher than
the selected token (the negative score gap of Figure 9; ties, which also break L3, are left out).
The search draws such alphas (the pick-th non-locally-optimal feasible selection, kept when its
exact score gap is negative); on every rung some cone point breaks L2's positive correlation or
L3's comparison (the better neighbour pulls the gradient away from p_mm)."""

from attnsvm.claims.registry import Search
from attnsvm.svm import geometry
from attnsvm.results.checks.lemma7 import _instances


def _negative_gap(inst) -> bool:
    sel = geometry.select(inst.dataset, inst.params["alpha"]) if inst.params.get("alpha") is not None else None
    return sel is not None and sel.feasible and sel.certified and sel.gap is not None and sel.gap < 0


SEARCHES = {
    "locally_optimal": Search(instances=lambda dropped: _instances(dropped).filter(_negative_gap),
                              note="a feasible alpha with an SVM-neighbour of strictly higher score"),
}
