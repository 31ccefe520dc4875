"""Lemma 7 (local gradient condition, Appendix B.1, (31)-(50)) for a locally optimal alpha
(Definition 2, decided exactly), p_mm = p_mm(alpha), with s_i = S(K_i p)_{alpha_i},
A_bar = max_{i,t,tau} ||k_it - k_itau||, Gamma = max_{i,t,tau} |gamma_it - gamma_itau|:

- L1: no stationary point in C_{mu,R}(p_mm) for R large;
- L2: for p in C_{mu,R}(p_mm) and q in cone_mu(p_mm) with ||q|| = ||p_mm||
  (31a) C max_i (1 - s_i) >= -<grad L(p), q> >= c min_i (1 - s_i) > 0,
  (31b) the case q = ||p_mm|| p/||p||: -<grad L(p), p/||p||> >= (c/||p_mm||) min_i (1 - s_i),
  (31c) ||grad L(p)|| <= M1 Gamma A_bar max_i (1 - s_i), so C = M1 Gamma A_bar ||p_mm||;
- L3: for every pi > 0 and R large, <-grad L(p), p/||p||> <= (1 + pi) <-grad L(p), p_mm/||p_mm||>.

The constants are our reconstruction (lost in the text; lemmas/lemma7.py): nu = the smallest
non-neighbour slack min (k_{i,alpha_i} - k_it)^T p_mm - 1 (capped at 1; (32)), mu such that
eps = A_bar ||p_mm|| sqrt(2 mu) = min(nu, 1)/4 (every neighbour row keeps value in [1 - eps, 1 + eps]
and every other row above 1 + nu - eps over the cone, (33)), delta = the exact score gap over the
SVM-neighbours, c = l_min delta (1 - eps)/(4 n), l_min and M1 the min and max of -loss' on
[min gamma, max gamma] (where every margin Y_i f_i lies).

Proxy (R large is not given): a ladder of R = 2^(k+2) ||p_mm|| / min(nu, 1), k = 0..4; on each rung
`points` seeded cone points at norms R, 2R, 4R, 8R, each with q = p_mm, q = ||p_mm|| p/||p|| and a
seeded q of the cone. All comparisons are made in the log domain from the log-domain gradient
(`Grad.log_norm`, `Grad.direction`) and log(1 - s_i) = logsumexp_{t != alpha_i} - logsumexp, so
saturation does not round them away; a point whose gradient the engine marks untrusted is
skipped. A rung passes when (31a)-(31c) hold at every point and L3 holds with pi = PI_TOL at the
top band (each side within a relative REL = 1e-9 of rounding: the
upper bounds are attained as s_i -> 1). "For R large" means for every larger R too: the lemma
holds when the top TAIL = 2 rungs pass and fails when the top rung fails (a lower rung passing
proves nothing: the better neighbour of a non-locally-optimal alpha may only show at larger R)."""

import math

import numpy as np
import torch

from attnsvm.attention import model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims import points as pts
from attnsvm.claims.selections import with_alpha
from attnsvm.claims.strategies import instances, integers, keyed_datasets, sampled_from, seeds
from attnsvm.svm import geometry

RUNGS = 5
TAIL = 2              # 'for all R >= R_bar': the conditions must hold on the top TAIL rungs
BANDS = (1.0, 2.0, 4.0, 8.0)
PI_TOL = 0.05
REL = 1e-9             # relative (log-domain) rounding allowance: (31a)'s upper side and (31c) are tight as s_i -> 1


def constants(ds, sel, loss: str) -> dict:
    """nu, eps, mu, delta, A_bar, Gamma, l_min, M1, c and C of the reconstruction (module docstring)."""
    q = sel.p_mm
    A, tags = sel.result.problem.A, sel.result.problem.tags
    nb = {(i, t) for i, ts in enumerate(sel.neighbors) for t in ts}
    slack = [float(A[j] @ q) - 1 for j, tag in enumerate(tags) if tuple(tag) not in nb]
    nu = min([1.0] + slack)
    K, g = model.keys(ds), model.scores(ds)
    A_bar = max(float(np.linalg.norm(K[i][:, None, :] - K[i][None, :, :], axis=-1).max()) for i in range(ds.n))
    Gamma = float((g.max(axis=1) - g.min(axis=1)).max())
    nq = float(np.linalg.norm(q))
    eps = min(nu, 1.0) / 4
    mu = (eps / (A_bar * nq)) ** 2 / 2
    dloss = LOSSES[loss].deriv
    ends = -dloss(torch.tensor([float(g.min()), float(g.max())], dtype=torch.float64)).numpy()
    l_min, M1 = float(ends.min()), float(ends.max())            # |loss'| is monotone for the library losses
    delta = float(sel.gap)
    return {"nu": nu, "eps": eps, "mu": mu, "delta": delta, "A_bar": A_bar, "Gamma": Gamma, "l_min": l_min, "M1": M1,
            "c": l_min * delta * (1 - eps) / (4 * ds.n), "C": M1 * Gamma * A_bar * nq, "norm_p_mm": nq}


