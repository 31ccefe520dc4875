"""Theorem 5 without Assumption C: the paper's own Figure 3(b) (last token at (1/2, 3/2)) and
Figure-3-like perturbations. There input 3 is not a support vector of the label SVM, so mixing
its tokens does not shrink the label margin (C2 fails); the joint path still selects alpha and
v still converges to v_mm, but p converges to the relaxed problem (10) - (1, 0) on Figure 3(b) -
not to p_mm(alpha) = (5/4, 1/4): the gap 1 - corr(p, p_mm) grows towards 1 - corr(p_relax, p_mm)
= 0.0194. This is the paper's own Theorem 6 case, so the failure is expected, not a defect."""

from attnsvm.claims.joint import figure3_like
from attnsvm.claims.registry import Search
from attnsvm.claims.strategies import one_of
from attnsvm.results.checks.theorem5 import ray_instances
from attnsvm.svm import joint

SEARCHES = {
    "assumption_C": Search(instances=lambda dropped: ray_instances(one_of(joint.figure3(("1/2", "3/2")),
                                                                          figure3_like())),
                           note="a non-support input (Figure 3(b)): p converges to problem (10), not to p_mm"),
}
