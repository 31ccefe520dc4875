"""Lemma 6: under Assumption A the risk is L_p-smooth (our reconstructed constant,
`attnsvm.dynamics.smoothness`, spectral norms, (M0, M1) from the loss's `constants` on the margin
interval [min gamma, max gamma]) and GD with eta <= 1/L_p obeys the descent inequality.

Per instance (random integer data, any labels, integer W, a loss of Assumption A):

- smoothness: a targeted search for the largest Lipschitz ratio ||grad L(p) - grad L(q)|| /
  ||p - q||: `CANDIDATES` seeded centres p (random directions, ||p|| log-uniform in
  [1e-2, 1e1]), secant pairs p +- h u; the best centres get power iterations on u (the top
  Hessian direction) and a shrinking random hill-climb on p. It holds when the largest
  ratio found is <= L_p. A secant ratio's rounding error is ~ eps ||grad|| / h, far below the
  margin it is compared with.
- descent: `STARTS` seeded GD runs with eta = eta_factor / L_p for STEPS x horizon steps,
  every step recorded; holds when L(p_{t+1}) <= L(p_t) - (eta/2)||grad L(p_t)||^2 + tol_t with
  tol_t = 4 eps (T M1 G + |L(p_t)| + |L(p_{t+1})|), G = max |gamma|: a bound on the rounding
  of the two risk evaluations (the margin <s, gamma> is a T-term sum of values <= G, the loss
  is M1-Lipschitz on the margin interval, each evaluation adds relative eps). Steps whose
  float64 update left p unchanged (step below the resolution of p) are not GD steps and are
  skipped; none left: undecided.

Risks and gradients of all instances of a batch (any shapes and losses) are evaluated together
(`smoothness.PaddedRisk`), every instance with its own seeded draws, in the order the search
makes them.
"""

import numpy as np

from attnsvm.attention import model
from attnsvm.attention.losses import get_loss
from attnsvm.claims import Claim, Outcome, batched
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import instances, integer_datasets, sampled_from, seeds
from attnsvm.dynamics.smoothness import PaddedRisk, margin_interval, moving, smoothness_constant
from attnsvm.numerics import EPS

CANDIDATES = 128
KEEP = 8
ROUNDS = 6
STARTS = 4
STEPS = 64
ROUNDING = 4            # descent tolerance, in units of eps (T M1 G + |L_t| + |L_t+1|)


def _unit(x):
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, n, out=np.zeros_like(x), where=n > 0)


def _pad(x: np.ndarray, D: int) -> np.ndarray:
    return np.concatenate([x, np.zeros(x.shape[:-1] + (D - x.shape[-1],))], axis=-1)


def draws(insts, rounds: int, D: int) -> dict:
    """Each instance's seeded draws, in the order the search uses them: centres, directions, the
    hill-climb's noise per round, the GD starts (padded to D coordinates)."""
    out = {"C": [], "U": [], "noise": [], "starts": []}
    for inst in insts:
        rng, d = np.random.default_rng(inst.params["seed"]), inst.dataset.d
        centres = _unit(rng.normal(size=(CANDIDATES, d))) * 10.0 ** rng.uniform(-2, 1, size=(CANDIDATES, 1))
        out["C"].append(_pad(centres, D))
        out["U"].append(_pad(_unit(rng.normal(size=(CANDIDATES, d))), D))
        out["noise"].append(np.stack([_pad(rng.normal(size=(KEEP, d)), D) for _ in range(rounds)]))
        out["starts"].append(_pad(rng.normal(size=(STARTS, d)) * 10.0 ** rng.uniform(-1, 1, size=(STARTS, 1)), D))
    return {k: np.stack(v) for k, v in out.items()}


def lipschitz_search(risk: PaddedRisk, C, U, noise) -> tuple[np.ndarray, np.ndarray]:
    """Largest secant ratio ||grad L(p+hu) - grad L(p-hu)|| / (2h) found per instance, and its centre."""
    def ratios(C, U):
        h = 1e-4 * (1 + np.linalg.norm(C, axis=-1, keepdims=True))
        _, G = risk.value_grad(np.concatenate([C + h * U, C - h * U], axis=1))
        M = C.shape[1]
        diff = (G[:, :M] - G[:, M:]) / (2 * h)
        return np.linalg.norm(diff, axis=-1), diff

    B = len(C)
    r, _ = ratios(C, U)
    top = np.argsort(r, axis=1)[:, -KEEP:]
    C, U, r = (np.take_along_axis(x, top[..., None], 1) for x in (C, U, r[..., None]))
    r = r[..., 0]
    at = r.argmax(1)
    best, where = r[np.arange(B), at], C[np.arange(B), at]
    sigma = 0.3 * (1 + np.linalg.norm(C, axis=-1, keepdims=True))
    for k in range(noise.shape[1]):
        r, HU = ratios(C, U)                      # power iteration: u <- H u / ||H u||
        U = np.where((r > 0)[..., None], _unit(HU), U)
        cand = C + sigma * noise[:, k]
        rc, _ = ratios(cand, U)
        better = rc > r
        C, r = np.where(better[..., None], cand, C), np.where(better, rc, r)
        sigma = np.where(better[..., None], sigma, sigma / 2)
        at = r.argmax(1)
        up = r[np.arange(B), at] > best
        best = np.where(up, r[np.arange(B), at], best)
        where = np.where(up[:, None], C[np.arange(B), at], where)
    return best, where


