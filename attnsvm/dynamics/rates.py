"""Paper C's finite-horizon proxies (docs/statements.md#rates-global and the rate results after it):
the covered settings' instances, their starts, batched runs of normalized GD, Polyak and GD on
the W-problem, and the rules that decide whether a failing run can be trusted.

Shared by rates-global, rates-ngd, rates-polyak, rates-sparsity and rates-speedup; every
tolerance is an argument, so each result passes its OWN constants (changing one result's
tolerance cannot change another's verdict).

- Instances (`score_datasets`, `instances`): integer tokens whose first coordinate carries the
  score (v = e_1), Assumption B by construction (or distinct scores), with parameters seed,
  init_alpha, init_scale, steps, eta: W_0 random of scale init_scale, or init_scale times the unit
  W_mm(init_alpha) of another selection (a hard start of a global claim; `start`).
- Runs (`race`): instances grouped by shape, rule and horizon, each group one batched
  `dynamics.run` (normalized GD's unrecorded steps on the fused kernel); per instance a `Run`
  with its recorded W's, 1 - corr(W_t, W_mm(opt)) and the log softmax mass off opt. An
  instance's `Run` does not depend on the rest of its batch.
- Trust (`doubt`): a failing run says something about the rule only if it does not coast
  (`coasting`: its norm grew by at least 1/coast over the last octave; a run thrown far by huge
  capped Polyak steps, or started far, and then moving O(1) per step, shows its offset and not
  its limit or rate), is not held at a selection that is not locally optimal (`held_off`: it
  stays there only while its start's offset lasts), and its float64 gradient agrees with an
  exact one where it is deeply saturated (`exact_disagreement`, mpmath: the library's masses are kept relative to each
  input's runner-up token, so a gradient-carrying token e^-708 below it is lost, and Polyak's
  capped steps can then follow a lost input into a trap exact arithmetic never enters).
- Fits (`fit_direction`, `judge_direction`): the fitted exponent of 1 - corr against the law
  C log(t)/t (our reconstruction, docs/statements.md#rates-ngd).
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from attnsvm import status
from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.claims.claim import Instance, Outcome
from attnsvm.claims.hypotheses.rates import other_w_lmms
from attnsvm.claims.spaces import Chooser, Space
from attnsvm.dynamics.trends import loglog_slope
from attnsvm.numerics import DIV_FLOOR
from attnsvm.svm import wlift

ENTRY = 2               # token coordinates (other than the score) are integers in [-ENTRY, ENTRY]
SEED_MAX = 2**16


# ---- instances --------------------------------------------------------------------------------

def _size(c: Chooser, x) -> int:
    return c.integer(x[0], x[1], "size") if isinstance(x, tuple) else int(x)


def score_datasets(n=(1, 2), T=(2, 3), d=(2, 3), shared: bool = True) -> Space:
    """Integer tokens (coordinates in [-2, 2]) whose first coordinate carries the score (v = e_1):
    x_it[0] = Y_i score_it, the optimal token strictly highest. `shared`: every other token of an
    input shares one score (Assumption B by construction); else their scores are distinct. No
    input repeats a token (witnesses are not degenerate)."""

    def generate(c: Chooser) -> Dataset:
        nn, TT, dd = _size(c, n), _size(c, T), _size(c, d)
        Y = [c.sampled_from([1, -1]) for _ in range(nn)]
        X = np.zeros((nn, TT, dd), dtype=np.int64)
        for i in range(nn):
            opt = c.integer(0, TT - 1, "index")
            if shared:
                others = [c.integer(-2, 1, "entry")] * (TT - 1)
            else:                                   # distinct, increasing from -3
                others = [c.integer(-3, 0, "entry")]
                for _ in range(TT - 2):
                    others.append(others[-1] + c.integer(1, 2, "entry"))
            top = max(others) + c.integer(1, 2, "entry")
            scores = others[:opt] + [top] + others[opt:]
            for t in range(TT):
                X[i, t, 0] = Y[i] * scores[t]
                X[i, t, 1:] = [c.integer(-ENTRY, ENTRY, "entry") for _ in range(dd - 1)]
            if len({tuple(x) for x in X[i].tolist()}) < TT:
                c.reject()
        return interned(X, Y)

    return Space(generate, f"integer tokens n {n}, T {T}, d {d}, score in x[0] (v = e_1), "
                           f"{'Assumption B by construction' if shared else 'distinct scores'}, no repeated token")


INTERNED = 4096         # datasets kept by `interned`
_interned: OrderedDict[tuple, Dataset] = OrderedDict()


def interned(X: np.ndarray, Y: Sequence[int]) -> Dataset:
    """The dataset of integer tokens X (n, T, d), labels Y and v = e_1, one object per content
    (the last INTERNED kept): the exact certificates memoized on it (`Dataset.memo`) then serve
    every instance that shares it, e.g. the starts the exhaustive phase enumerates on one
    dataset. Values are unchanged: a memo holds what recomputing would give."""
    key = (X.shape, X.tobytes(), tuple(int(y) for y in Y))
    ds = _interned.get(key)
    if ds is None:
        ds = _interned[key] = Dataset.from_arrays(X, list(Y), [1] + [0] * (X.shape[2] - 1), name="scores")
        while len(_interned) > INTERNED:
            _interned.popitem(last=False)
    else:
        _interned.move_to_end(key)
    return ds


def other_selections(ds: Dataset) -> list[tuple[int, ...]]:
    """Every token choice alpha != opt, in lexicographic order."""
    opt = tuple(int(a) for a in model.optimal_tokens(ds))
    return [a for a in itertools.product(range(ds.T), repeat=ds.n) if a != opt]


def w_mm(ds: Dataset, alpha) -> np.ndarray | None:
    """vec(W_mm(alpha)) (d*d,) from the certified W-SVM (`wlift.w_select`), or None where it is
    infeasible or uncertified."""
    sel = wlift.w_select(ds, alpha)
    if not (sel.feasible and sel.certified):
        return None
    return wlift.w_matrix(ds, sel.p_mm).ravel()


def instances(datasets: Space, kinds: Sequence[str] = ("random", "hard"), random_scales=(0.1, 1.0),
              hard_scales=(0.1, 1.0, 5.0, 20.0), random_steps: int = 200, hard_steps: int = 1000,
              hard_on: str = "feasible", eta: float = 0.5, **extra) -> Space:
    """Instances on `datasets` with params {seed, init_alpha, init_scale, steps, eta, **extra}. A
    'random' start is W_0 ~ N(0, init_scale^2) for `random_steps` steps; a 'hard' start is
    init_scale times the unit W_mm(init_alpha) of a selection alpha != opt (`hard_on`: 'feasible',
    its W-SVM feasible; 'lmm', locally optimal for the W-SVM), for `hard_steps` steps: normalized
    GD moves at most eta per step and must first turn away."""

    def generate(c: Chooser) -> Instance:
        ds = datasets.generate(c)
        kind = c.sampled_from(list(kinds))
        if kind == "random":
            alpha, scale, steps = None, c.sampled_from(list(random_scales)), random_steps
        else:
            alpha = c.sampled_from(other_selections(ds))
            ok = alpha in (other_w_lmms(ds) or []) if hard_on == "lmm" else w_mm(ds, alpha) is not None
            if not ok:
                c.reject()
            alpha, scale, steps = list(alpha), c.sampled_from(list(hard_scales)), hard_steps
        params = {"seed": c.integer(0, SEED_MAX, "seed"), "init_alpha": alpha, "init_scale": scale, "steps": steps,
                  "eta": eta}
        return Instance(ds, {**params, **{k: (v.generate(c) if isinstance(v, Space) else v) for k, v in extra.items()}})

    starts = []
    if "random" in kinds:
        starts.append(f"random W_0 of scale {list(random_scales)} for {random_steps} steps")
    if "hard" in kinds:
        starts.append(f"W_0 on W_mm(alpha) of a {hard_on} alpha != opt at scale {list(hard_scales)} for {hard_steps} "
                      "steps")
    return Space(generate, f"{datasets.description}; " + " or ".join(starts) + f"; NGD eta {eta}")


def start(inst: Instance) -> np.ndarray:
    """W_0 of the instance, flattened: init_scale times the unit W_mm(init_alpha) when given and
    feasible, else seeded N(0, init_scale^2) entries."""
    p, ds = inst.params, inst.dataset
    if p.get("init_alpha") is not None:
        w = w_mm(ds, p["init_alpha"])
        if w is not None:
            return p["init_scale"] * w / np.linalg.norm(w)
    return np.random.default_rng(p["seed"]).normal(scale=p["init_scale"], size=ds.d * ds.d)


def undecided(detail: dict, reason: str) -> Outcome:
    """An undecided outcome whose measurements are kept under 'measured': no top-level number and
    no margin, so the targeted search does not steer toward the instances the proxy cannot read."""
    return Outcome(None, detail={"measured": detail}, reason=reason)


def horizon(inst: Instance, budget, steps: int | None = None) -> int:
    """H = steps (the instance's, unless given) x the budget's horizon factor (longer when the
    engine extends or confirms)."""
    return max(1, int((inst.params["steps"] if steps is None else steps) * budget.horizon))


# ---- runs -------------------------------------------------------------------------------------

@dataclass
class Run:
    """One instance's run of one rule, recorded at `steps` (R,): W's `p` (R, d*d), risk `value`,
    `gap` = 1 - corr(W_t, W_mm(opt)), `log_off` = log mean_i (1 - s_{i,opt_i}(W_t)) (log domain),
    `norm` = ||W_t||, the final `selected` tokens and `status` (attnsvm.status)."""

    rule: str
    steps: np.ndarray
    p: np.ndarray
    value: np.ndarray
    gap: np.ndarray
    log_off: np.ndarray
    norm: np.ndarray
    selected: tuple[int, ...]
    status: str

    def at(self, t: float) -> int:
        """The recorded row nearest step t."""
        return int(np.argmin(np.abs(self.steps - t)))

    @property
    def horizon(self) -> int:
        return int(self.steps[-1])

    @property
    def trusted(self) -> bool:
        return status.meaning(self.status) == "trusted"

    def octave_growth(self) -> tuple[float, float]:
        """(||W_H||, ||W_{H/2}||)."""
        return float(self.norm[-1]), float(self.norm[self.at(self.horizon / 2)])


def _rule(name: str, etas: list[float]):
    from attnsvm import dynamics

    if name == "ngd":
        return dynamics.NormalizedGD(etas[0])
    if name == "polyak":
        return dynamics.Polyak("infimum")
    if name == "gd":
        return dynamics.GD(torch.tensor(etas, dtype=torch.float64))
    raise ValueError(f"unknown rule {name!r}")


def gd_step(ds: Dataset, factor: float) -> float:
    """factor / L_p (Lemma 6's constant for the W-problem, our reconstruction: `cross.smoothness`)."""
    from attnsvm.dynamics import cross

    return factor / float(ds.memo("rates.smoothness", lambda: cross.smoothness([ds])[0]))


PAD = 3     # runs are computed in dimension max(d, PAD): fewer shapes per batch, the same run
def _padded(ds: Dataset, D: int) -> tuple[np.ndarray, np.ndarray]:
    """X (n, T, D) and queries Z (n, D): the tokens and queries zero-padded to D coordinates."""
    X = np.zeros((ds.n, ds.T, D))
    Z = np.zeros((ds.n, D))
    X[..., :ds.d], Z[:, :ds.d] = ds.X, model.queries(ds)
    return X, Z


def embed(w: np.ndarray, d: int, D: int) -> np.ndarray:
    """vec of the d x d matrix vec(W) = w as the top-left block of a D x D zero matrix."""
    out = np.zeros((D, D))
    out[:d, :d] = np.asarray(w).reshape(d, d)
    return out.ravel()


def race(insts: Sequence[Instance], budget, rule: str, records: int, gd_factors: Sequence[float] | None = None,
         horizons: Sequence[int] | None = None) -> list[Run]:
    """Run `rule` ('ngd' with each instance's eta, 'polyak' with f_star = L_inf, or 'gd' at
    gd_factors[k] / L_p) from each instance's `start` for its `horizon` (or `horizons[k]`),
    recorded every H // records steps; one batched run per group of instances that share n, T,
    horizon (and NGD's step). Each instance runs in dimension D = max(d, PAD), its tokens and
    queries zero-padded: the padded coordinates of W carry no gradient and stay 0, so the run is
    the unpadded one (its W's are reported unpadded), whatever else shares the batch. Runs in the
    instances' order."""
    from attnsvm import dynamics
    from attnsvm.dynamics import cross

    Hs = list(horizons) if horizons is not None else [horizon(inst, budget) for inst in insts]
    etas = [gd_step(inst.dataset, gd_factors[k]) if rule == "gd" else float(inst.params["eta"])
            for k, inst in enumerate(insts)]
    groups: dict[tuple, list[int]] = {}
    for k, inst in enumerate(insts):
        ds = inst.dataset
        groups.setdefault((ds.n, ds.T, max(ds.d, PAD), Hs[k], etas[k] if rule == "ngd" else None), []).append(k)
    out: list = [None] * len(insts)
    for (_n, _T, D, H, _), ks in groups.items():
        rows = ks                           # dynamics.run pads the batch: an instance's run is its own
        dss = [insts[k].dataset for k in rows]
        XZ = [_padded(ds, D) for ds in dss]
        prob = cross.w_problem_from_arrays(np.stack([x for x, _ in XZ]), np.stack([z for _, z in XZ]),
                                           np.stack([model.scores(ds) for ds in dss]))
        p0 = np.stack([embed(start(insts[k]), ds.d, D) for k, ds in zip(rows, dss)])
        with torch.inference_mode():        # no autograd here: a fifth less overhead per step, the same numbers
            tr = dynamics.run(prob, _rule(rule, [etas[k] for k in rows]), p0, H, every=max(1, H // records))
        P, K, V = tr.p.numpy(), prob.K.numpy(), tr.value.numpy()
        steps = np.asarray(tr.steps)
        for j, (k, ds) in enumerate(zip(ks, dss)):     # per instance, on its own arrays
            Pj = np.ascontiguousarray(P[:, j])                                # (R, D*D)
            target = embed(_target(ds), ds.d, D)
            norms = np.linalg.norm(Pj, axis=-1)
            gap = 1 - (Pj @ target) / np.maximum(norms * np.linalg.norm(target), DIV_FLOOR)
            out[k] = Run(rule, steps, Pj.reshape(-1, D, D)[:, :ds.d, :ds.d].reshape(len(steps), -1), V[:, j], gap,
                         log_off_mass(K[j], Pj, model.optimal_tokens(ds)), norms,
                         tuple(int(a) for a in tr.selected[j].tolist()), tr.status[j])
    return out


def log_off_mass(K: np.ndarray, P: np.ndarray, alpha) -> np.ndarray:
    """log mean_i (1 - s_{i,alpha_i}(p)) for each row p of P (R, D), keys K (n, T, D): per input a
    log-sum-exp of the other tokens' logits minus that of all (no cancellation at saturation)."""
    from scipy.special import logsumexp

    a = np.einsum("ntd,rd->rnt", K, P)
    n, T = K.shape[:2]
    other = np.where(np.arange(T)[None, :] == np.asarray(alpha)[:, None], -np.inf, 0.0)    # (n, T)
    log_off = logsumexp(a + other[None], axis=-1) - logsumexp(a, axis=-1)                 # (R, n)
    return logsumexp(log_off, axis=-1) - math.log(n)


def _target(ds: Dataset) -> np.ndarray:
    """vec W_mm(opt) (the hypotheses guarantee it is feasible and certified)."""
    w = w_mm(ds, model.optimal_tokens(ds))
    if w is None:
        raise ValueError("W_mm(opt) is infeasible or uncertified: the claim's hypotheses exclude this instance")
    return w


def separated(ds: Dataset, p: np.ndarray, high: float, low: float) -> bool:
    """Every softmax value of W = p is above `high` (selected) or at most `low` (left): attention
    has separated into selected sets (the authors' multi-token convention, 1e-3 and 1e-6; a run
    with a value in between is not yet separated). A single selected token per input is the
    usual saturation; a tied pair of tokens sharing the mass is a selected set."""
    from attnsvm.dynamics import cross

    prob = cross.w_problem([ds])
    a = torch.einsum("ntd,d->nt", prob.K[0], torch.as_tensor(p))
    log_s = torch.log_softmax(a, -1)
    return bool(((log_s > math.log(high)) | (log_s <= math.log(low))).all())


# ---- a fixed step's resolution ----------------------------------------------------------------

def off_ray(run: Run) -> np.ndarray:
    """||W_t|| sin angle(W_t, W_mm) per recorded row: W_t's distance from the line of W_mm (from
    gap = 1 - cos, so sin = sqrt(gap (2 - gap)))."""
    g = np.clip(np.asarray(run.gap, dtype=np.float64), 0.0, 2.0)
    return np.asarray(run.norm, dtype=np.float64) * np.sqrt(g * (2 - g))


def step_resolution(run: Run, step: float, width: float) -> float | None:
    """The log-log slope of the bound (step / ||W_t||)^2 over [H / width, H] when the run stays
    within `step` of the line of W_mm at every recorded row there (then 1 - corr <= (step /
    ||W_t||)^2 / 2: it is at its step's resolution), else None. Normalized GD moves exactly `step`
    per step, so near W_mm it zigzags across the line within about one step, and its gap there
    jumps by orders of magnitude from step to step (seen: 1e-10 .. 3e-7 at t = 800 .. 1600, the
    distance from the line 0.01 .. 0.37 for eta 0.5, its octave maxima falling exactly 4x per octave):
    a slope fitted to a few recorded rows of it is noise (+0.77 where the envelope's is -2.0); the
    bound's slope, -2 x that of ||W_t||, is the rate the run resolves."""
    tail = window(run.steps, width)
    norms = np.asarray(run.norm, dtype=np.float64)[tail]
    if not (np.all(np.isfinite(norms)) and np.all(norms > 0)) or float(off_ray(run)[tail].max()) > step:
        return None
    return loglog_slope(np.asarray(run.steps)[tail], (step / norms) ** 2, floor=0.0, min_points=3)


# ---- trusting a failure -----------------------------------------------------------------------

def coasting(norm: float, norm_half: float, coast: float) -> bool:
    """The run coasts: over the last octave its own motion grew ||W|| by less than 1/coast of it,
    so most of its norm is an offset from its start or from a throw (huge capped Polyak steps
    near a stationary region): the finite window then shows that start-dependent offset, not the
    limit or the rate. (A run converging like gap ~ (N0 + l t)^-2 fits an exponent of -0.89 over
    [H/8, H] at growth 1/3, N0 = l H / 2.) A run still thrown at every step (capped steps along
    a fixed direction) grows by half its norm per octave: it does not coast, it is trapped. A
    non-finite norm coasts (nothing to read)."""
    if not math.isfinite(norm):
        return True
    return norm - norm_half < norm / coast


def exact_gradient(ds: Dataset, p, digits: int) -> tuple[np.ndarray, float, float]:
    """At W = p: the unit gradient, log ||grad L|| and log(L - L_inf) of the logistic W-risk in
    mpmath (`digits` digits, unbounded exponents), every softmax mass exp(a_t - a_max)/sum taken
    exactly and every difference in a cancellation-free form: d f_i = sum_{t != ref} s_t (gamma_t -
    f_i)(k_t - k_ref) with gamma_t - f_i = sum_u s_u (gamma_t - gamma_u), and loss(f_i) - loss(g*)
    = log1p(e^-g* expm1(delta_i) / (1 + e^-g*)), delta_i = sum_u s_u (g* - gamma_u)."""
    import mpmath as mp

    from attnsvm.dynamics import cross

    prob = cross.w_problem([ds])
    K, gamma = prob.K[0].numpy(), prob.gamma[0].numpy()
    n, T, D = K.shape
    with mp.workdps(digits):
        w = [mp.mpf(float(x)) for x in np.asarray(p, dtype=np.float64).ravel()]
        grad, excess = [mp.mpf(0)] * D, mp.mpf(0)
        for i in range(n):
            k = [[mp.mpf(float(x)) for x in K[i, t]] for t in range(T)]
            g = [mp.mpf(float(x)) for x in gamma[i]]
            a = [mp.fsum(kk * ww for kk, ww in zip(k[t], w)) for t in range(T)]
            ref = max(range(T), key=lambda t: a[t])
            e = [mp.exp(a[t] - a[ref]) for t in range(T)]
            s = [x / mp.fsum(e) for x in e]
            top = max(g)
            delta = mp.fsum(s[u] * (top - g[u]) for u in range(T))
            f = top - delta
            excess += mp.log1p(mp.exp(-top) * mp.expm1(delta) / (1 + mp.exp(-top))) / n
            lp = -1 / (1 + mp.exp(f))
            for t in range(T):
                if t == ref:
                    continue
                c = lp * s[t] * mp.fsum(s[u] * (g[t] - g[u]) for u in range(T)) / n
                grad = [x + c * (kt - kr) for x, kt, kr in zip(grad, k[t], k[ref])]
        norm = mp.sqrt(mp.fsum(x * x for x in grad))
        log_excess = float(mp.log(excess)) if excess > 0 else -math.inf
        if norm == 0:
            return np.zeros(D), -math.inf, log_excess
        return np.array([float(x / norm) for x in grad]), float(mp.log(norm)), log_excess


def exact_disagreement(ds: Dataset, ps, deep: float, agree: float, rows: int, digits: int) -> str:
    """'' if float64's gradient (direction, log-norm and log(L - L_inf), Polyak's length) agrees
    with `exact_gradient` at every W of `ps` whose logit spread exceeds `deep` (at most `rows` of
    them, evenly spaced, the last included): directions within 1 - cos <= agree, logs within
    1e-6 relative; else what differs, and where."""
    from attnsvm.dynamics import cross

    prob = cross.w_problem([ds])
    K = prob.K[0].numpy()
    ps = [np.asarray(p, dtype=np.float64) for p in ps]
    deep_ps = [p for p in ps if np.isfinite(p).all() and float(np.ptp(K @ p, axis=-1).max()) > deep]
    if len(deep_ps) > rows:
        deep_ps = [deep_ps[int(j)] for j in np.linspace(0, len(deep_ps) - 1, rows).round()]
    for p in deep_ps:
        g = prob.grad(torch.as_tensor(p)[None])
        direction, log_norm, log_excess = exact_gradient(ds, p, digits)
        cos = float(g.direction[0].numpy() @ direction)
        ln, le = float(g.log_norm[0]), float(g.log_excess[0])
        if 1 - cos > agree or abs(ln - log_norm) > 1e-6 * max(1.0, abs(log_norm)) or \
                abs(le - log_excess) > 1e-6 * max(1.0, abs(log_excess)):
            return (f"float64 gradient inexact at ||W|| = {np.linalg.norm(p):.3g} (1 - cos = {1 - cos:.3g}, log-norm "
                    f"{ln:.6g} vs exact {log_norm:.6g}, log(L - L_inf) {le:.6g} vs {log_excess:.6g})")
    return ""


def held_off(ds: Dataset, run: Run) -> str:
    """Why a run that ends on a selection alpha != opt that is not locally optimal (ties counted,
    `hypotheses.rates.other_w_lmms`) says nothing about its limit ('' otherwise): such a
    selection does not attract (core Theorem 3 needs local optimality); the run sits on it only
    while an offset from its start lasts. Example (tests/test_rates_laws.py): n = 2, NGD from
    scale 20 on W_mm((1, 0)) ends aligned with W_mm((1, 1)), whose input 0 has the higher-scoring
    optimal token as an SVM-neighbour; both inputs' margins grow at one rate along that direction,
    so the optimal token's term stays e^-25 below the other input's (the start's offset) and wins
    only after some e^25 steps."""
    opt = tuple(int(a) for a in model.optimal_tokens(ds))
    lmms = other_w_lmms(ds)
    if run.selected == opt or lmms is None or run.selected in lmms:
        return ""
    return (f"{run.rule}: held at selection {list(run.selected)}, not locally optimal (opt {list(opt)}): it stays "
            "only while its start's offset lasts, the window cannot show its limit")


@dataclass(frozen=True)
class Trust:
    """A check's own constants of the trust rule (`doubt`): `coast` (a run whose norm grew by less
    than 1/coast over the last octave coasts), `deep` (a logit spread above which float64's gradient
    is cross-checked in mpmath), `agree` (1 - cos below which the two directions agree), `rows` (at
    most this many recorded rows cross-checked per run), `digits` (mpmath's)."""

    coast: float
    deep: float
    agree: float
    rows: int
    digits: int

    def tolerances(self) -> dict:
        """The ones a verdict reports (`Claim.tolerances`)."""
        return {"coast": self.coast, "exact_deep_logit_spread": self.deep, "exact_agree": self.agree}


def doubt(ds: Dataset, run: Run, trust: Trust) -> str:
    """Why a failing `run` says nothing about its rule ('' when the failure can stand): it is
    untrusted (status), it coasts (`coasting`), it is held at a selection that is not locally
    optimal (`held_off`), or float64's gradient disagrees with the exact one at its deeply
    saturated recorded points (`exact_disagreement`)."""
    if not run.trusted:
        return f"{run.rule}: " + status.undecided_reason([run.status], "run")
    norm, half = run.octave_growth()
    if coasting(norm, half, trust.coast):
        return (f"{run.rule}: coasting, ||W_H|| = {norm:.3g} grew by {norm - half:.3g} over the last octave (under "
                f"1/{trust.coast:g} of it): the window shows its offset, not its limit or rate")
    held = held_off(ds, run)
    if held:
        return held
    inexact = exact_disagreement(ds, run.p, trust.deep, trust.agree, trust.rows, trust.digits)
    return f"{run.rule}: {inexact}: the failure is float64's, not the rule's" if inexact else ""


# ---- fitted exponents -------------------------------------------------------------------------

def window(steps, width: float) -> np.ndarray:
    """The recorded steps in [H / width, H]."""
    steps = np.asarray(steps, dtype=np.float64)
    return steps >= steps[-1] / width


def law_exponent(steps, width: float) -> float:
    """The local exponent of log(t)/t over the window: d log(log t / t) / d log t = -1 + 1/ln t_c at
    the window's geometric centre t_c."""
    s = np.asarray(steps, dtype=np.float64)[window(steps, width)]
    t_c = math.exp(float(np.mean(np.log(s))))
    return -1.0 + 1.0 / math.log(t_c)


def fit_direction(steps, gap, width: float, floor: float) -> dict:
    """The least-squares exponent of 1 - corr against t over [H / width, H] (points above `floor`)
    and the law's local exponent there."""
    w = window(steps, width)
    g = np.asarray(gap, dtype=np.float64)
    s = np.asarray(steps)
    return {"exponent": loglog_slope(s[w], g[w], floor=floor, min_points=4), "law_exponent": law_exponent(steps, width),
            "final_gap": float(g[-1]), "horizon": int(s[-1]), "window": [int(s[w][0]), int(s[-1])]}


def judge_direction(fit: dict, tol: float, floor: float) -> tuple[bool | None, float | None]:
    """(holds, margin) of one fit: holds if the exponent is at most the law's + tol; a final gap at
    the float floor holds; too few points above the floor (but not at it) is undecided."""
    if fit["final_gap"] <= floor:
        return True, None
    if fit["exponent"] is None:
        return None, None
    m = fit["law_exponent"] + tol - fit["exponent"]
    return m > 0, m
