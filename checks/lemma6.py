"""Lemma 6: under Assumption A the risk is L_p-smooth (our reconstructed constant,
`attnsvm.dynamics.smoothness`, spectral norms, (M0, M1) from the loss's `constants` on the margin
interval [min gamma, max gamma]) and GD with eta <= 1/L_p obeys the descent inequality.

Per instance (random integer data, any labels, integer W, a loss of Assumption A):

- smoothness: a targeted search for the largest Lipschitz ratio ||grad L(p) - grad L(q)|| /
  ||p - q||: `CANDIDATES` seeded centres p (random directions, ||p|| log-uniform in
  [1e-2, 1e1]), secant pairs p +- h u; the best centres get power iterations on u (the top
  Hessian direction) and a shrinking random hill-climb on p. It holds when the largest
  ratio found is <= L_p. Gradients are the log-domain ones; a secant ratio's rounding error is
  ~ eps ||grad|| / h, far below the margin it is compared with.
- descent: `STARTS` seeded GD runs with eta = eta_factor / L_p for STEPS x horizon steps,
  every step recorded; holds when L(p_{t+1}) <= L(p_t) - (eta/2)||grad L(p_t)||^2 + tol_t with
  tol_t = 4 eps (T M1 G + |L(p_t)| + |L(p_{t+1})|), G = max |gamma|: a bound on the rounding
  of the two risk evaluations (the margin <s, gamma> is a T-term sum of values <= G, the loss
  is M1-Lipschitz on the margin interval, each evaluation adds relative eps). Steps whose
  float64 update left p unchanged (step below the resolution of p, or underflow: run status
  'stationary' / 'stalled') are not GD steps and are skipped; none left: untrusted.
"""


import numpy as np

from attnsvm.attention import model
from attnsvm.attention.losses import get_loss
from attnsvm.claims import Claim, Hypothesis, Outcome
from attnsvm.claims import hypotheses as hyp
from attnsvm.claims.strategies import instances, integer_datasets, sampled_from, seeds
from attnsvm.dynamics import GD, Problem, intra_op_threads, run
from attnsvm.dynamics.smoothness import margin_interval, smoothness_constant

EPS = float(np.finfo(np.float64).eps)
CANDIDATES = 128
KEEP = 8
ROUNDS = 6
STARTS = 4
STEPS = 64


def step_size(inst) -> bool:
    """eta <= 1/L_p (eta = eta_factor / L_p)."""
    return 0 < inst.params["eta_factor"] <= 1


def _grads(problem_for, P: np.ndarray) -> np.ndarray:
    with intra_op_threads(1):                    # tiny tensors: threads only add overhead
        return problem_for(len(P)).grad(model.t(P)).vector.cpu().numpy()


def lipschitz_search(ds, loss, rng: np.random.Generator, rounds: int = ROUNDS) -> tuple[float, np.ndarray]:
    """Largest secant ratio ||grad L(p+hu) - grad L(p-hu)|| / (2h) found, and its centre p."""
    cache = {}

    def problem_for(B):
        if B not in cache:
            cache[B] = Problem.from_datasets([ds] * B, loss)
        return cache[B]

    def unit(x):
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    def ratios(C, U):
        h = 1e-4 * (1 + np.linalg.norm(C, axis=1, keepdims=True))
        G = _grads(problem_for, np.concatenate([C + h * U, C - h * U]))
        diff = (G[:len(C)] - G[len(C):]) / (2 * h)
        return np.linalg.norm(diff, axis=1), diff

    d = ds.d
    C = unit(rng.normal(size=(CANDIDATES, d))) * 10.0 ** rng.uniform(-2, 1, size=(CANDIDATES, 1))
    U = unit(rng.normal(size=(CANDIDATES, d)))
    r, _ = ratios(C, U)
    top = np.argsort(r)[-KEEP:]
    C, U, r = C[top], U[top], r[top]
    best, where = float(r.max()), C[np.argmax(r)]
    sigma = 0.3 * (1 + np.linalg.norm(C, axis=1, keepdims=True))
    for _ in range(rounds):
        r, HU = ratios(C, U)                      # power iteration: u <- H u / ||H u||
        ok = r > 0
        U[ok] = unit(HU[ok])
        cand = C + sigma * rng.normal(size=C.shape)
        rc, _ = ratios(cand, U)
        better = rc > r
        C[better], r[better] = cand[better], rc[better]
        sigma = np.where(better[:, None], sigma, sigma / 2)
        if r.max() > best:
            best, where = float(r.max()), C[np.argmax(r)].copy()
    return best, where