def descent(risk: PaddedRisk, starts: np.ndarray, eta: np.ndarray, steps: int) -> tuple[np.ndarray, ...]:
    """GD runs from `starts` (B, S, D) with per-instance steps eta: risks L (B, S, steps+1), squared
    gradient norms (B, S, steps) and whether each float64 step moved p (B, S, steps)."""
    p = starts
    L, g2, moved = [], [], []
    for t in range(steps + 1):
        value, g = risk.value_grad(p)
        L.append(value)
        if t == steps:
            break
        g2.append((g * g).sum(-1))
        q = p - eta[:, None, None] * g
        moved.append((q != p).any(-1))
        p = q
    return np.stack(L, -1), np.stack(g2, -1), np.stack(moved, -1)


def descent_report(ds, loss: str, L: np.ndarray, g2: np.ndarray, moved: np.ndarray, eta: float) -> dict:
    """The descent inequality's largest violation over one instance's runs (`descent`'s arrays for
    it), beyond the rounding tolerance tol_t (<= 0: holds), and where it occurs."""
    M1 = get_loss(loss).constants(*margin_interval(ds))[1]
    G = float(np.abs(model.scores(ds)).max())
    tol = ROUNDING * EPS * (ds.T * M1 * G + np.abs(L[:, :-1]) + np.abs(L[:, 1:]))
    excess = np.where(moved, L[:, 1:] - L[:, :-1] + 0.5 * eta * g2 - tol, -np.inf)
    s, t = np.unravel_index(np.argmax(excess), excess.shape)
    return {"max_violation": float(excess[s, t]), "at_step": int(t), "start": int(s),
            "tolerance_there": float(tol[s, t]),
            "decrease_there": float(L[s, t] - L[s, t + 1]), "required_there": float(0.5 * eta * g2[s, t]),
            "runs": L.shape[0], "steps": g2.shape[1], "steps_checked": int(moved.sum())}


@batched
def smooth_and_descends(insts, budget) -> list[Outcome]:
    rounds, steps = int(ROUNDS * budget.horizon), int(STEPS * budget.horizon)
    risk = PaddedRisk([inst.dataset for inst in insts], [inst.params["loss"] for inst in insts])
    drawn = draws(insts, rounds, risk.dim)
    Lp = np.array([smoothness_constant(inst.dataset, inst.params["loss"]) for inst in insts])
    ratio, where = lipschitz_search(risk, drawn["C"], drawn["U"], drawn["noise"])
    eta = np.array([inst.params["eta_factor"] for inst in insts]) / np.where(Lp > 0, Lp, 1.0)
    L, g2, moved = descent(risk, drawn["starts"], eta, steps)
    outs = []
    for b, inst in enumerate(insts):
        ds = inst.dataset
        if Lp[b] == 0:
            outs.append(Outcome(None, reason="L_p = 0: the risk is constant (all scores equal)"))
            continue
        desc = descent_report(ds, inst.params["loss"], L[b], g2[b], moved[b], eta[b])
        detail = {"L_p": float(Lp[b]), "max_ratio": float(ratio[b]), "ratio_over_L_p": float(ratio[b] / Lp[b]),
                  "ratio_at": where[b, :ds.d].tolist(), "eta": float(eta[b]), "descent": desc,
                  "max_descent_violation": desc["max_violation"]}
        if not (np.isfinite(L[b]).all() and np.isfinite(g2[b]).all()):
            outs.append(Outcome(None, detail=detail, reason="a risk or gradient along a GD run is not finite"))
        elif desc["steps_checked"] == 0:
            outs.append(Outcome(None, detail=detail,
                                reason="no GD step moved p in float64 (step below the resolution of p)"))
        else:
            outs.append(Outcome(bool(ratio[b] <= Lp[b] and desc["max_violation"] <= 0), detail=detail))
    return outs


claim = Claim(
    name="lemma6",
    evaluations=1200,
    statement="Assumption A => L is L_p-smooth (reconstructed L_p) and GD with eta <= 1/L_p has "
              "L(p_{t+1}) <= L(p_t) - (eta/2)||grad L(p_t)||^2",
    hypotheses=hyp.of("lemma6"),
    conclusion=smooth_and_descends,
    instances=lambda dropped: instances(integer_datasets(n=(1, 3), T=(2, 4), d=(1, 3), W="integer").filter(moving),
                                        loss=sampled_from(["logistic", "exponential", "correlation"]),
                                        eta_factor=sampled_from([1.0, 0.5, 0.25]), seed=seeds()),
    proxy=f"largest secant Lipschitz ratio from a targeted search ({CANDIDATES} centres, {ROUNDS} x horizon rounds of "
          f"power iteration and hill-climbing) <= L_p; descent inequality at every step of {STARTS} GD runs of "
          f"{STEPS} x horizon steps, tolerance {ROUNDING} eps (T M1 max|gamma| + |L_t| + |L_t+1|) (rounding of two "
          f"risk values)",
    measures=("ratio_over_L_p", "max_ratio", "L_p", "max_descent_violation"),
    tolerances={"descent_rounding_eps": ROUNDING},
)
