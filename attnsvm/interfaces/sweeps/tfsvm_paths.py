"""Global convergence pictures (Transformers as SVMs, docs/statements.md#tfsvm-frobenius and
#tfsvm-nuclear; the authors' visualization1.ipynb and visualization2.ipynb): on each notebook's
fixed data (n = 2, d = 2, T = 3 or 5, Y = 1, cross-attention with random unit queries;
`notebooks.picture_data`), normalized GD (lr 0.1, 2000 steps) on W from 0 and on (K, Q) from
Q = 0, K = 0.1 N(0, I) (`starts` seeded draws of K, advancing together through `dynamics.run`),
with the paths W_t z_i and K_t Q_t^T z_i drawn beside the SVM directions W_mm z_i (Frobenius) and
W*_mm z_i (nuclear norm) of the notebook's best_ids, every step recorded.

Authors' conventions: the step g/(||g|| + eps) per tensor, the (K, Q) ridge eps (||K||^2 +
||Q||^2), the float64 autograd gradient and their cvxpy SVM solves (`dynamics.authors`,
`notebooks.w_svm_solver`).

Checks (finite-horizon proxy of fig1-fig5 on 1 - corr over [H/2, H], tolerance 0.01): the W
path converges in direction to W_mm on every picture; every (K, Q) path converges to W*_mm;
where the two SVM directions differ, W ends closer to W_mm than to W*_mm and K Q^T closer to
W*_mm than to W_mm (the two parameterisations' different implicit biases).
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from attnsvm.claims.verdicts import Report
from attnsvm.dynamics import authors as authors_numerics
from attnsvm.interfaces.sweeps import notebooks, params
from attnsvm.interfaces.sweeps.figures import finish, vanishing
from attnsvm.interfaces.sweeps.reports import check, every, with_conditions
from attnsvm.interfaces.sweeps.shards import Shard, run_sweep
from attnsvm.svm import geometry

PICTURES = ("visualization1", "visualization2")
FRAMES = {"visualization1": ((-30, 40), (-100, 100)), "visualization2": ((-2, 10), (-5, 5))}   # the notebooks' axes
TOL = 0.01
DISTINCT = 0.999        # the two SVM directions differ when their correlation is below this


@dataclass(frozen=True)
class Settings:
    steps: int = 2000
    lr: float = 0.1
    starts: int = 8
    k_scale: float = 0.1
    seed: int = 0
    norm_eps: float = 0.0
    ridge: float = 0.0
    gradient: str = "log-domain"
    solver: str = "library"

    PARAMS: ClassVar[dict] = {"steps": params.HORIZON, "lr": params.STEP, "starts": params.COUNT,
                              "k_scale": params.INIT_SCALE, "seed": params.SEED, "norm_eps": params.EPS,
                              "ridge": params.EPS, "gradient": params.GRADIENT, "solver": params.SOLVER}

    def __post_init__(self):
        params.validate(self)

    def to_json(self) -> dict:
        return asdict(self)

    def shards(self) -> list[Shard]:
        return [Shard(name, {"picture": name}) for name in PICTURES]

    def describe(self) -> str:
        step = f"lr {self.lr:g} on g/(||g||+{self.norm_eps:.3g}) per tensor" if self.norm_eps else f"lr {self.lr:g}"
        return (f"{self.steps} NGD steps {step}, W from 0, (K, Q) from Q = 0, K = {self.k_scale:g} N(0, I) "
                f"({self.starts} starts, seed {self.seed}), {self.gradient} gradient"
                f"{f', ridge {self.ridge:.3g}' if self.ridge else ''}, {self.solver} SVM solves")


CONVENTIONS = {"default": {},
               "authors": {"norm_eps": authors_numerics.EPS, "ridge": authors_numerics.EPS, "gradient": "naive",
                           "solver": "authors"}}


def preset(conventions: str, **kw) -> Settings:
    """Settings under the `conventions` (default | authors); `kw` sets the rest."""
    return params.preset(Settings, CONVENTIONS, conventions, **kw)


def svm_directions(s: Settings, x: notebooks.Draw) -> dict:
    """vec W_mm and vec W*_mm of best_ids (None where a solve fails)."""
    if s.solver == "authors":
        return {norm: (None if (W := notebooks.w_svm_solver(x.X, x.Z, x.best, fro=norm == "fro")[0]) is None
                       else np.ravel(W)) for norm in ("fro", "nuclear")}
    from attnsvm import svm

    return {norm: (r.x if (r := svm.w_svm_arrays(x.X, x.Z, x.best, norm=norm)).ok else None)
            for norm in ("fro", "nuclear")}


def paths(s: Settings, x: notebooks.Draw, index: int):
    """The W run (batch 1) and the (K, Q) runs (batch `starts`): two Trajectories of vec W_t."""
    import torch

    from attnsvm import dynamics
    from attnsvm.dynamics import cross

    d = x.X.shape[-1]
    gamma = x.Y[:, None] * (x.X @ x.v)

    def problem(B: int):
        rep = lambda a: np.repeat(a[None], B, 0)
        prob = cross.w_problem_from_arrays(rep(x.X), rep(x.Z), rep(gamma))
        return authors_numerics.NaiveProblem.of(prob) if s.gradient == "naive" else prob

    kq = cross.KQ(d, d)
    K0 = s.k_scale * np.random.default_rng([s.seed, index]).standard_normal((s.starts, d, d))
    theta0 = kq.pack(torch.as_tensor(K0), torch.zeros(s.starts, d, d, dtype=torch.float64))
    if s.norm_eps:
        w_rule = authors_numerics.EpsNormalizedGD(s.lr, (d * d,), s.norm_eps)
        kq_rule = authors_numerics.EpsNormalizedGD(s.lr, kq.blocks, s.norm_eps)
    else:
        w_rule, kq_rule = dynamics.NormalizedGD(s.lr), dynamics.BlockNormalizedGD(s.lr, kq.blocks)
    param = authors_numerics.Ridge(kq, s.ridge) if s.ridge else kq
    return (dynamics.run(problem(1), w_rule, np.zeros(d * d), s.steps, every=1),
            dynamics.run(problem(s.starts), kq_rule, theta0, s.steps, every=1, param=param))


def run_shard(settings: dict, shard: Shard) -> dict:
    warnings.filterwarnings("ignore", module="cvxpy")
    s = Settings(**settings)
    name = shard.params["picture"]
    x = notebooks.picture_data(name)
    svms = svm_directions(s, x)
    w_tr, kq_tr = paths(s, x, PICTURES.index(name))
    corr = lambda P, q: None if q is None else [geometry.corr(row, q) for row in P]
    Pw, Pk = w_tr.p[:, 0].numpy(), kq_tr.p.numpy()
    return {"picture": name, "steps": w_tr.steps, "X": x.X.tolist(), "Z": x.Z.tolist(), "best": x.best.tolist(),
            "W_mm": None if svms["fro"] is None else svms["fro"].tolist(),
            "W*_mm": None if svms["nuclear"] is None else svms["nuclear"].tolist(),
            "W_path": Pw.tolist(), "KQ_path": Pk[:, 0].tolist(),
            "status": {"W": w_tr.status[0], "KQ": kq_tr.status},
            "selected": {"W": w_tr.selected[0].tolist(), "KQ": kq_tr.selected.tolist()},
            "corr": {"W~W_mm": corr(Pw, svms["fro"]), "W~W*_mm": corr(Pw, svms["nuclear"]),
                     "KQ~W_mm": [corr(Pk[:, b], svms["fro"]) for b in range(s.starts)],
                     "KQ~W*_mm": [corr(Pk[:, b], svms["nuclear"]) for b in range(s.starts)]},
            "records": []}


def _vanish(label: str, steps, curve) -> Report:
    """`figures.vanishing` on the residual 1 - corr over the recorded steps in [H/2, H]."""
    steps = np.asarray(steps)
    half = steps >= steps[-1] / 2
    res = 1 - np.asarray(curve)
    return vanishing(label, float(res[np.argmax(half)]), float(res[-1]), float(res[half].max()), TOL, "1 - corr")


def summarize(s: Settings, results: list[dict]) -> dict:
    w_parts, kq_parts, order, rows = [], [], [], []
    for r in results:
        c, steps = r["corr"], r["steps"]
        finite = r["status"]["W"] != "non-finite" and all(st != "non-finite" for st in r["status"]["KQ"])
        w = _vanish(r["picture"], steps, c["W~W_mm"]) if c["W~W_mm"] and finite else None
        kq = ([_vanish(f"{r['picture']} start {b}", steps, cb) for b, cb in enumerate(c["KQ~W*_mm"])]
              if c["KQ~W*_mm"][0] and finite else None)
        w_parts.append(w)
        kq_parts.append(None if kq is None else check(kq[0].claim, every(k.verdict for k in kq),
                                                      max(kq, key=lambda k: k.evidence["worst"]).evidence["summary"]))
        svm_corr = (None if r["W_mm"] is None or r["W*_mm"] is None else geometry.corr(r["W_mm"], r["W*_mm"]))
        row = {"picture": r["picture"], "best": r["best"], "corr(W_mm, W*_mm)": svm_corr,
               "final": {k: (v[-1] if k.startswith("W~") else [x[-1] for x in v]) if v and v[0] is not None else None
                         for k, v in c.items()}}
        rows.append(row)
        f = row["final"]
        if svm_corr is None or f["W~W_mm"] is None:
            order.append(None)
        elif svm_corr >= DISTINCT:
            order.append("same")
        else:
            right = f["W~W_mm"] > f["W~W*_mm"] and all(a > b for a, b in zip(f["KQ~W*_mm"], f["KQ~W_mm"]))
            reversed_ = f["W~W_mm"] < f["W~W*_mm"] or np.mean(f["KQ~W*_mm"]) < np.mean(f["KQ~W_mm"])
            order.append("right" if right else "reversed" if reversed_ else "mixed")
    ev = lambda parts: "; ".join(f"{r['picture']}: " + ("no SVM or a non-finite run" if p is None else
                                                        f"{p.evidence['summary']} ({p.verdict})")
                                 for r, p in zip(results, parts))
    verdict = lambda parts: every(None if p is None else p.verdict for p in parts)
    distinct = [o for o in order if o not in ("same", None)]
    checks = [
        check("the W path converges in direction to W_mm (Frobenius), on every picture", verdict(w_parts), ev(w_parts)),
        check("every (K, Q) path converges in direction to W*_mm (nuclear norm), on every picture (worst start shown)",
              verdict(kq_parts), ev(kq_parts)),
        check("where W_mm and W*_mm differ, W ends closer to W_mm and K Q^T closer to W*_mm",
              "INCONCLUSIVE" if not distinct or None in order else "REFUTED" if "reversed" in distinct
              else "SUPPORTED" if set(distinct) == {"right"} else "INCONCLUSIVE",
              "; ".join(f"{r['picture']}: corr(W_mm, W*_mm) = "
                        + ("-" if r["corr(W_mm, W*_mm)"] is None else f"{r['corr(W_mm, W*_mm)']:.4f}")
                        + f", ordering {o}" for r, o in zip(rows, order))),
    ]
    with_conditions(checks, f"{s.describe()}; finite-horizon proxy 1 - corr <= {TOL:g} throughout [H/2, H]")
    return {"settings": s.to_json(), "pictures": rows, "checks": checks}


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnsvm.interfaces.plotting.common import save_png

    fig, axes = plt.subplots(1, len(results) + 1, figsize=(5.2 * (len(results) + 1), 4.6))
    for ax, r in zip(axes, results):
        X, Z = np.array(r["X"]), np.array(r["Z"])
        d = X.shape[-1]
        for i, (marker, color) in enumerate(zip(("d", "o"), ("c", "y"))):
            for t in range(X.shape[1]):
                best = t == r["best"][i]
                ax.scatter(*X[i, t], marker="*" if best else marker, color=color, s=200 if best else 80,
                           edgecolors="black", zorder=3)
        for key, style, lab in (("W_path", "-", "W_t z_i"), ("KQ_path", "--", "K_t Q_t^T z_i (start 0)")):
            P = np.array(r[key]).reshape(-1, d, d)
            for i, color in enumerate(("tab:red", "tab:blue")):
                ax.plot(*(P @ Z[i]).T, style, color=color, lw=1.5, label=lab if i == 0 else None)
        (x0, x1), (y0, y1) = FRAMES[r["picture"]]
        reach = 2 * max(abs(x0), x1, abs(y0), y1)
        for key, style in (("W_mm", "-"), ("W*_mm", ":")):
            if r[key] is not None:
                W = np.array(r[key]).reshape(d, d)
                for i, color in enumerate(("tab:red", "tab:blue")):
                    q = W @ Z[i]
                    ax.plot([0, reach * q[0] / np.linalg.norm(q)], [0, reach * q[1] / np.linalg.norm(q)], style,
                            color=color, lw=0.8, alpha=0.6, label=f"{key} z_i" if i == 0 else None)
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
        ax.set_title(f"{r['picture']} (the notebook's frame)")
        ax.legend(fontsize=7)
    ax = axes[-1]
    for r, color in zip(results, ("tab:green", "tab:purple")):
        steps = np.array(r["steps"][1:])
        for key, style in (("W~W_mm", "-"), ("KQ~W*_mm", "--")):
            c = r["corr"][key]
            c = c if key.startswith("W~") else (c[0] if c else None)
            if c is not None:
                ax.loglog(steps, np.maximum(1 - np.array(c[1:]), 1e-16), style, color=color,
                          label=f"{r['picture']}: {key.replace('~', ' vs ')}")
    ax.set_xlabel("step")
    ax.set_ylabel("1 - corr")
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_png(fig, path, dpi=100)
    plt.close(fig)


def sweep(s: Settings, out: Path, executor=None, on_done=None, draw: bool = True) -> tuple[dict, list[dict]]:
    """Run (or resume) into `out`: shards/, tfsvm_paths.json (summary, checks, paths), tfsvm_paths.png."""
    out = Path(out)
    results, _ = run_sweep("tfsvm-paths", s, run_shard, out, executor, on_done)
    summary = summarize(s, results)
    finish(out, "tfsvm_paths", {**summary, "runs": results}, (lambda p: plot(results, p)) if draw else None)
    return summary, results
