"""Lemma 14 (core paper, Appendix D.2, linear label mixing; statement reconstructed, its formulas
are lost in the extraction): if the sets O_i and the head satisfy (85),

    gamma*_i - C q_i^p <= Y_i f_p(X_i) <= gamma*_i - c q_i^p,   0 < c <= C,   q_i^p = sum_{t not in O_i} s_it(p),

and -loss' lies in [m, M], m > 0, on the margin interval [min_i gamma*_i - C, max_i gamma*_i], then
Assumption D holds with the O_i, with (our reading of the proof's constants)

    Q_mu = (1/2) (m c / (n M C))^{(1 + mu)/mu}:

q^{p'} <= Q_mu and q^{p'} <= (q^p)^{1 + mu} give L(p') - L_* <= M C q^{p'} < (m c/n) q^p <= L(p) - L_*.

Instances: keyed datasets (Figure-1 construction) with integer keys and scores, heads
h(x) = phi(v^T x) (`svm.generalized.head_loss`: Y h = phi(<s, gamma>)), O_i = the top-score
tokens (hypothesis `prime.label_mixing`: then (85) holds for the composite loss loss o phi with
c = the smallest and C = the largest score gap to the tokens outside O_i). m and M are read on a
4097-point grid of the interval (m halved for the grid's error); if c <= 0 (hypothesis dropped)
the formula gives no Q_mu and Q = 1e-12 is used: a failing pair there shows that no Q_mu >= 1e-12
works for that mu.

Proxy: points p = r u for seeded random unit u, the unit keys k_it and the (ATT-SVM') directions,
r in {1/2, 1, 2, 4, 8, 16}; for each p and each direction u' of the (ATT-SVM') solution set (along
which q -> 0), p' = lambda u' with lambda found by bisection so that q^{p'} is just below
min(Q_mu, (q^p)^{1 + mu}) (the hardest allowed p'). Excess risks L - L_* (L_* = mean loss(phi(gamma*)))
are computed without cancellation (`losses.increment`). Holds when L(p') < L(p) on every pair
meeting the premise; margin = min (L(p) - L(p'))/(L(p) - L_*)."""

from collections.abc import Callable

import numpy as np
import torch

from attnsvm.attention import losses, model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Instance, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.hypotheses.prime import sets_of
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import keyed_dataset, sampled_from, seeds
from attnsvm.svm import generalized
from attnsvm.svm.generalized import HEADS, head_loss

MUS = (0.25, 1.0, 4.0)
RADII = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
RANDOM_DIRECTIONS = 8
GRID = 4097
Q_FLOOR = 1e-12
BISECTIONS = 50         # halvings of the scale lambda of p' (from [0, 2^j], 2^j the first power of 2 that gets there)
MAX_SCALE = 1e6         # a direction that needs lambda above this does not get there


def _outside(ds, sets) -> np.ndarray:
    mask = np.ones((ds.n, ds.T), dtype=bool)
    for i, O in enumerate(sets):
        mask[i, list(O)] = False
    return mask


