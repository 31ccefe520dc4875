"""Lemma 14 (core paper, Appendix D.2, linear label mixing; statement reconstructed, its formulas
are lost in the extraction): if the sets O_i and the head satisfy (85),

    gamma*_i - C q_i^p <= Y_i f_p(X_i) <= gamma*_i - c q_i^p,   0 < c <= C,   q_i^p = sum_{t not in O_i} s_it(p),

and -loss' lies in [m, M], m > 0, on the margin interval [min_i gamma*_i - C, max_i gamma*_i], then
Assumption D holds with the O_i, with (our reading of the proof's constants)

    Q_mu = (1/2) (m c / (n M C))^{(1 + mu)/mu}:

q^{p'} <= Q_mu and q^{p'} <= (q^p)^{1 + mu} give L(p') - L_* <= M C q^{p'} < (m c/n) q^p <= L(p) - L_*.

Instances: keyed datasets (Figure-1 construction) with integer keys and scores, heads
h(x) = phi(v^T x) (`checks.theorem8.head_loss`: Y h = phi(<s, gamma>)), O_i = the top-score
tokens (hypothesis `label_mixing`: then (85) holds for the composite loss loss o phi with
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

import numpy as np
import torch

from attnsvm.attention import losses, model
from attnsvm.attention.losses import LOSSES
from attnsvm.claims import Claim, Hypothesis, Instance, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.spaces import Space
from attnsvm.claims.strategies import keyed_dataset, sampled_from, seeds
from attnsvm.svm import generalized
from attnsvm.results.checks.theorem8 import HEADS, head_loss, sets_of, top_sets_given

MUS = (0.25, 1.0, 4.0)
RADII = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
RANDOM_DIRECTIONS = 8
GRID = 4097
Q_FLOOR = 1e-12


def _outside(ds, sets) -> np.ndarray:
    mask = np.ones((ds.n, ds.T), dtype=bool)
    for i, O in enumerate(sets):
        mask[i, list(O)] = False
    return mask


def mixing_state(K, gamma, out, gstar, p):
    """(log q_i, x_i) at p: log of the mass outside the sets and x_i = sum_{t not in O_i} s_t (gamma*_i - gamma_t)."""
    a = K @ p
    logs = a - np.logaddexp.reduce(a, axis=1, keepdims=True)
    logq = np.array([np.logaddexp.reduce(logs[i, out[i]]) for i in range(len(a))])
    x = np.array([np.sum(np.exp(logs[i, out[i]]) * (gstar[i] - gamma[i, out[i]])) for i in range(len(a))])
    return logq, x


def excess(loss, gstar, x) -> float:
    """L(p) - L_* = mean_i [loss(gamma*_i - x_i) - loss(gamma*_i)], without cancellation."""
    return float(losses.increment(loss, torch.as_tensor(gstar), torch.as_tensor(x)).mean())


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


def _scale_to(K, gamma, out, gstar, u, log_target) -> np.ndarray | None:
    """lambda u with log q just below log_target (bisection on lambda; None if q does not get there)."""
    hi = 1.0
    while mixing_state(K, gamma, out, gstar, hi * u)[0].max() > log_target:
        hi *= 2
        if hi > 1e6:
            return None
    lo = 0.0
    for _ in range(80):
        mid = (lo + hi) / 2
        if mixing_state(K, gamma, out, gstar, mid * u)[0].max() > log_target:
            lo = mid
        else:
            hi = mid
    return hi * u


def mixing_hurts(inst, budget) -> Outcome:
    ds, P = inst.dataset, inst.params
    sets = sets_of(inst)
    loss = head_loss(P["loss"], P["head"])
    K = model.keys(ds)
    gamma, out, gstar, c, C, m, M = constants(ds, sets, loss)
    mu = float(P["mu"])
    Q = q_mu(c, C, m, M, ds.n, mu)
    sol = generalized.att_svm_prime(ds, sets, convexity=False)
    if not (sol.certified and sol.feasible and sol.value2 > 0):
        return Outcome(None, reason="(ATT-SVM') for the sets is infeasible or trivial: no direction with q -> 0")
    U = sol.unit_solutions()
    rng = np.random.default_rng(P["seed"])
    dirs = list(rng.normal(size=(RANDOM_DIRECTIONS, ds.d))) + list(K.reshape(-1, ds.d)) + list(U)
    dirs = [u / np.linalg.norm(u) for u in dirs if np.linalg.norm(u) > 0]
    worst, pairs, fail = np.inf, 0, None
    for u in dirs:
        for r in RADII:
            p = r * u
            logq, x = mixing_state(K, gamma, out, gstar, p)
            target = min(np.log(Q), (1 + mu) * logq.max())
            Ep = excess(loss, gstar, x)
            for w in U:
                p2 = _scale_to(K, gamma, out, gstar, w, target)
                if p2 is None:
                    continue
                logq2, x2 = mixing_state(K, gamma, out, gstar, p2)
                if logq2.max() > target:
                    continue
                pairs += 1
                Ep2 = excess(loss, gstar, x2)
                rel = (Ep - Ep2) / Ep if Ep > 0 else (-np.inf if Ep2 >= Ep else np.inf)
                if rel < worst:
                    worst = rel
                if Ep2 >= Ep and fail is None:
                    fail = {"p": p.tolist(), "p_prime": p2.tolist(), "q": float(np.exp(logq.max())),
                            "q_prime": float(np.exp(logq2.max())), "excess_p": Ep, "excess_p_prime": Ep2}
    detail = {"c": c, "C": C, "m": m, "M": M, "mu": mu, "Q_mu": Q, "pairs": pairs,
              "least_relative_gap": None if not np.isfinite(worst) else float(worst)}
    if fail is not None:
        return Outcome(False, detail={**detail, "failing_pair": fail}, margin=-1.0)
    if pairs == 0:
        return Outcome(None, detail=detail, reason="no pair met the premise")
    return Outcome(True, detail=detail, margin=float(min(worst, 1.0)))


def _instances(dropped):
    """Keyed datasets n 1..2, T 2..3, keys in [-2, 2]^2, scores in [-1, 1]; sets = top-score tokens, or
    (label_mixing dropped) one input's set changed by one token."""
    def generate(c) -> Instance:
        nn, TT = c.integer(1, 2, "size"), c.integer(2, 3, "size")
        keys = [[[c.integer(-2, 2, "entry") for _ in range(2)] for _ in range(TT)] for _ in range(nn)]
        scores = [[c.integer(-1, 1, "entry") for _ in range(TT)] for _ in range(nn)]
        labels = [c.sampled_from([1, -1]) for _ in range(nn)]
        ds = keyed_dataset(keys, scores, labels, name="keyed")
        sets = [list(O) for O in generalized.top_sets(ds)]
        if "label_mixing" in dropped:
            i, t = c.integer(0, nn - 1, "index"), c.integer(0, TT - 1, "index")
            sets[i] = sorted(set(sets[i]) ^ {t})
            if not sets[i] or len(sets[i]) == TT:
                c.reject()
        return Instance(ds, {"loss": c.sampled_from(sorted(LOSSES)), "head": c.sampled_from(list(HEADS)),
                             "mu": c.sampled_from(list(MUS)), "seed": c.integer(0, 2**16, "seed"), "sets": sets})

    specs = {"loss": sampled_from(sorted(LOSSES)), "head": sampled_from(list(HEADS)), "mu": sampled_from(list(MUS)),
             "seed": seeds(), "sets": Space(lambda c: None, "optimal sets O_i (lists of token indices)")}
    return Space(generate, "keyed datasets n 1..2, T 2..3, keys in [-2, 2]^2, scores in [-1, 1]; heads phi(v^T x); "
                           "sets = top-score tokens", params=specs)


