"""Lemma 13's competitor without ATT-SVM(alpha) feasibility: (10) can still be feasible (two
non-support inputs with opposite rows only need a p orthogonal to them), but no p has every row
> 0, so (78) is infeasible for every eps > 0 (exact Farkas certificate): the proof has no
competitor. The search space adds that hand instance (`checks.lemma13.NON_SUPPORT_CONFLICT`) to
the small integer datasets. label_separable and relaxed_feasible are what define S and p_relax;
without them the conclusion names nothing."""

from attnsvm.claims.registry import Search

SEARCHES = {
    "att_svm_feasible": Search(note="non-support inputs with opposite rows: (10) feasible, (78) infeasible (Farkas)"),
}
