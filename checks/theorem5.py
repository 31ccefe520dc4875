"""Theorem 5 (Section 3, joint head and attention, logistic loss): under Assumption C the joint
regularization path (v, p)(r, R) = argmin L(v, p) s.t. ||v|| <= r, ||p|| <= R converges in
direction to (v_mm, p_mm(alpha)), v_mm the label SVM on the selected tokens r_i = x_{i,alpha_i}.

Assumption C ("selecting alpha maximises the label margin; mixing in other tokens strictly
shrinks it") is encoded as a predicate decided EXACTLY on three computable parts, over a set of
inputs I (all inputs here; the support set S in Theorem 6):

- C1, vertices: alpha_I is the unique maximiser of the label margin 1/||v_mm(beta)|| over all
  pure selections beta_I (T^|I| <= 64, each label SVM certified by exact KKT or Farkas);
- C2, first-order mixing: with v_mm = v_mm(alpha) (exact), every input of I is a support
  vector with a strictly positive multiplier in some optimal dual (certificates.positive_dual)
  and its selected token strictly out-scores its others under v_mm. Moving mass pi to token t
  of input i changes the margin at rate lambda_i Y_i v_mm^T (x_it - x_{i,alpha_i}) < 0 (Danskin),
  so every mixing direction shrinks the margin to first order.
- C3, mixtures: every attention mixture s (s_i in the simplex) whose non-optimal mass on some
  input is q, for q on the grid MIX_GRID, has a strictly smaller margin, certified exactly.
  This is a finite check: for a fixed unit v the margin min_i Y_i v^T r_i(s) is linear in each
  s_i and maximised input by input, so the largest margin over the mixtures with mass >= q on
  input j is the largest over the label SVMs with inputs i != j pure (any beta_i) and input j
  mixing x_{j,alpha_j} with one x_jt at mass exactly q (or pure at t) (`mixtures_shrink`).
The same reduction shows that C1 + C2 already imply C over every mixture, with a linear rate
(margin <= 1/||v_mm|| - c q): a mixture keeping margin 1/||v_mm|| forces v = v_mm and needs an
input whose selected score exceeds 1 (a non-support input) or a competing pure selection; and
C2's positive multiplier makes the rate at q -> 0 positive (Danskin). C3 is the explicit
check of that consequence on the grid (tests pin that it never disagrees).

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
solves did not settle.
Assumption C (`svm.joint`, C1-C3 over all inputs) is the hypothesis `joint.assumption_C`."""

import numpy as np

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
