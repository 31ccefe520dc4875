"""Local convergence (Transformers as SVMs, docs/statements.md#tfsvm-frobenius and
#tfsvm-nuclear; the authors' local_converge.ipynb): n=6, T=8, d=10, 100 runs of 2000 normalized-GD steps (lr 0.1,
logistic loss), trained once in W (`cross.w_problem_from_arrays`, p = vec(W)) and once in (K, Q)
(`cross.KQ`, m = d) from small random starts, all runs of a shard advancing together through
`dynamics.run` (the W runs on the fused kernel). With alpha the tokens selected at the end, W is
compared with W_mm(alpha) (Frobenius SVM) and K Q^T with W*_mm(alpha) (nuclear SVM); the mean
softmax probability of the selected tokens, mean_i max_t s_it, is recorded beside (the
notebook's first figure).

Data (`attention`): "cross" is the notebook's generator (`notebooks.rank_data`, seed + run as the
generator's seed: cross-attention with random unit queries Z, unit tokens, Y the sign of a
Gaussian draw); "self" is the earlier self-attention variant (X rows and v uniform on the unit
sphere, Y uniform, z_i = x_i1, numpy stream (seed, run)).

The (K, Q) run normalises grad_K and grad_Q separately as the authors do
(`kq_normalization="per-factor"`), or the joint gradient of theta = (K, Q) ("joint"). Saturation
as in Figure 9: mean_i (1 - s_{i,alpha_i}) <= sat_tol.

`preset("authors")` runs the authors' conventions (docs/reproducing.md, `dynamics.authors`): W, K, Q
initialised as torch's linear layer (uniform in +-1/sqrt(d)), g / (||g|| + eps) per tensor, the
(K, Q) ridge eps (||K||^2 + ||Q||^2), the float64 autograd gradient, eps = machine epsilon, and
their SVM solves (`notebooks.w_svm_solver`: cvxpy's default solver, SCS for the nuclear norm).
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch

from attnsvm import dynamics, svm
from attnsvm.claims.verdicts import Verdict
from attnsvm.dynamics import authors, cross
from attnsvm.files import write_json_atomic
from attnsvm.interfaces.sweeps import notebooks, params
from attnsvm.interfaces.sweeps.figures import vanishing
from attnsvm.interfaces.sweeps.reports import check, json_ready, with_conditions
from attnsvm.interfaces.sweeps.shards import Shard, run_sweep
from attnsvm.svm import geometry


@dataclass(frozen=True)
class Settings:
    n: int = 6
    T: int = 8
    d: int = 10
    runs: int = 100
    steps: int = 2000
    lr: float = 0.1
    loss: str = "logistic"
    init_scale: float = 0.01
    sat_tol: float = 1e-6
    seed: int = 0
    shard_size: int = 25
    kq_normalization: str = "per-factor"
    init: str = "normal"              # normal: N(0, init_scale^2); uniform: U(+-1/sqrt(d)) (torch's Linear)
    ridge: float = 0.0                # (K, Q) runs: + ridge (||K||^2 + ||Q||^2)
    norm_eps: float = 0.0             # g / (||g|| + norm_eps) instead of g / ||g||
    gradient: str = "log-domain"      # log-domain (cancellation-free) | naive (float64 autograd)
    attention: str = "cross"          # cross: the notebook's data | self: z_i = x_i1
    solver: str = "library"           # library: quadprog / Clarabel | authors: their cvxpy procedure

    PARAMS: ClassVar[dict] = {
        "n": params.COUNT, "T": params.TOKENS, "d": params.COUNT, "runs": params.COUNT, "steps": params.COUNT,
        "lr": params.STEP, "loss": params.LOSS, "init_scale": params.INIT_SCALE, "sat_tol": params.SAT_TOL,
        "seed": params.SEED, "shard_size": params.COUNT, "kq_normalization": params.Options(("per-factor", "joint")),
        "init": params.INIT, "ridge": params.EPS, "norm_eps": params.EPS, "gradient": params.GRADIENT,
        "attention": params.ATTENTION, "solver": params.SOLVER}

    def __post_init__(self):
        params.validate(self)

    def size(self) -> tuple[str, int]:
        return "--shard-size x (n x T x d + 3 d^2)", min(self.shard_size, self.runs) * (self.n * self.T * self.d
                                                                                      + 3 * self.d * self.d)

    def to_json(self) -> dict:
        return asdict(self)

    def shards(self) -> list[Shard]:
        return [Shard(f"r{a:05d}-{min(self.runs, a + self.shard_size):05d}",
                      {"start": a, "stop": min(self.runs, a + self.shard_size)})
                for a in range(0, self.runs, self.shard_size)]


CONVENTIONS = {"default": {},
               "authors": {"init": "uniform", "ridge": authors.EPS, "norm_eps": authors.EPS, "gradient": "naive",
                           "kq_normalization": "per-factor", "solver": "authors"}}


def preset(conventions: str, **kw) -> Settings:
    """Settings under the `conventions` (default | authors); `kw` sets the rest."""
    return params.preset(Settings, CONVENTIONS, conventions, **kw)


def instance(s: Settings, run: int):
    """Run `run`'s data X, Y, Z (queries), v and starts W0, K0, Q0."""
    rng = np.random.default_rng([s.seed, run])
    if s.attention == "self":
        X = rng.standard_normal((s.n, s.T, s.d))
        X /= np.linalg.norm(X, axis=-1, keepdims=True)
        v = rng.standard_normal(s.d)
        v /= np.linalg.norm(v)
        Y = rng.choice(np.array([-1.0, 1.0]), s.n)
        Z = X[:, 0]
    else:
        x = notebooks.rank_data(s.seed + run, s.n, s.T, s.d)
        X, Y, Z, v = x.X, x.Y, x.Z, x.v
    W0 = s.init_scale * rng.standard_normal(s.d * s.d)
    K0, Q0 = (s.init_scale * rng.standard_normal((s.d, s.d)) for _ in range(2))
    if s.init == "uniform":                   # torch.nn.Linear's default, from a stream of its own
        u = np.random.default_rng([s.seed, run, 1])
        W0, K0, Q0 = (notebooks.linear_init(u, s.d, shape) for shape in (s.d * s.d, (s.d, s.d), (s.d, s.d)))
    return X, Y, Z, v, W0, K0, Q0