def _logsumexp(a: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """log sum_t exp(a_t) over the last axis (over the tokens where `mask`, -inf where none)."""
    if mask is not None:
        a = np.where(mask, a, -np.inf)
    m = a.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return np.log(np.exp(a - m).sum(-1)) + m[..., 0]          # log 0 = -inf where no token counts


def mixing_state(K, gamma, out, gstar, P):
    """(log q, x) at points P (M, d), each (M, n): log of the mass outside the sets and
    x_i = sum_{t not in O_i} s_t (gamma*_i - gamma_t)."""
    a = np.einsum("itd,md->mit", K, P)
    logs = a - _logsumexp(a)[..., None]
    logq = _logsumexp(logs, out[None])
    x = np.sum(np.where(out[None], np.exp(logs) * (gstar[:, None] - gamma)[None], 0.0), axis=2)
    return logq, x


def excess(loss, gstar, x) -> np.ndarray:
    """L(p) - L_* = mean_i [loss(gamma*_i - x_i) - loss(gamma*_i)] per row of x (M, n), without cancellation."""
    g = torch.as_tensor(np.broadcast_to(gstar, x.shape).copy())
    return losses.increment(loss, g, torch.as_tensor(x)).mean(-1).numpy()


def constants(ds, sets, loss):
    gamma = model.scores(ds)
    out = _outside(ds, sets)
    gstar = np.array([gamma[i, O[0]] for i, O in enumerate(sets)])
    gaps = (gstar[:, None] - gamma)[out]
    c, C = float(gaps.min()), float(gaps.max())
    u = torch.linspace(float(gstar.min() - max(C, 0.0)), float(gstar.max()), GRID, dtype=torch.float64)
    slope = -loss.deriv(u)
    m, M = float(slope.min()) / 2, float(slope.max())
    return gamma, out, gstar, c, C, m, M


def q_mu(c, C, m, M, n, mu) -> float:
    if c <= 0 or m <= 0:
        return Q_FLOOR
    return 0.5 * (m * c / (n * M * C)) ** ((1 + mu) / mu)


def scale_to(K, gamma, out, gstar, W: np.ndarray, log_target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row j: lambda W_j with max_i log q just below log_target[j] (bisection on lambda from
    [0, 2^k], 2^k the first power of two that gets there; NaN rows where no lambda <= MAX_SCALE
    does), and that max_i log q (inf where none)."""
    A = np.einsum("itd,md->mit", K, W)                                   # logits along each W_j, per unit lambda
    top = lambda lam: (_logsumexp(lam[:, None, None] * A, out[None]) - _logsumexp(lam[:, None, None] * A)).max(-1)
    hi = np.ones(len(W))
    live = top(hi) > log_target
    while live.any():
        hi = np.where(live, 2 * hi, hi)
        live = live & (hi <= MAX_SCALE)
        live &= top(hi) > log_target
    lo = np.zeros(len(W))
    for _ in range(BISECTIONS):
        mid = (lo + hi) / 2
        above = top(mid) > log_target
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return np.where((hi <= MAX_SCALE)[:, None], hi[:, None] * W, np.nan), np.where(hi <= MAX_SCALE, top(hi), np.inf)


def mixing_hurts_one(inst) -> Outcome:
    ds, P = inst.dataset, inst.params
    sets = sets_of(inst)
    loss = head_loss(P["loss"], P["head"])
    K = model.keys(ds)
    gamma, out, gstar, c, C, m, M = constants(ds, sets, loss)
    mu = float(P["mu"])
    Q = q_mu(c, C, m, M, ds.n, mu)
    U = generalized.solution(ds, sets).unit_solutions()
    rng = np.random.default_rng(P["seed"])
    dirs = list(rng.normal(size=(RANDOM_DIRECTIONS, ds.d))) + list(K.reshape(-1, ds.d)) + list(U)
    dirs = np.array([u / np.linalg.norm(u) for u in dirs if np.linalg.norm(u) > 0])
    Pts = (np.array(RADII)[None, :, None] * dirs[:, None, :]).reshape(-1, ds.d)          # p = r u, (D x radii, d)
    logq, x = mixing_state(K, gamma, out, gstar, Pts)
    target = np.minimum(np.log(Q), (1 + mu) * logq.max(-1))
    Ep = excess(loss, gstar, x)
    # every pair (p, w): p' = lambda w with q^{p'} just below p's target
    pi = np.repeat(np.arange(len(Pts)), len(U))
    W = np.tile(U, (len(Pts), 1))
    P2, top2 = scale_to(K, gamma, out, gstar, W, target[pi])
    found = ~np.isnan(P2).any(-1)
    _, x2 = mixing_state(K, gamma, out, gstar, np.where(found[:, None], P2, 0.0))
    meets = found & (top2 <= target[pi])
    Ep2 = excess(loss, gstar, x2)
    pairs = int(meets.sum())
    rel = np.where(Ep[pi] > 0, (Ep[pi] - Ep2) / Ep[pi], np.where(Ep2 >= Ep[pi], -np.inf, np.inf))
    worst = float(rel[meets].min()) if pairs else np.inf
    detail = {"c": c, "C": C, "m": m, "M": M, "mu": mu, "Q_mu": Q, "pairs": pairs,
              "least_relative_gap": None if not np.isfinite(worst) else worst}
    fails = np.nonzero(meets & (Ep2 >= Ep[pi]))[0]
    if len(fails):
        j = fails[0]
        fail = {"p": Pts[pi[j]].tolist(), "p_prime": P2[j].tolist(), "q": float(np.exp(logq[pi[j]].max())),
                "q_prime": float(np.exp(top2[j])), "excess_p": float(Ep[pi[j]]), "excess_p_prime": float(Ep2[j])}
        return Outcome(False, detail={**detail, "failing_pair": fail}, margin=-1.0)
    if pairs == 0:
        return Outcome(None, detail=detail, reason="no pair met the premise")
    return Outcome(True, detail=detail, margin=float(min(worst, 1.0)))


@batched
def mixing_hurts(insts, budget) -> list[Outcome]:
    with np.errstate(divide="ignore", invalid="ignore"):
        return [mixing_hurts_one(inst) for inst in insts]


def mixing_instances(change: Callable | None = None) -> Space:
    """Keyed datasets n 1..2, T 2..3, keys in [-2, 2]^2, scores in [-1, 1]; heads phi(v^T x), a loss, mu;
    sets = the top-score tokens, or `change(chooser, sets, T)`'s sets (a necessity search's)."""
    def generate(c) -> Instance:
        nn, TT = c.integer(1, 2, "size"), c.integer(2, 3, "size")
        keys = [[[c.integer(-2, 2, "entry") for _ in range(2)] for _ in range(TT)] for _ in range(nn)]
        scores = [[c.integer(-1, 1, "entry") for _ in range(TT)] for _ in range(nn)]
        labels = [c.sampled_from([1, -1]) for _ in range(nn)]
        ds = keyed_dataset(keys, scores, labels, name="keyed")
        sets = [list(O) for O in generalized.top_sets(ds)]
        if change is not None:
            sets = change(c, sets, TT)
        return Instance(ds, {"loss": c.sampled_from(sorted(LOSSES)), "head": c.sampled_from(list(HEADS)),
                             "mu": c.sampled_from(list(MUS)), "seed": c.integer(0, 2**16, "seed"), "sets": sets})

    specs = {"loss": sampled_from(sorted(LOSSES)), "head": sampled_from(list(HEADS)), "mu": sampled_from(list(MUS)),
             "seed": seeds(), "sets": Space(lambda c: None, "optimal sets O_i (lists of token indices)")}
    return Space(generate, "keyed datasets n 1..2, T 2..3, keys in [-2, 2]^2, scores in [-1, 1]; heads phi(v^T x); "
                           "sets = top-score tokens", params=specs)


claim = Claim(
    name="lemma14",
    evaluations=1000,
    statement="linear label mixing (85) with c > 0 and -loss' >= m > 0 on the margin interval => Assumption D with "
              "Q_mu = (1/2)(m c/(n M C))^{(1+mu)/mu}",
    hypotheses=hyp.of("lemma14"),
    conclusion=mixing_hurts,
    instances=lambda dropped: mixing_instances(),
    measures=("least_relative_gap", "pairs", "Q_mu"),
    proxy=f"pairs (p, p'): p = r u ({RANDOM_DIRECTIONS} random, key and (ATT-SVM') directions u, r in {list(RADII)}), "
          f"p' = lambda u' on an (ATT-SVM') direction with q^{{p'}} just below min(Q_mu, (q^p)^{{1+mu}}) ({BISECTIONS} "
          "bisections); holds when L(p') < L(p) on every pair (excess risks without cancellation)",
    tolerances={"q_floor": Q_FLOOR, "bisections": BISECTIONS, "max_scale": MAX_SCALE, "derivative_grid": GRID},
)
