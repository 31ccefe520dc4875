"""Implicit Bias and Fast Convergence Rates for Self-attention (paper C;
docs/statements.md#rates-joint): joint training of the
key-query matrix W and the linear decoder v (`dynamics.joint.JointProblem`) by normalized GD on
theta = (vec W, v): W converges in direction to W_mm(opt) from a random start (globally), the
decoder converges in margin, and the loss decays like exp(-t^{1/3}) on Gaussian-like data.

Data and law (OUR reconstruction: paper C's data model and constants are not in papers/):
"Gaussian-like" = the first token (also the query, z_i = x_i1) carries the label, x_i1 = Y_i e_1,
and the other tokens are Gaussian N(0, sigma^2 I) orthogonal to e_1 (`gaussian_like`), sigma 0.1 or
0.25 (noise weaker than the signal: with sigma = 1 and d = 8 the runs attend to the noise tokens
and the decoder memorizes them, W ~ -W_mm, loss still -> 0). Then
opt_i = 1 for the limit decoder, v_mm = e_1 (label SVM on the selected tokens, margin 1), and
W_mm(opt) exists (W = c e_1 e_1^T separates). The law: -log L(theta_t) >= c t^{1/3} for large t,
judged by the fitted exponent of -log L against t (at least 1/3 - TOL_EXP).

Proxy: joint NGD (eta 0.5) from theta_0 ~ N(0, init_scale^2), init_scale 0.1 or 0.3, for H = steps x horizon iterations,
recorded every H/32: (a) 1 - corr(W_H, W_mm(opt)) <= TOL_W;
(b) the decoder's normalized margin min_i Y_i v_H^T X_i^T s_i / ||v_H|| >= (1 - TOL_V) / ||v_mm||;
(c) the least-squares slope of log(-log L) against log t over t in [H/8, H] is >= 1/3 - TOL_EXP.
The queries z_i = Y_i e_1 span one direction, so the part of W_0 off W's first column never moves
and 1 - corr(W_t, W_mm) decays only as ||W_t|| grows, which under joint NGD is slow (the step goes
to v once attention saturates): from starts of scale 1 the gap is still 0.03-0.3 at H = 200, hence
the small starts. Every part holds, or the claim fails (margin: the smallest of the three slacks, each relative).
Fixed-step GD (`normalized_step` dropped) only reaches L = O(1/t): exponent ~0.2."""

import numpy as np

from attnsvm import dynamics
from attnsvm.attention.data import Dataset
from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.claims import strategies as S
from attnsvm.claims.spaces import Space
from attnsvm.dynamics.joint import JointProblem
from attnsvm.dynamics.trends import loglog_slope
from attnsvm.svm import geometry, w_svm
from attnsvm.svm.margin import label_svm

TOL_W = 0.05
TOL_V = 0.01
TOL_EXP = 0.05
LAW_EXP = 1 / 3
WINDOW = 8
RECORDS = 32


def gaussian_like(seed: int, n: int, T: int, d: int, sigma: float, flipped: int = 0) -> Dataset:
    """x_i1 = Y_i e_1 (the label token, also the query), x_it ~ N(0, sigma^2 I) with first coordinate 0
    for t > 1; the first `flipped` inputs carry the wrong sign, x_i1 = -Y_i e_1."""
    rng = np.random.default_rng(seed)
    X = sigma * rng.normal(size=(n, T, d))
    X[:, :, 0] = 0.0
    Y = rng.choice([-1.0, 1.0], n)
    X[:, 0, :] = 0.0
    X[:, 0, 0] = Y * np.where(np.arange(n) < flipped, -1.0, 1.0)
    e1 = np.eye(d)[0]
    return Dataset.from_arrays(X, Y, e1, name=f"gaussian-like-seed{seed}")


def datasets(flipped=0) -> Space:
    def generate(c):
        n, T, d = c.integer(2, 6, "size"), c.integer(2, 4, "size"), c.integer(2, 4, "size")
        sigma = c.sampled_from([0.1, 0.25])
        return gaussian_like(c.integer(0, 2**31 - 1, "seed"), n, T, d, sigma, S._choose(c, flipped))
    return Space(generate, f"Gaussian-like datasets n in [2, 6], T in [2, 4], d in [2, 4], sigma 0.1 or 0.25, "
                           f"flipped {flipped}")