def _rules(s: Settings, kq: cross.KQ):
    """The W rule, the (K, Q) rule and the (K, Q) parameterisation of the settings."""
    kq_sizes = kq.blocks if s.kq_normalization == "per-factor" else (sum(kq.blocks),)
    if s.norm_eps > 0:
        w_rule = authors.EpsNormalizedGD(s.lr, (s.d * s.d,), s.norm_eps)
        kq_rule = authors.EpsNormalizedGD(s.lr, kq_sizes, s.norm_eps)
    else:
        w_rule = dynamics.NormalizedGD(s.lr)
        kq_rule = dynamics.BlockNormalizedGD(s.lr, kq.blocks) if s.kq_normalization == "per-factor" \
            else dynamics.NormalizedGD(s.lr)
    return w_rule, kq_rule, authors.Ridge(kq, s.ridge) if s.ridge > 0 else kq


def _svm(s: Settings, X, Z, alpha, norm: str) -> tuple[str, np.ndarray | None]:
    """(status, vec W) of W_mm ('fro') or W*_mm ('nuclear') for the tokens alpha: the library's
    solvers, or the authors' procedure (no vector where their value is None or their solve raised)."""
    if s.solver == "authors":
        try:
            W, status, _ = notebooks.w_svm_solver(X, Z, alpha, fro=norm == "fro")
        except Exception as e:                 # (their notebook would stop here)
            return f"error: {type(e).__name__}", None
        return status, None if W is None else np.asarray(W).reshape(-1)
    res = svm.w_svm_arrays(X, Z, alpha, norm=norm)
    return res.status, res.x if res.ok else None


def _corr_rows(P: np.ndarray, q: np.ndarray) -> list[float]:
    """corr(P[r], q) for each recorded row r."""
    return [geometry.corr(row, q) for row in P]