def _some_outside(inst) -> bool:
    sol = generalized.att_svm_prime(inst.dataset, sets_of(inst), convexity=False)
    return sol.certified and sol.feasible and sol.value2 > 0


claim = Claim(
    name="lemma14",
    evaluations=22,
    statement="linear label mixing (85) with c > 0 and -loss' >= m > 0 on the margin interval => Assumption D with "
              "Q_mu = (1/2)(m c/(n M C))^{(1+mu)/mu}",
    hypotheses=(
        hyp.get("loss.assumption_A"),
        Hypothesis("label_mixing", "(85) with c > 0: O_i = the top-score tokens (exact), so each token outside O_i "
                                   "lowers the margin by at least c = its score gap > 0", top_sets_given),
        Hypothesis("prime_feasible", "(ATT-SVM') for the sets is feasible with Xi > 0 (a direction along which q -> 0)",
                   _some_outside),
    ),
    conclusion=mixing_hurts,
    instances=_instances,
    measures=("least_relative_gap", "pairs", "Q_mu"),
    proxy="pairs (p, p'): p = r u (random, key and (ATT-SVM') directions u, r in 1/2..16), p' = lambda u' on an "
          "(ATT-SVM') direction with q^{p'} just below min(Q_mu, (q^p)^{1+mu}); holds when L(p') < L(p) on every pair "
          "(excess risks without cancellation)",
)
