"""Theorem 5 (Section 3, joint head and attention, logistic loss): under Assumption C the joint
regularization path (v, p)(r, R) = argmin L(v, p) s.t. ||v|| <= r, ||p|| <= R converges in
direction to (v_mm, p_mm(alpha)), v_mm the label SVM on the selected tokens r_i = x_{i,alpha_i}.

Assumption C ("selecting alpha maximises the label margin; mixing in other tokens strictly
shrinks it") is decided exactly on three computable parts over all inputs (C1 vertices, C2
first-order mixing, C3 mixtures on a grid; `svm.joint`, which shows why C1 + C2 imply C over
every mixture): the hypothesis `joint.assumption_C`.

The path and the proxy are `claims.joint`'s (`joint_gaps`, this result's tolerances in PROXY):
the joint path on the instance's ray r = kappa R, kappa = r_over_R drawn from RATIOS = 1, 1/4,
4 (the theorem lets r and R grow without a rate, and under Assumption C every input is a support
vector, all inputs' loss terms share the factor e^{-r/||v_mm||}, so no ratio may change the
limit), R = 2^k max(||v_mm||, ||p_mm||) on a grid of GRID radii sliding with the horizon; the
instances of a batch are solved together. Target p_mm(alpha) (the relaxed problem (10) in
Theorem 6). Holds when both gaps at the largest radius are <= GAP_TOL, non-increasing over the
last LAST radii and falling like a power of R; fails when either stays above GAP_TOL without
decreasing by PLATEAU (relative) over them, and still does at 4x the radii (the engine's
`confirm`: a solve short of iterations can stop at a worse local solution); undecided instances
are re-evaluated at 2 and 4x the radii (`extend`), then INCONCLUSIVE, as is any instance whose
solves did not settle."""


from attnsvm.claims import Claim, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.joint import JointProxy, figure3_like, joint_gaps, joint_instances, random_joint
from attnsvm.claims.strategies import one_of
from attnsvm.svm import joint

GAP_TOL = 1e-2
PLATEAU = 1e-3
LAST = 3
GRID = 6
ITERS = 15          # solver iterations per radius at horizon 1 (scaled with the horizon)
MAX_MARGIN = 500.0
PROXY = JointProxy(GAP_TOL, PLATEAU, LAST, GRID, ITERS, MAX_MARGIN)
RATIOS = ("1", "1/4", "4")


@batched
def converges_to_svms(insts, budget) -> list[Outcome]:
    targets = [joint.att_svm(inst.dataset, inst.params["alpha"])[0].x for inst in insts]
    return joint_gaps(insts, budget, targets, PROXY)


def ray_instances(datasets):
    """Instances on the rays r = kappa R, kappa one of RATIOS."""
    return joint_instances(datasets, lambda c, ds, alpha: c.sampled_from(list(RATIOS)), f"one of {list(RATIOS)}")


claim = Claim(
    name="theorem5",
    evaluations=200,
    statement="logistic loss, ATT-SVM(alpha) and the label SVM feasible, Assumption C => (v, p)(r, R) converges in "
              "direction to (v_mm, p_mm(alpha)) as r, R -> oo (along rays r = kappa R, kappa in {1/4, 1, 4})",
    hypotheses=hyp.of("theorem5"),
    conclusion=converges_to_svms,
    instances=lambda dropped: ray_instances(one_of(joint.figure3(), figure3_like(), random_joint())),
    extend=(2, 4),
    confirm=(4,),
    measures=("final_gap_v", "final_gap_p", "r_over_R"),
    proxy=f"gap_v = 1 - corr(v, v_mm), gap_p = 1 - corr(p, p_mm) on the ray r = kappa R, kappa = r_over_R in "
          f"{list(RATIOS)}, R = 2^k max(||v_mm||, ||p_mm||), k < {GRID} (sliding up one step per horizon doubling; "
          f"undecided: up to 2 more): holds if both are <= {GAP_TOL} at the largest radius, non-increasing over the "
          f"last {LAST} and falling like a power of R; fails if one stays above {GAP_TOL} without decreasing by "
          f"{PLATEAU}, still so at 4x the radii; joint path by regpath.joint_path ({ITERS} iterations x the horizon, "
          "multi-start)",
    tolerances=PROXY.tolerances(),
)
