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

The path is solved by `attnsvm.dynamics.regpath.joint_path` on the ray r = kappa R, R = 2^k s, k < G
(s = max(||v_mm||, ||p_mm||), G = 6 at quick, +1 per horizon doubling; kappa = the instance's
r_over_R, drawn from RATIOS = 1, 1/4, 4: the theorem lets r and R grow without a rate, and
under Assumption C every input is a support vector, all inputs' loss terms share the factor
e^{-r/||v_mm||}, so no ratio may change the limit; `joint_gaps` solves several rays
r_over_R x f as one batch when asked), from the pairs
(v_mm(beta), p_mm(beta)) of every jointly feasible pure selection beta, (v_mm, p_relax(alpha))
and two seeded random pairs, plus warm starts along the grid.

Proxy (named): gap_v = 1 - corr(v, v_mm), gap_p = 1 - corr(p, target) (target p_mm(alpha)
here, the relaxed problem (10) in Theorem 6). Holds when both gaps at the largest radius are
<= GAP_TOL and non-increasing over the last three radii; fails when either stays above GAP_TOL
without decreasing by PLATEAU (relative) over them; otherwise the grid is extended (EXTEND
doublings) and the instance is INCONCLUSIVE, as is any instance whose solves did not settle."""

import itertools
from fractions import Fraction

import numpy as np
import torch

from attnsvm import svm
from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import just, seeds
from attnsvm.dynamics import regpath
from attnsvm.dynamics.trends import approaches, loglog_slope
from attnsvm.svm import certificates

GAP_TOL = 1e-2
PLATEAU = 1e-3
LAST = 3
EXTEND = 2
ITERS = 400
MAX_MARGIN = 500.0


# ---- label SVMs and Assumption C -------------------------------------------------------------

def label_result(ds: Dataset, beta, inputs):
    """The label SVM on the selected tokens x_{i,beta_i}, i in `inputs`, with its certificate."""
    idx = list(inputs)
    R = np.array([ds.X[i, beta[i]] for i in idx])
    eR = np.array([ds.exact["X"][i, beta[i]] for i in idx], dtype=object)
    res = svm.label_svm(R, ds.Y[idx], eR)
    return res, certificates.certify(res)


def margin_key(ds, beta, inputs):
    """||v_mm(beta)||^2 exactly (smaller = larger margin), None when separation is impossible,
    False when the certificate did not verify."""
    res, cert = label_result(ds, beta, inputs)
    if not cert.verified:
        return False
    return sum(q * q for q in cert.x) if cert.kind == "kkt" else None


def vertex_optimal(ds, alpha, inputs) -> bool:
    """C1: alpha restricted to `inputs` is the unique maximiser of the label margin."""
    inputs = list(inputs)
    best = margin_key(ds, alpha, inputs)
    if best is None or best is False:
        return False
    for choice in itertools.product(range(ds.T), repeat=len(inputs)):
        beta = list(alpha)
        for i, t in zip(inputs, choice):
            beta[i] = t
        if beta == list(alpha):
            continue
        other = margin_key(ds, beta, inputs)
        if other is False or (other is not None and other <= best):
            return False
    return True


def mixing_shrinks(ds, alpha, inputs) -> bool:
    """C2: every input of `inputs` is a support vector with a strictly positive multiplier in
    some optimal dual, and its selected token strictly out-scores the others under v_mm."""
    inputs = list(inputs)
    res, cert = label_result(ds, alpha, inputs)
    if not (cert.verified and cert.kind == "kkt"):
        return False
    v = cert.x
    Y, X = ds.exact["Y"], ds.exact["X"]
    score = lambda i, t: Y[i] * sum(X[i, t][c] * v[c] for c in range(ds.d))
    if any(score(i, alpha[i]) != 1 for i in inputs):
        return False                                            # a non-support input: mixing is free there
    if any(score(i, t) >= score(i, alpha[i]) for i in inputs for t in range(ds.T) if t != alpha[i]):
        return False
    rows = [[Y[i] * X[i, alpha[i]][c] for c in range(ds.d)] for i in inputs]
    return certificates.positive_dual(rows, v) is not None


MIX_GRID = (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4))


def mixed_margin_key(ds, choice, inputs):
    """||v||^2 of the label SVM over `inputs` whose feature for input i is the mixture
    sum_t choice[i][t] x_it (choice[i]: exact weights summing to 1), exactly; None when no v
    separates, False when the certificate did not verify."""
    idx = list(inputs)
    eR = np.array([[sum((w * ds.exact["X"][i, t][c] for t, w in enumerate(choice[i]) if w), Fraction(0))
                    for c in range(ds.d)] for i in idx], dtype=object)
    R = np.array([[float(a) for a in r] for r in eR])
    cert = certificates.certify(svm.label_svm(R, ds.Y[idx], eR))
    if not cert.verified:
        return False
    return sum(q * q for q in cert.x) if cert.kind == "kkt" else None


def mixtures_shrink(ds, alpha, inputs, grid=MIX_GRID) -> bool:
    """Assumption C over mixtures, on a grid of masses: every attention mixture with non-optimal
    mass q in `grid` on some input has a strictly smaller label margin than alpha (exact).

    For a fixed unit v the margin min_i Y_i v^T r_i(s) is maximised input by input, and linearly
    in s_i, so the largest margin over the mixtures whose input j keeps non-optimal mass >= q is
    the largest over finitely many label SVMs: inputs i != j pure (any beta_i) and input j either
    pure at t != alpha_j or (1 - q) x_{j,alpha_j} + q x_jt (the module docstring). Each is
    solved and certified here at every q of the grid."""
    inputs = list(inputs)
    best = margin_key(ds, alpha, inputs)
    if best is None or best is False:
        return False
    for j in inputs:
        others = [i for i in inputs if i != j]
        for t in range(ds.T):
            if t == alpha[j]:
                continue
            for beta in itertools.product(range(ds.T), repeat=len(others)):
                for q in grid:
                    choice = {i: [Fraction(int(b == s)) for s in range(ds.T)] for i, b in zip(others, beta)}
                    choice[j] = [1 - q if s == alpha[j] else q if s == t else Fraction(0) for s in range(ds.T)]
                    key = mixed_margin_key(ds, choice, inputs)
                    if key is False or (key is not None and key <= best):
                        return False
    return True


def alpha_of(inst):
    alpha = inst.params.get("alpha")
    return None if alpha is None or len(alpha) != inst.dataset.n else [int(a) for a in alpha]


def logistic_loss(inst) -> bool:
    return inst.params.get("loss") == "logistic"


def jointly_separable(inst) -> bool:
    """ATT-SVM(alpha) and the label SVM on x_{i,alpha_i} are both feasible (exact KKT)."""
    alpha = alpha_of(inst)
    if alpha is None:
        return False
    att = certificates.certify(svm.att_svm(inst.dataset, alpha))
    _, lab = label_result(inst.dataset, alpha, range(inst.dataset.n))
    return att.verified and att.kind == "kkt" and lab.verified and lab.kind == "kkt"


def assumption_C(inst) -> bool:
    """C1, C2 and C3 (mixtures on a grid) over all inputs (see the module docstring)."""
    alpha = alpha_of(inst)
    if alpha is None or inst.dataset.T ** inst.dataset.n > 64:
        return False
    ds, every = inst.dataset, range(inst.dataset.n)
    return vertex_optimal(ds, alpha, every) and mixing_shrinks(ds, alpha, every) and mixtures_shrink(ds, alpha, every)


def support_set(ds, alpha) -> list[int]:
    """Inputs whose selected token is a support vector of the label SVM (exact active set)."""
    _, cert = label_result(ds, alpha, range(ds.n))
    return sorted(cert.active)


# ---- the joint path ---------------------------------------------------------------------------

def joint_starts(ds, alpha, extra_p, seed: int):
    """Paired (v, p) start directions: (v_mm(beta), p_mm(beta)) for every jointly feasible beta,
    (v_mm(alpha), each of extra_p) and two seeded random pairs."""
    vs, ps = [], []
    for beta in itertools.product(range(ds.T), repeat=ds.n):
        lab, att = label_result(ds, beta, range(ds.n))[0], svm.att_svm(ds, beta)
        if lab.ok and att.ok:
            vs.append(lab.x)
            ps.append(att.x)
    v_alpha = label_result(ds, alpha, range(ds.n))[0].x
    for p in extra_p:
        vs.append(v_alpha)
        ps.append(p)
    rng = np.random.default_rng(seed)
    vs += list(rng.normal(size=(2, ds.d)))
    ps += list(rng.normal(size=(2, ds.d)))
    return np.array(vs), np.array(ps)


UNDECIDED = "a gap is above tolerance but still decreasing at the largest radius"
SPREAD = (Fraction(1),)        # the rays r = kappa R solved per instance: r_over_R x these


def joint_gaps(inst, budget, p_target: np.ndarray, extra_p=(), spread=SPREAD) -> Outcome:
    """The proxy on every ray r = kappa R, kappa = r_over_R x f for f in `spread`: holds when it
    holds on every ray, fails when it fails on one, else undecided. The rays are solved as one
    batch on the first ray's grid: ray b's head data are X kappa_b/kappa_0 (v' = v kappa_0/kappa_b
    has the same direction and ||v'|| <= kappa_0 R is ||v|| <= kappa_b R; the keys stay). The
    detail is that of the first failing (else undecided, else last) ray, with every ray's summary
    under `rays` and the largest final gaps over the rays (`final_gap_v`, `final_gap_p`)."""
    ds, P = inst.dataset, inst.params
    alpha = alpha_of(inst)
    base = Fraction(str(P.get("r_over_R", 1)))
    kappas = [float(base * f) for f in spread]
    v_mm = label_result(ds, alpha, range(ds.n))[0].x
    scale = max(float(np.linalg.norm(v_mm)), float(np.linalg.norm(p_target)))
    vs, ps = joint_starts(ds, alpha, [p_target, *extra_p], P["seed"])
    G = 6 + max(0, int(round(np.log2(budget.horizon))))
    # keep the largest label margin r/||v_mm|| below MAX_MARGIN: e^{-r/||v_mm||} must stay in float64's range
    scale = min(scale, MAX_MARGIN * float(np.linalg.norm(v_mm)) / (max(kappas) * 2.0 ** (G - 1 + EXTEND)))
    X = np.stack([ds.X * (k / kappas[0]) for k in kappas])
    B = len(kappas)
    for extra in range(EXTEND + 1):
        rho = scale * 2.0 ** np.arange(G + extra)
        path = regpath.joint_path(X, np.stack([ds.Y] * B), np.stack([model.keys(ds)] * B), [(kappas[0] * r, r) for r in rho],
                                  vs, ps, iters=ITERS)
        outs = [_decide(path, b, rho, v_mm, p_target, alpha, ds) for b in range(B)]
        for o, k in zip(outs, kappas):
            o.detail["r_over_R"] = k
        if all(o.holds is not None or o.reason != UNDECIDED for o in outs):
            break
    pick = next((o for o in outs if o.holds is False), next((o for o in outs if o.holds is None), outs[-1]))
    rays = [{"r_over_R": o.detail["r_over_R"], "holds": o.holds, "final_gap_v": o.detail.get("final_gap_v"),
             "final_gap_p": o.detail.get("final_gap_p"), "reason": o.reason} for o in outs]
    detail = {**pick.detail, "rays": rays, "final_gap_v": max(r["final_gap_v"] for r in rays),
              "final_gap_p": max(r["final_gap_p"] for r in rays), "least_r_over_R": min(kappas),
              "largest_r_over_R": max(kappas)}
    holds = False if any(o.holds is False for o in outs) else None if any(o.holds is None for o in outs) else True
    return Outcome(holds, detail=detail, reason=pick.reason if holds is None else "")


def _decide(path, b: int, rho, v_mm, p_target, alpha, ds) -> Outcome:
    """The proxy on batch element b of the joint path (see the module docstring)."""
    gv = (1 - path.corr(torch.as_tensor(v_mm), block=0)[:, b]).clamp_min(0).tolist()
    gp = (1 - path.corr(torch.as_tensor(p_target), block=1)[:, b]).clamp_min(0).tolist()
    p_last = path.x[1][-1, b]
    selected = (torch.as_tensor(model.keys(ds)) @ p_last).argmax(-1).tolist()
    ok = regpath.settled(path, b)
    tail = slice(len(rho) - LAST, len(rho))
    detail = {"alpha": alpha, "v_mm": v_mm.tolist(), "p_target": np.asarray(p_target).tolist(), "R": rho.tolist(),
              "gap_v": gv, "gap_p": gp, "final_gap_v": gv[-1], "final_gap_p": gp[-1],
              "status": [s[b] for s in path.status], "residual": path.residual[:, b].tolist(),
              "selected_at_largest": selected, "final_v": (path.x[0][-1, b] / path.x[0][-1, b].norm()).tolist(),
              "final_p": (p_last / p_last.norm()).tolist(),
              "loglog_slope_v": loglog_slope(rho[tail], gv[tail]), "loglog_slope_p": loglog_slope(rho[tail], gp[tail])}
    if not all(ok[tail]):
        return Outcome(None, detail=detail, reason="joint path solve did not settle on the last radii")
    tails = [g[tail] for g in (gv, gp)]
    converging = [approaches(rho[tail], t, GAP_TOL) for t in tails]
    stuck = [t[-1] > GAP_TOL and t[-1] >= t[0] * (1 - PLATEAU) for t in tails]
    if all(converging):
        return Outcome(True, detail=detail)
    if any(stuck):
        return Outcome(False, detail=detail)
    return Outcome(None, detail=detail, reason=UNDECIDED)


def converges_to_svms(inst, budget) -> Outcome:
    return joint_gaps(inst, budget, svm.att_svm(inst.dataset, alpha_of(inst)).x)


# ---- instances --------------------------------------------------------------------------------

FIGURE3 = [[[0, 0], [1, 1]], [[0, 0], [1, -1]], [[0, 0], ["1/2", 1]]]


def figure3(last=("1/2", 1)) -> Dataset:
    """The paper's Figure 3 data: n = 3, T = 2, d = 2, labels (1, -1, 1), head init (-1, 0) (v
    only matters for the initial head; the joint path does not use it); last = (1/2, 3/2)
    gives Figure 3(b), where input 3 is not a support vector."""
    X = [FIGURE3[0], FIGURE3[1], [[0, 0], list(last)]]
    return Dataset.from_arrays(X, [1, -1, 1], [-1, 0], name=f"figure3(last={list(last)})")


def best_selection(ds):
    """The pure selection with the largest label margin (smallest ||v_mm||^2), if any."""
    keys = [(margin_key(ds, b, range(ds.n)), b) for b in itertools.product(range(ds.T), repeat=ds.n)]
    keys = [(k, b) for k, b in keys if k not in (None, False)]
    return list(min(keys)[1]) if keys else None


def figure3_like(perturb: bool = True) -> Space:
    """Figure 3 with its three non-zero tokens moved by small half-integer steps (the zero token
    shared by every input stays): Assumption C holds on many, fails on others."""
    def generate(c):
        X = [[list(map(Fraction, tok)) for tok in inp] for inp in FIGURE3]
        if perturb:
            for i in range(3):
                X[i][1] = [X[i][1][k] + Fraction(c.integer(-2, 2, "entry"), 2) for k in range(2)]
        return Dataset.from_arrays([[[str(a) for a in tok] for tok in inp] for inp in X], [1, -1, 1], [-1, 0],
                                   name="figure3-like")

    return Space(generate, "Figure 3 with its non-zero tokens moved by halves in [-1, 1]")


def random_joint() -> Space:
    """Small integer datasets (n = 2..3, T = 2, d = 2) with a zero first token in every input."""
    def generate(c):
        n = c.integer(2, 3, "size")
        toks = [[c.integer(-2, 2, "entry"), c.integer(-2, 2, "entry")] for _ in range(n)]
        Y = [c.sampled_from([1, -1]) for _ in range(n)]
        return Dataset.from_arrays([[[0, 0], t] for t in toks], Y, [1, 0], name="random-joint")

    return Space(generate, "integer datasets n 2..3, T 2, d 2, entries in [-2, 2], a zero first token")


def one_of(options) -> Space:
    """One of several dataset spaces (or fixed datasets), the choice itself enumerable."""
    return Space(lambda c: (lambda o: o.generate(c) if isinstance(o, Space) else o)(c.sampled_from(options)),
                 " | ".join(getattr(o, "description", getattr(o, "name", "")) for o in options))


RATIOS = ("1", "1/4", "4")


def joint_instances(datasets: Space, ratios=RATIOS) -> Space:
    """Instances: the ray's ratio r_over_R (one of `ratios`), a dataset, alpha = its pure selection of
    largest label margin, and a seed."""
    def generate(c):
        ratio = c.sampled_from(list(ratios))
        ds = datasets.generate(c)
        return Instance(ds, {"alpha": best_selection(ds), "loss": "logistic", "seed": c.integer(0, 2**16, "seed"),
                             "r_over_R": ratio})

    return Space(generate, datasets.description + f"; r/R one of {list(ratios)}",
                 params={"alpha": Space(lambda c: None, "the best pure selection"), "loss": just("logistic"),
                         "seed": seeds(0, 2**16), "r_over_R": Space(lambda c: None, f"one of {list(ratios)}")})


def _instances(dropped):
    if "assumption_C" in dropped:
        return joint_instances(one_of([figure3(("1/2", "3/2")), figure3_like()]))
    return joint_instances(one_of([figure3(), figure3_like(), random_joint()]))


LOGISTIC_LOSS = Hypothesis("logistic_loss", "the loss is logistic (Section 3)", logistic_loss)
JOINTLY_SEPARABLE = Hypothesis("jointly_separable", "ATT-SVM(alpha) and the label SVM on x_{i,alpha_i} are feasible (exact)",
                               jointly_separable)

claim = Claim(
    name="theorem5",
    evaluations=8,
    statement="logistic loss, ATT-SVM(alpha) and the label SVM feasible, Assumption C => (v, p)(r, R) converges in "
              "direction to (v_mm, p_mm(alpha)) as r, R -> oo (along rays r = kappa R, kappa in {1/4, 1, 4})",
    hypotheses=(
        LOGISTIC_LOSS,
        JOINTLY_SEPARABLE,
        Hypothesis("assumption_C", "C1: alpha uniquely maximises the label margin over pure selections; C2: every input "
                   "is a support vector with a positive multiplier and alpha strictly out-scores under v_mm; C3: every "
                   "mixture with non-optimal mass q in {1/4, 1/2, 3/4} on an input has a smaller margin (exact)",
                   assumption_C),
    ),
    conclusion=converges_to_svms,
    instances=_instances,
    measures=("final_gap_v", "final_gap_p", "r_over_R"),
    proxy=f"gap_v = 1 - corr(v, v_mm), gap_p = 1 - corr(p, p_mm) on the ray r = kappa R, kappa = r_over_R in "
          f"{list(RATIOS)}, "
          f"R = 2^k max(||v_mm||, ||p_mm||), k < 6 (+1 per "
          f"horizon doubling, up to {EXTEND} more while undecided): holds if both are <= {GAP_TOL} at the largest "
          f"radius and non-increasing over the last {LAST}; fails if one stays above {GAP_TOL} without decreasing by "
          f"{PLATEAU}; joint path by regpath.joint_path ({ITERS} iterations, multi-start)",
)