def descent_violation(ds, loss, eta: float, starts: np.ndarray, steps: int) -> dict:
    """max_t [L(p_{t+1}) - L(p_t) + (eta/2)||grad L(p_t)||^2 - tol_t] over GD runs (<= 0: holds)."""
    problem = Problem.from_datasets([ds] * len(starts), loss)
    tr = run(problem, GD(eta), starts, steps, every=1)
    L = tr.value.cpu().numpy()                                         # (steps+1, B)
    g2 = np.exp(2 * tr.log_grad_norm.cpu().numpy())
    M1 = get_loss(loss).constants(*margin_interval(ds))[1]
    G = float(np.abs(model.scores(ds)).max())
    tol = 4 * EPS * (ds.T * M1 * G + np.abs(L[:-1]) + np.abs(L[1:]))
    moved = (tr.p[1:] != tr.p[:-1]).any(-1).cpu().numpy()              # float steps that are GD steps
    excess = np.where(moved, L[1:] - L[:-1] + 0.5 * eta * g2[:-1] - tol, -np.inf)
    t, b = np.unravel_index(np.argmax(excess), excess.shape)
    return {"max_violation": float(excess[t, b]), "at_step": int(t), "start": int(b), "tolerance_there": float(tol[t, b]),
            "decrease_there": float(L[t, b] - L[t + 1, b]), "required_there": float(0.5 * eta * g2[t, b]),
            "runs": len(starts), "steps": steps, "steps_checked": int(moved.sum()), "status": tr.status}


def smooth_and_descends(inst, budget) -> Outcome:
    ds, P = inst.dataset, inst.params
    Lp = smoothness_constant(ds, P["loss"])
    if Lp == 0:
        return Outcome(None, reason="L_p = 0: the risk is constant (all scores equal)")
    rng = np.random.default_rng(P["seed"])
    ratio, where = lipschitz_search(ds, P["loss"], rng, int(ROUNDS * budget.horizon))
    eta = P["eta_factor"] / Lp
    starts = rng.normal(size=(STARTS, ds.d)) * 10.0 ** rng.uniform(-1, 1, size=(STARTS, 1))
    desc = descent_violation(ds, P["loss"], eta, starts, int(STEPS * budget.horizon))
    detail = {"L_p": Lp, "max_ratio": ratio, "ratio_over_L_p": ratio / Lp, "ratio_at": where.tolist(),
              "eta": eta, "descent": desc, "max_descent_violation": desc["max_violation"]}
    if desc["steps_checked"] == 0:
        return Outcome(None, detail=detail, reason="no GD step moved p in float64 (step below the resolution of p)")
    return Outcome(ratio <= Lp and desc["max_violation"] <= 0, detail=detail)


def _datasets():
    ds = integer_datasets(n=(1, 3), T=(2, 4), d=(1, 3), W="integer")
    return ds.filter(_moves)


def _moves(ds) -> bool:
    """Some input has unequal scores and unequal keys (else grad L = 0 everywhere)."""
    g, K = model.scores(ds), model.keys(ds)
    return any(np.ptp(g[i]) > 0 and np.ptp(K[i], axis=0).max() > 0 for i in range(ds.n))


def _instances(dropped):
    factor = sampled_from([8.0, 32.0, 128.0, 1024.0]) if "step_size" in dropped else sampled_from([1.0, 0.5, 0.25])
    return instances(_datasets(), loss=sampled_from(["logistic", "exponential", "correlation"]),
                     eta_factor=factor, seed=seeds())


claim = Claim(
    name="lemma6",
    evaluations=75,
    statement="Assumption A => L is L_p-smooth (reconstructed L_p) and GD with eta <= 1/L_p has "
              "L(p_{t+1}) <= L(p_t) - (eta/2)||grad L(p_t)||^2",
    hypotheses=(
        hyp.get("loss.assumption_A"),
        Hypothesis("step_size", "eta <= 1/L_p", step_size),
    ),
    conclusion=smooth_and_descends,
    instances=_instances,
    proxy=f"largest secant Lipschitz ratio from a targeted search ({CANDIDATES} centres, {ROUNDS} x horizon rounds of "
          f"power iteration and hill-climbing) <= L_p; descent inequality at every step of {STARTS} GD runs of "
          f"{STEPS} x horizon steps, tolerance 4 eps (T M1 max|gamma| + |L_t| + |L_t+1|) (rounding of two risk values)",
    measures=("ratio_over_L_p", "max_ratio", "L_p", "max_descent_violation"),
)
