"""Lemma 7 without local optimality: alpha feasible, but an SVM-neighbour scores STRICTLY higher than
the selected token (the negative score gap of Figure 9; ties, which also break L3, are left out).
The search draws such alphas (the pick-th non-locally-optimal feasible selection, kept when its
exact score gap is negative); on every rung some cone point breaks L2's positive correlation or
L3's comparison (the better neighbour pulls the gradient away from p_mm)."""

from attnsvm.attention.losses import LOSSES
from attnsvm.claims.registry import Search
from attnsvm.claims.selections import with_alpha
from attnsvm.claims.strategies import instances, integers, keyed_datasets, sampled_from, seeds
from attnsvm.svm import geometry


def _negative_gap(inst) -> bool:
    sel = geometry.select(inst.dataset, inst.params["alpha"]) if inst.params.get("alpha") is not None else None
    return sel is not None and sel.feasible and sel.certified and sel.gap is not None and sel.gap < 0


def _space():
    return with_alpha(instances(keyed_datasets(n=(1, 2), T=(2, 3), dk=2, labels="positive"),
                                loss=sampled_from(sorted(LOSSES)), seed=seeds(), pick=integers(0, 3), points=8),
                      locally_optimal=False).filter(_negative_gap)


SEARCHES = {
    "locally_optimal": Search(instances=lambda dropped: _space(),
                              note="a feasible alpha with an SVM-neighbour of strictly higher score"),
}
