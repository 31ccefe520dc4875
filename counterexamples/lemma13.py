"""Lemma 13's competitor without ATT-SVM(alpha) feasibility: (10) can still be feasible (two
non-support inputs with opposite rows only need a p orthogonal to them), but no p has every row
> 0, so (78) is infeasible for every eps > 0 (exact Farkas certificate): the proof has no
competitor. The search space adds that hand instance (NON_SUPPORT_CONFLICT) to the small integer
datasets. label_separable and relaxed_feasible are what define S and p_relax; without them the
conclusion names nothing."""

from attnsvm.attention.data import Dataset
from attnsvm.claims.joint import random_joint
from attnsvm.claims.registry import Search
from attnsvm.results.checks.lemma13 import competitor_instances

# S = {1}; inputs 2 and 3 are non-support with opposite rows: (10) holds with p = (1, -2), (ATT-SVM) is infeasible
NON_SUPPORT_CONFLICT = Dataset.from_arrays([[[0, 0], [1, 0]], [[0, 0], [2, 1]], [[0, 0], [-2, -1]]], [1, 1, -1], [1, 0],
                                           name="non-support-conflict")

SEARCHES = {
    "att_svm_feasible": Search(instances=lambda dropped: competitor_instances([NON_SUPPORT_CONFLICT, random_joint()]),
                               note="non-support inputs with opposite rows: (10) feasible, (78) infeasible (Farkas)"),
}