def _log(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


def log_unselected(ds, alpha, P) -> np.ndarray:
    """log(1 - s_i) = logsumexp_{t != alpha_i} a_it - logsumexp_t a_it, a_i = K_i p: shape (points, n)."""
    K = model.keys(ds)
    a = np.einsum("itd,bd->bit", K, P)
    mask = np.zeros(a.shape[1:], dtype=bool)
    mask[np.arange(ds.n), list(alpha)] = True
    return np.logaddexp.reduce(np.where(mask, -np.inf, a), axis=-1) - np.logaddexp.reduce(a, axis=-1)


def ladder(ds, sel, k: dict, rng, count: int) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """The cone points of every rung (R_r = 2^(r+2) ||p_mm||/min(nu, 1)), `count` per band of norms
    R x BANDS, rung by rung, and a seeded q of the cone (norm ||p_mm||) for each: (P, Qr, radii)."""
    q, nq = sel.p_mm, k["norm_p_mm"]
    radii = [2.0 ** (r + 2) * nq / min(k["nu"], 1.0) for r in range(RUNGS)]
    norms = np.repeat([R * b for R in radii for b in BANDS], count)
    P = pts.cone(q, k["mu"], norms, rng, len(norms))
    Qr = pts.cone(q, k["mu"], 1.0, rng, len(norms))
    return P, Qr * (nq / np.linalg.norm(Qr, axis=1, keepdims=True)), radii


def point_slacks(ds, sel, k, P, Qr, direc, log_norm, points) -> tuple[dict, np.ndarray, dict]:
    """(31a)-(31c) at every cone point P (rung by rung: norms R x BANDS, `points` per band) and L3 at
    each rung's top band: slacks per point (> 0 holds), which points are trusted, and per-point
    extras for the report, from the log-domain gradient (unit direction, log-norm) there."""
    q = sel.p_mm
    nq = k["norm_p_mm"]
    zero = np.isneginf(log_norm)                              # grad L(p) = 0 exactly: a stationary point
    trusted = (np.linalg.norm(direc, axis=1) > 0.5) | zero
    lu = log_unselected(ds, sel.alpha, P)
    lo, hi = lu.min(axis=1), lu.max(axis=1)
    Phat = P / np.linalg.norm(P, axis=1, keepdims=True)
    low, up = [], []
    for Q in (np.broadcast_to(q, P.shape), nq * Phat, Qr):     # q = p_mm, ||p_mm|| p^, a seeded q of the cone
        c_neg = -np.einsum("bd,bd->b", direc, Q)                  # -<grad, Q> / ||grad|| (0 at a stationary point)
        pos = c_neg > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            log_val = log_norm + np.log(np.where(pos, c_neg, 1.0))
            lower = np.where(pos, log_val - (_log(k["c"]) + lo), c_neg - 1.0)
            up.append(np.where(pos, (_log(k["C"]) + hi) - log_val, 1.0))
        low.append(np.minimum(lower, 1.0))
    with np.errstate(invalid="ignore"):
        norm_slack = np.where(zero, np.inf, (_log(k["M1"] * k["Gamma"] * k["A_bar"]) + hi) - log_norm)
    c_mm = -(direc @ (q / nq))
    c_p = -np.einsum("bd,bd->b", direc, Phat)
    top = np.arange(len(P)) % (points * len(BANDS)) >= (len(BANDS) - 1) * points
    rho = np.where(c_mm > 0, c_p / np.where(c_mm > 0, c_mm, 1.0), np.inf)
    l3 = np.where(top, np.where(c_mm > 0, 1 + PI_TOL - rho, (1 + PI_TOL) * c_mm - c_p), np.inf)
    slacks = {"31a_lower": np.min(low, axis=0), "31a_upper": np.min(up, axis=0), "31c": norm_slack, "L3": l3}
    with np.errstate(invalid="ignore"):
        c_hat = np.where(trusted & (c_mm > 0), log_norm + np.log(np.where(c_mm > 0, c_mm, 1.0)) + math.log(nq) - lo,
                         np.inf)
    extras = {"log_c_hat": c_hat, "rho_top": np.where(trusted & top & np.isfinite(rho), rho, -np.inf)}
    return slacks, trusted, extras


def rung_summary(P, slacks: dict, trusted: np.ndarray, extras: dict) -> dict:
    """One rung's least slacks (trusted points only), its worst point and report figures."""
    out = {name: float(np.min(np.where(trusted, v, np.inf))) for name, v in slacks.items()}
    out["untrusted"] = int((~trusted).sum())
    t_idx = np.flatnonzero(trusted)
    if len(t_idx):
        worst = t_idx[int(np.argmin(np.min([v[t_idx] for v in slacks.values()], axis=0)))]
        out["worst_point"] = P[worst].tolist()
        out["log_c_hat"] = float(extras["log_c_hat"].min())       # log of the smallest -<grad, p_mm>/min_i(1 - s_i)
        out["max_rho_top"] = float(extras["rho_top"].max())
    out["slack"] = min(v for key, v in out.items() if key in slacks)
    return out


def judge(ds, alpha, sel, k, P, Qr, radii, grad, points) -> Outcome:
    """The rungs' slacks, then the verdict on the top TAIL rungs."""
    slacks, trusted, extras = point_slacks(ds, sel, k, P, Qr, grad.direction, grad.log_norm, points)
    per = points * len(BANDS)
    rungs = []
    for r, R in enumerate(radii):
        part = slice(r * per, (r + 1) * per)
        rung = rung_summary(P[part], {n: v[part] for n, v in slacks.items()}, trusted[part],
                            {n: v[part] for n, v in extras.items()})
        rung["R_over_norm_p_mm"] = R / k["norm_p_mm"]
        rung["passes"] = bool(math.isfinite(rung["slack"]) and rung["slack"] >= -REL)
        rungs.append(rung)
    detail = {"alpha": list(alpha), "constants": k, "rungs": rungs, "log_c_hat": rungs[-1].get("log_c_hat")}
    tail = rungs[-TAIL:]
    if not any(math.isfinite(r["slack"]) for r in tail):
        return Outcome(None, detail=detail, reason="every cone point's gradient untrusted on the top rungs")
    margin = min(r["slack"] for r in tail) + REL
    if all(r["passes"] for r in tail):
        return Outcome(True, detail=detail, margin=min(margin, 1.0))
    if not tail[-1]["passes"] and math.isfinite(tail[-1]["slack"]):
        return Outcome(False, detail=detail, margin=min(margin, 0.0))
    return Outcome(None, detail=detail, reason="the top rung passes but the one below fails: R not yet large enough")


@batched
def local_gradient_condition(insts, budget) -> list[Outcome]:
    sels = [geometry.select(inst.dataset, inst.params["alpha"]) for inst in insts]
    consts = [constants(inst.dataset, sel, inst.params["loss"]) for inst, sel in zip(insts, sels)]
    counts = [int(inst.params["points"] * budget.horizon) for inst in insts]
    ladders = [ladder(inst.dataset, sel, k, np.random.default_rng(inst.params["seed"]), m)
               for inst, sel, k, m in zip(insts, sels, consts, counts)]
    grads = pts.gradients(insts, [P for P, _, _ in ladders], [inst.params["loss"] for inst in insts])
    return [judge(inst.dataset, inst.params["alpha"], sel, k, P, Qr, radii, g, m)
            for inst, sel, k, (P, Qr, radii), g, m in zip(insts, sels, consts, ladders, grads, counts)]


claim = Claim(
    name="lemma7",
    evaluations=1000,
    statement="Assumption A, alpha locally optimal: on C_{mu,R}(p_mm) (R large) no stationary point (L1), "
              "C max_i(1 - s_i) >= -<grad L(p), q> >= c min_i(1 - s_i) > 0 for q in cone_mu, ||q|| = ||p_mm|| (31a, "
              "31b), ||grad L(p)|| <= M1 Gamma A_bar max_i(1 - s_i) (31c), and <-grad L, p^> <= (1 + pi) "
              "<-grad L, p_mm^> (L3)",
    hypotheses=hyp.of("lemma7"),
    conclusion=local_gradient_condition,
    instances=lambda dropped: with_alpha(instances(keyed_datasets(n=(1, 2), T=(2, 3), dk=2, labels="positive"),
                                                   loss=sampled_from(sorted(LOSSES)), seed=seeds(), pick=integers(0, 3),
                                                   points=8)),
    proxy=f"ladder of {RUNGS} radii R = 2^(k+2) ||p_mm||/min(nu, 1), mu from nu (module docstring); at `points` x "
          f"horizon seeded cone points per band of norms R x {list(BANDS)}, three q each, (31a)-(31c) with the "
          f"reconstructed constants in the log domain, L3 with pi = {PI_TOL} at the top band; holds if the top {TAIL} "
          "rungs pass everywhere, fails if the top rung fails",
    horizon=f"points x horizon per band, {RUNGS} rungs",
    tolerance=f"pi = {PI_TOL} (L3)",
    measures=("log_c_hat",),
    tolerances={"pi": PI_TOL, "relative_rounding": REL},
)