def run_shard(settings: dict, shard: Shard) -> dict:
    warnings.filterwarnings("ignore", module="cvxpy")
    warnings.filterwarnings("ignore", message=".*Solution may be inaccurate")   # raised from attnsvm's margin.py
    s = Settings(**settings)
    runs = range(shard.params["start"], shard.params["stop"])
    data = [instance(s, r) for r in runs]
    X, Y, Z, v, W0, K0, Q0 = (np.stack(a) for a in zip(*data))
    gamma = Y[..., None] * np.einsum("bntd,bd->bnt", X, v)
    prob = cross.w_problem_from_arrays(X, Z, gamma, s.loss)          # GPU when present
    if s.gradient == "naive":
        prob = authors.NaiveProblem.of(prob)
    kq = cross.KQ(s.d, s.d)
    w_rule, kq_rule, param = _rules(s, kq)
    trajs = {"W": dynamics.run(prob, w_rule, W0, s.steps),
             "KQ": dynamics.run(prob, kq_rule, kq.pack(torch.as_tensor(K0), torch.as_tensor(Q0)), s.steps, param=param)}
    cache: dict = {}

    def svms(b, alpha):
        key = (b, tuple(alpha))
        if key not in cache:
            cache[key] = tuple(_svm(s, X[b], Z[b], alpha, norm) for norm in ("fro", "nuclear"))
        return cache[key]

    recs = []
    for b, r in enumerate(runs):
        rec = {"run": r}
        for name, tr in trajs.items():
            alpha = tr.selected[b].tolist()
            unsat = float(np.mean(np.exp(tr.log_unsat[-1, b].cpu().numpy())))
            (fro_status, fro), (nuc_status, nuc) = svms(b, alpha)
            P = tr.p[:, b].cpu().numpy()
            out = {"alpha": alpha, "unsat": unsat, "saturated": unsat <= s.sat_tol, "status": tr.status[b],
                   "fro_status": fro_status, "nuc_status": nuc_status,
                   "softmax": (1 - np.exp(tr.log_unsat[:, b].cpu().numpy()).mean(-1)).tolist()}
            if fro is not None:
                out["corr_fro"] = _corr_rows(P, fro)
            if nuc is not None:
                out["corr_nuc"] = _corr_rows(P, nuc)
            rec[name] = out
        recs.append(rec)
    return {"steps": trajs["W"].steps, "records": recs}


def _trusted(r: dict) -> bool:
    """A run counts as evidence if it saturated on finite iterates (a non-finite status is untrusted)."""
    return r["saturated"] and r["status"] != "non-finite"


def _mean_curve(recs, name, key):
    """Mean corr over the saturated, finite runs with a solved SVM at every recorded step, and their count."""
    rows = [r[name][key] for r in recs if _trusted(r[name]) and key in r[name]]
    rows = [x for x in rows if all(np.isfinite(x))]
    return (np.mean(rows, 0), len(rows)) if rows else (None, 0)


def _check(claim, curve, count, steps, s: Settings, other=None):
    """The rule of fig1-fig5 (`figures.vanishing`) on the residual 1 - mean corr over [H/2, H]
    (at the recorded steps in it; the first of them stands for H/2):
    SUPPORTED if within 1 - 0.99 throughout the second half (and above the other SVM's mean);
    REFUTED only if it ends outside and at least doubled over the second half (moving away);
    INCONCLUSIVE otherwise (e.g. still rising towards 0.99 at H)."""
    if curve is None:
        return check(claim, "INCONCLUSIVE", "no saturated, finite runs with a solved SVM")
    steps = np.asarray(steps)
    half = steps >= steps[-1] / 2                  # the recorded steps in [H/2, H] (log-spaced, and H)
    mid_i = int(np.argmax(half))
    res = 1 - np.asarray(curve)
    c = vanishing(claim, float(res[mid_i]), float(res[-1]), float(res[half].max()), 0.01, "1 - mean corr")
    mean = float(curve[-1])
    if c.verdict == "SUPPORTED" and other is not None and other[0] is not None and not mean > float(other[0][-1]):
        c.verdict = Verdict.INCONCLUSIVE
    ev = (f"mean final corr {mean:.5f} over {count} saturated runs (corr {float(curve[mid_i]):.5f} at step "
          f"{int(steps[mid_i])}; {c.evidence['summary']})")
    if other and other[0] is not None:
        ev += f" (vs {float(other[0][-1]):.5f} with the other SVM)"
    return check(claim, c.verdict, ev, final=mean)


