"""Theorem 6 (Section 3.2): suppose the joint path selects alpha asymptotically; let v_mm be the
label SVM on x_{i,alpha_i} and S its support-vector inputs; if Assumption C holds over S, then
v -> v_mm and p -> p_relax in direction, p_relax the solution of the relaxed problem (10)

    min ||p||  s.t.  (k_{i,alpha_i} - k_it)^T p >= 1 (i in S),  >= 0 (i not in S)

(`attnsvm.svm.relaxed_att_svm`, certified exactly).

alpha is the pure selection of largest label margin; S is the exact active set of its label
SVM. "Assumption C over S" is theorem5's predicate restricted to the inputs of S (C1: alpha_S
uniquely maximises the margin of the label SVM over S among the selections beta_S; C2: every
input of S has a strictly positive multiplier and alpha strictly out-scores under v_mm).
The premise "the path selects alpha" is read at the largest radius (max-logit tokens of p);
when it fails the theorem says nothing and the instance is INCONCLUSIVE. The path and the
proxy are theorem5's (joint_gaps), with target p_relax and p_mm(alpha) as an extra start, on
the ray r = kappa R of the instance: kappa = (2 kappa* + 1) x f, f in FACTORS = 1, 2, 4 (the
factor only while kappa <= KAPPA_MAX = 8: a larger kappa leaves too few radii in float64's
range before e^{-r/||v_mm||} underflows), so the instances cover a range of ratios above kappa*
(theorem5 solves several rays per instance; here each instance's kappa* sets its own)."""

from fractions import Fraction

import numpy as np

from attnsvm import svm
from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import just, seeds
from attnsvm.svm import certificates
from attnsvm.results.checks.theorem5 import (
    EXTEND,
    GAP_TOL,
    ITERS,
    JOINTLY_SEPARABLE,
    LAST,
    LOGISTIC_LOSS,
    PLATEAU,
    alpha_of,
    best_selection,
    figure3,
    figure3_like,
    joint_gaps,
    label_result,
    mixing_shrinks,
    mixtures_shrink,
    one_of,
    random_joint,
    support_set,
    vertex_optimal,
)


def assumption_C_support(inst) -> bool:
    """Assumption C (theorem5's C1, C2 and C3 over mixtures) over the support-vector inputs S of the label SVM."""
    alpha = alpha_of(inst)
    if alpha is None or inst.dataset.T ** inst.dataset.n > 64:
        return False
    S = support_set(inst.dataset, alpha)
    ds = inst.dataset
    return bool(S) and vertex_optimal(ds, alpha, S) and mixing_shrinks(ds, alpha, S) and mixtures_shrink(ds, alpha, S)


def shift_conditions(ds, alpha) -> list[tuple]:
    """Per non-support input i and token t != alpha_i, exactly: (m_i, c_it, v.v, P.P) with
    m_i = Y_i v_mm^T x_{i,alpha_i} (> 1), c_it = (k_{i,alpha_i} - k_it)^T P, P = p_relax exact."""
    from attnsvm.attention import model

    _, lab = label_result_all(ds, alpha)
    _, rel = relaxed_target(ds, alpha)
    v, P = lab.x, rel.x
    S = set(support_set(ds, alpha))
    Y, X, K = ds.exact["Y"], ds.exact["X"], model.exact_keys(ds)
    vv, PP = sum(a * a for a in v), sum(a * a for a in P)
    out = []
    for i in range(ds.n):
        if i in S:
            continue
        m = Y[i] * sum(X[i, alpha[i]][c] * v[c] for c in range(ds.d))
        for t in range(ds.T):
            if t != alpha[i]:
                out.append((m, sum((K[i, alpha[i]][c] - K[i, t][c]) * P[c] for c in range(ds.d)), vv, PP))
    return out


def kappa_star(ds, alpha) -> float:
    """The smallest r/R for which p_relax is the limit along r = kappa R (0 when no non-support
    token binds): max over non-support (i, t) of ||v_mm|| (1 - c_it) / (||P|| (m_i - 1))."""
    vals = [np.sqrt(float(vv)) * float(1 - c) / (np.sqrt(float(PP)) * float(m - 1)) for m, c, vv, PP in shift_conditions(ds, alpha)]
    return max([0.0] + vals)


def r_dominates_R(inst) -> bool:
    """The path's ray r = kappa R has kappa > kappa* (exact: kappa^2 P.P (m_i - 1)^2 > v.v (1 - c_it)^2
    wherever c_it < 1): every non-support input's label-margin buffer kappa (m_i - 1)/||v_mm||
    exceeds its attention deficit 1/||P|| - c_it/||P||, so its loss terms vanish against the
    support inputs' (see the module docstring)."""
    alpha = alpha_of(inst)
    if alpha is None:
        return False
    kappa = Fraction(str(inst.params.get("r_over_R", 1)))
    return all(c >= 1 or kappa * kappa * PP * (m - 1) ** 2 > vv * (1 - c) ** 2 for m, c, vv, PP in shift_conditions(inst.dataset, alpha))


def shifted_direction(ds, alpha, kappa: float) -> np.ndarray | None:
    """The predicted limit of p/R along r = kappa R (lemmas/theorem6): argmax over ||u|| <= 1 of
    min_{i,t} [(k_{i,alpha_i} - k_it)^T u + kappa (m_i - 1)/||v_mm||] (an SOCP, cvxpy); equals
    p_relax's direction when kappa > kappa*."""
    import cvxpy as cp

    from attnsvm.attention import model

    v = label_result_all(ds, alpha)[0].x
    m = ds.Y * np.einsum("nd,d->n", ds.X[np.arange(ds.n), alpha], v)
    K = model.keys(ds)
    rows = [(K[i, alpha[i]] - K[i, t], kappa * (m[i] - 1) / np.linalg.norm(v)) for i in range(ds.n) for t in range(ds.T)
            if t != alpha[i]]
    u, t = cp.Variable(ds.d), cp.Variable()
    prob = cp.Problem(cp.Maximize(t), [a @ u + b >= t for a, b in rows] + [cp.norm(u) <= 1])
    prob.solve(solver=cp.CLARABEL)
    return None if prob.status != cp.OPTIMAL else np.asarray(u.value) / np.linalg.norm(u.value)