def joint_run(inst, budget):
    p = inst.params
    ds = inst.dataset
    H = int(p["steps"] * budget.horizon)
    rule = dynamics.NormalizedGD(p["eta"]) if p["rule"] == "ngd" else dynamics.GD(p["eta"])
    D = ds.d * ds.d + ds.d
    theta0 = np.random.default_rng(p["seed"]).normal(scale=p["init_scale"], size=D)
    prob = JointProblem.from_datasets([ds])
    return prob, dynamics.run(prob, rule, theta0, H, every=max(1, H // RECORDS))


def joint_convergence(inst, budget) -> Outcome:
    ds = inst.dataset
    prob, tr = joint_run(inst, budget)
    if tr.status[0] != "ok":
        return Outcome(None, detail={"status": tr.status[0]}, reason=f"run {tr.status[0]}")
    steps = np.asarray(tr.steps, dtype=np.float64)
    theta = tr.p[:, 0]
    W, v = (x.numpy() for x in prob.split(theta))
    target = w_svm(ds, [0] * ds.n)
    vmm = label_svm(ds.X[:, 0], ds.Y)
    if not (target.ok and vmm.ok):
        return Outcome(None, detail={"w_svm": target.status, "label_svm": vmm.status},
                       reason="W_mm(opt) or the label SVM on the first tokens is infeasible")
    gap = np.array([1 - geometry.corr(w, target.x) for w in W])
    h = int(np.argmin(np.abs(steps - steps[-1] / 2)))
    margin_v = float(JointProblem.from_datasets([ds] * len(steps)).margins(theta).min(-1).values[-1]
                     / np.linalg.norm(v[-1]))
    best = 1 / float(np.linalg.norm(vmm.x))
    value = tr.value[:, 0].numpy()
    w = steps >= steps[-1] / WINDOW
    exponent = loglog_slope(steps[w], -np.log(value[w]), min_points=4)
    detail = {"horizon": int(steps[-1]), "w_gap": float(gap[-1]), "w_gap_half": float(gap[h]),
              "decoder_margin": margin_v, "decoder_margin_svm": best, "final_loss": float(value[-1]),
              "loss_exponent": exponent, "law_exponent": LAW_EXP, "rule": inst.params["rule"]}
    if exponent is None:
        return Outcome(None, detail=detail, reason="too few loss values in the window")
    slack = {"w": (TOL_W - gap[-1]) / TOL_W,
             "decoder": (margin_v / best - (1 - TOL_V)) / TOL_V,
             "loss": (exponent - (LAW_EXP - TOL_EXP)) / LAW_EXP}
    detail["slack"] = {k: float(x) for k, x in slack.items()}
    m = float(min(slack.values()))
    return Outcome(m > 0, detail=detail, margin=m)


def normalized_step(inst) -> bool:
    return inst.params["rule"] == "ngd"


def labels_on_signal(inst) -> bool:
    """Every label token carries its input's label: x_i1 = Y_i e_1 (the data model's separability)."""
    ds = inst.dataset
    return bool(np.all(ds.X[:, 0, 0] * ds.Y > 0))


HYPOTHESES = (Hypothesis("normalized_step", "the rule is normalized GD on (W, v)", normalized_step),
              Hypothesis("labels_on_signal", "x_i1 = Y_i e_1 for every input (Gaussian-like data, separable)",
                         labels_on_signal))


def instance_space(dropped):
    rule = S.sampled_from(["gd"]) if "normalized_step" in dropped else S.just("ngd")
    eta = S.just(1.0) if "normalized_step" in dropped else S.just(0.5)
    return S.instances(datasets(flipped=S.integers(1, 1) if "labels_on_signal" in dropped else 0),
                       rule=rule, eta=eta, steps=S.just(200), init_scale=S.sampled_from([0.1, 0.3]), seed=S.seeds())


claim = Claim(
    name="rates-joint",
    evaluations=20,
    statement="jointly training W and the linear decoder by normalized GD on Gaussian-like data (reconstruction): "
              "W converges in direction to W_mm(opt), the decoder's normalized margin to the label SVM's, and "
              "L(theta_t) <= exp(-c t^{1/3})",
    hypotheses=HYPOTHESES,
    conclusion=joint_convergence,
    instances=instance_space,
    measures=("w_gap", "decoder_margin", "loss_exponent"),
    proxy=f"joint NGD (eta 0.5) from starts of scale 0.1 or 0.3 for H = 200 x horizon steps: 1 - corr(W_H, W_mm) <= "
          f"{TOL_W}; decoder margin >= (1 - {TOL_V}) x the SVM's; slope of log(-log L) vs log t over [H/{WINDOW}, H] "
          f">= 1/3 - {TOL_EXP}",
    horizon="200 x budget horizon steps", tolerance=f"W {TOL_W}, decoder {TOL_V}, exponent {TOL_EXP}",
)