def _where(s: Settings) -> str:
    return (f"{s.runs} runs, n={s.n}, T={s.T}, d={s.d}, {s.attention}-attention data, {s.steps} NGD steps lr {s.lr}"
            f"{' on g/(||g||+eps)' if s.norm_eps else ''}, {s.solver} SVM solves, "
            f"finite-horizon proxy (corr >= 0.99 throughout [H/2, H] supports), seed {s.seed}")


def summarize(s: Settings, steps: list[int], records: list[dict]) -> dict:
    w_fro, w_nuc = _mean_curve(records, "W", "corr_fro"), _mean_curve(records, "W", "corr_nuc")
    k_fro, k_nuc = _mean_curve(records, "KQ", "corr_fro"), _mean_curve(records, "KQ", "corr_nuc")
    mean = lambda xs: float(np.mean(xs)) if xs else None
    curves = {f"{name}:{key}": [mean([r[name][key][k] for r in records if key in r[name]]) for k in range(len(steps))]
              for name in ("W", "KQ") for key in ("corr_fro", "corr_nuc", "softmax")}
    checks = with_conditions([
        _check("W-parameterised GD converges in direction to W_mm (Frobenius)", *w_fro, steps, s, other=w_nuc),
        _check("(K,Q)-parameterised GD converges in direction to W*_mm (nuclear)", *k_nuc, steps, s, other=k_fro)],
        _where(s))
    final = lambda m: None if m[0] is None else float(m[0][-1])
    return {"settings": s.to_json(), "steps": steps, "mean_curves": curves, "checks": checks,
            "saturated": {name: sum(_trusted(r[name]) for r in records) for name in ("W", "KQ")},
            "non_finite": {name: sum(r[name]["status"] == "non-finite" for r in records) for name in ("W", "KQ")},
            "final": {"W~W_mm": final(w_fro), "W~W*_mm": final(w_nuc), "KQ~W_mm": final(k_fro),
                      "KQ~W*_mm": final(k_nuc)}}


def plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnsvm.interfaces.plotting.common import save_png

    steps = np.array(summary["steps"][1:])
    curve = lambda key: np.array([np.nan if x is None else x for x in summary["mean_curves"][key][1:]])
    fig, (ax0, ax) = plt.subplots(1, 2, figsize=(11, 4))
    for name, color, lab in (("W", "tab:blue", "W"), ("KQ", "tab:red", "(K, Q)")):
        ax0.semilogx(steps, curve(f"{name}:softmax"), color=color, label=lab)
    ax0.set_xlabel("normalized-GD step")
    ax0.set_ylabel("mean softmax probability of the selected tokens")
    ax0.legend(fontsize=8)
    for key, color, style, lab in (("W:corr_fro", "tab:blue", "-", "W vs W_mm"),
                                   ("W:corr_nuc", "tab:blue", ":", "W vs W*_mm"),
                                   ("KQ:corr_nuc", "tab:red", "-", "KQ^T vs W*_mm"),
                                   ("KQ:corr_fro", "tab:red", ":", "KQ^T vs W_mm")):
        ax.semilogx(steps, 1 - curve(key), style, color=color, label=lab)
    ax.set_yscale("log")
    ax.set_xlabel("normalized-GD step")
    ax.set_ylabel("1 - mean correlation")
    s = summary["settings"]
    fig.suptitle(f"local convergence: n={s['n']}, T={s['T']}, d={s['d']}, {s['runs']} runs, "
                 f"{s['attention']}-attention data, {'authors' if s['solver'] == 'authors' else 'default'} conventions")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_png(fig, path, dpi=110)
    plt.close(fig)


def sweep(s: Settings, out: Path, executor=None, on_done=None) -> tuple[dict, list[dict]]:
    out = Path(out)
    results, records = run_sweep("tfsvm-local", s, run_shard, out, executor, on_done)
    summary = summarize(s, results[0]["steps"], records)
    write_json_atomic(out / "tfsvm_local.json", {**json_ready(summary), "records": records})
    plot(summary, out / "tfsvm_local.png")
    return summary, records