def label_result_all(ds, alpha):
    return label_result(ds, alpha, range(ds.n))


def relaxed_target(ds, alpha):
    res = svm.relaxed_att_svm(ds, alpha, support_set(ds, alpha))
    return res, certificates.certify(res)


def converges_to_relaxed(inst, budget) -> Outcome:
    ds, alpha = inst.dataset, alpha_of(inst)
    res, cert = relaxed_target(ds, alpha)
    if not (res.ok and cert.verified):
        return Outcome(None, reason=f"problem (10) not solved exactly: {res.status}, {cert.reason}")
    out = joint_gaps(inst, budget, res.x, extra_p=[svm.att_svm(ds, alpha).x], spread=(Fraction(1),))
    out.detail.update(support=support_set(ds, alpha), p_relax_exact=[str(q) for q in cert.x], kappa_star=kappa_star(ds, alpha))
    if out.holds is not True:                   # where p misses p_relax: the shifted SVM's prediction, on the ray reported
        shifted = shifted_direction(ds, alpha, out.detail["r_over_R"])
        out.detail.update(shifted_direction=None if shifted is None else shifted.tolist(),
                          gap_final_p_to_shifted=None if shifted is None else 1 - float(np.dot(out.detail["final_p"], shifted)))
    if out.detail.get("selected_at_largest") != alpha:
        return Outcome(None, detail=out.detail, reason="premise not met: the path does not select alpha at the largest radius")
    return out


def _kappa(ds, alpha, below: bool) -> str:
    """r/R for an instance: comfortably above kappa* (2 kappa* + 1, rounded up to a half), or,
    to violate r_dominates_R, half of kappa* (when kappa* > 0)."""
    ks = kappa_star(ds, alpha) if alpha is not None and relaxed_target(ds, alpha)[0].ok else 0.0
    if below:
        return str(Fraction(ks / 2).limit_denominator(64)) if ks > 0 else "1"
    return str(Fraction(int(np.ceil(2 * (2 * ks + 1))), 2))


FACTORS = (1, 2, 4)      # r/R = (2 kappa* + 1) x one of these ...
KAPPA_MAX = 8            # ... kept up to this kappa: a larger one leaves few radii before e^{-r/||v_mm||} underflows


def relaxed_instances(datasets: Space, below: bool) -> Space:
    """Instances with r/R comfortably above kappa* (`_kappa` times a factor of FACTORS, while at most
    KAPPA_MAX), or, to violate r_dominates_R, half of kappa*."""
    def generate(c):
        ds = datasets.generate(c)
        alpha = best_selection(ds)
        ok = alpha is not None and svm.att_svm(ds, alpha).ok
        kappa = _kappa(ds, alpha, below) if ok else "1"
        f = c.sampled_from(FACTORS)
        if not below and Fraction(kappa) * f <= KAPPA_MAX:
            kappa = str(Fraction(kappa) * f)
        return Instance(ds, {"alpha": alpha, "loss": "logistic", "seed": c.integer(0, 2**16, "seed"), "r_over_R": kappa})

    return Space(generate, datasets.description + ("; r/R = kappa*/2" if below else "; r/R = (2 kappa* + 1) x 1, 2 or 4 (while <= 8)"),
                 params={"alpha": Space(lambda c: None, "the best pure selection"), "loss": just("logistic"),
                         "seed": seeds(0, 2**16), "r_over_R": Space(lambda c: None, "from kappa*")})


def _instances(dropped):
    data = one_of([figure3(("1/2", "3/2")), figure3(), figure3_like(), random_joint()])
    return relaxed_instances(data, below="r_dominates_R" in dropped)


claim = Claim(
    name="theorem6",
    evaluations=8,
    statement="logistic loss, ATT-SVM(alpha) and label SVM feasible, the path selects alpha, Assumption C over the "
              "support set S => v -> v_mm and p -> p_relax (problem (10)) in direction as r, R -> oo (on the ray r = kappa R, "
              "kappa = r_over_R > kappa*)",
    hypotheses=(
        LOGISTIC_LOSS,
        JOINTLY_SEPARABLE,
        Hypothesis("assumption_C_support", "Assumption C (C1, C2, C3 over mixtures of theorem5) over the support set S (exact)",
                   assumption_C_support),
        Hypothesis("r_dominates_R", "the path's ray r = kappa R has kappa > kappa* (exact), the finite-rate form of "
                   "r/R -> oo", r_dominates_R),
    ),
    conclusion=converges_to_relaxed,
    instances=_instances,
    measures=("final_gap_v", "final_gap_p", "r_over_R", "kappa_star"),
    proxy=f"on the ray r = kappa R, kappa = r_over_R = (2 kappa* + 1) x {list(FACTORS)} (<= {KAPPA_MAX}), theorem5's proxy with target p_relax (problem (10), exact): gaps 1 - corr(v, v_mm), 1 - corr(p, p_relax) "
          f"<= {GAP_TOL} at the largest r = R and non-increasing over the last {LAST} radii (fails: stuck above "
          f"{GAP_TOL}, relative decrease < {PLATEAU}; undecided: up to {EXTEND} more doublings, then INCONCLUSIVE); "
          f"premise 'selects alpha' read from p at the largest radius (else INCONCLUSIVE); {ITERS} iterations",
)
