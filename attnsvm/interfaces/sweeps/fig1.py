"""Figure 1 of Max-Margin Token Selection (Section 2): gradient-descent paths of p from several
starts and the max-margin directions they approach.

The paper's construction (paper A, Section 2.1, Figure 1; `strategies.keyed_dataset`): tokens
x_it = (k_it, Y_i gamma_it) in R^3, W = diag(1, 1, 0), v = e_3, so the keys k_it are drawn in the
plane and the scores are set freely. Panels, with the authors' notebooks' data and starts:

* (a) n = 1, keys (-0.1, 1), (1, 0), (0, 0), scores 1, 0.9, 0.9 (Assumption B): every path
  converges in direction to the GMM p_mm (Theorem 2), and <p_t, p_mm> increases at every step
  (Lemma 4: <grad L(p), p_mm> < 0 for every p under Assumption B); starts (0, y),
  y in {1, 0.5, 0, -0.5, -1, -1.5};
* (b) the same keys, scores 1, 0.9, 0 (no Assumption B): (1, 0) is locally optimal (its only
  SVM-neighbour (0, 0) scores lower), and suitably started paths converge to its LMM direction
  (Theorem 3); every path should end at an LMM or the GMM direction (Theorem 4); same starts;
* (c) n = 3, T = 7: keys 0.2 N(0, I_2) plus shifts (1, 0) for the optimal token, (-1, 1) for
  tokens 2-4, (-0.5, -0.5) for tokens 5-7; scores 1 and 0.5 (Assumption B); drawn from
  `--seed` (the authors' distribution, our generator); starts (x, 0), x in {1, .., -1.5}.

The step is the authors' (lr 0.1 on the normalised gradient, `--rule ngd`) or fixed-step GD
(`--rule gd`). Proxies over the horizon H = `steps`: "converges in direction" = 1 - corr(p_t, q)
at most `tol` throughout [H/2, H] (`figures.vanishing`); "increases at every step" =
no step with <p_{t+1} - p_t, p_mm> below -(rounding of the inner products) on any path.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from attnsvm.claims.verdicts import Report
from attnsvm.interfaces.plotting.common import save_png
from attnsvm.interfaces.sweeps import params
from attnsvm.interfaces.sweeps.figures import finish, vanishing
from attnsvm.interfaces.sweeps.reports import check, every, with_conditions
from attnsvm.interfaces.sweeps.shards import Shard, run_sweep

KEYS_AB = [[["-1/10", 1], [1, 0], [0, 0]]]
SCORES = {"a": [[1, "9/10", "9/10"]], "b": [[1, "9/10", 0]]}
STARTS = {"a": [(0, 1), (0, 0.5), (0, 0), (0, -0.5), (0, -1), (0, -1.5)],
          "c": [(1, 0), (0.5, 0), (0, 0), (-0.5, 0), (-1, 0), (-1.5, 0)]}
STARTS["b"] = STARTS["a"]
SHIFTS = ((1.0, 0.0), (-1.0, 1.0), (-0.5, -0.5))
PANELS = ("a", "b", "c")
EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class Settings:
    steps: int = 1000
    rule: str = "ngd"
    lr: float = 0.1
    tol: float = 0.01
    window: int = 200
    seed: int = 0

    PARAMS: ClassVar[dict] = {"steps": params.HORIZON, "rule": params.Options(("ngd", "gd")), "lr": params.STEP,
                              "tol": params.TOL, "window": params.COUNT, "seed": params.SEED}
    RELATIONS: ClassVar[tuple] = (params.Relation("window", "<=", "steps"),)

    def __post_init__(self):
        params.validate(self)

    def to_json(self) -> dict:
        return asdict(self)

    def shards(self) -> list[Shard]:
        return [Shard(f"panel-{k}", {"panel": k}) for k in PANELS]

    def describe(self) -> str:
        step = "normalized GD" if self.rule == "ngd" else "GD"
        return (f"{step} lr {self.lr:g}, H = {self.steps} steps; directional proxy 1 - corr <= {self.tol:g} throughout "
                f"[H/2, H]; panel (c) data seed {self.seed}")


def dataset(panel: str, seed: int = 0):
    """The panel's `Dataset` (exact rationals; panel (c)'s floats are exact as drawn)."""
    from attnsvm.claims.strategies import keyed_dataset

    if panel in ("a", "b"):
        return keyed_dataset(KEYS_AB, SCORES[panel], name=f"Figure 1({panel})")
    if panel != "c":
        raise ValueError(panel)
    return multi_input(np.random.default_rng([seed, 1]), name=f"Figure 1(c), seed {seed}")


def multi_input(rng: np.random.Generator, name: str = "Figure 1(c)"):
    """Figure 1(c)'s data model (also Figure 4's): n = 3, T = 7, keys 0.2 N(0, I_2) + shifts,
    optimal token first (score 1), the others score 1/2 (Assumption B)."""
    from attnsvm.claims.strategies import keyed_dataset

    keys = 0.2 * rng.standard_normal((3, 7, 2)) + np.array([SHIFTS[0]] + [SHIFTS[1]] * 3 + [SHIFTS[2]] * 3)
    return keyed_dataset(keys.tolist(), [[1] + ["1/2"] * 6] * 3, name=name)


def directions(ds) -> list[dict]:
    """The GMM (first) and the other LMM directions of `ds` (exact Definition 2)."""
    from attnsvm.svm import geometry

    out = []
    for sel in sorted(geometry.lmms(ds), key=lambda s: not s.is_gmm):
        out.append({"alpha": list(sel.alpha), "gmm": bool(sel.is_gmm), "p_mm": np.asarray(sel.p_mm, float).tolist(),
                    "certified": bool(sel.certified)})
    return out


def run_shard(settings: dict, shard: Shard) -> dict:
    """One panel: all starts in one batched run recorded at every step."""
    from attnsvm import dynamics
    from attnsvm.attention import model

    s = Settings(**settings)
    panel = shard.params["panel"]
    ds = dataset(panel, s.seed)
    dirs = directions(ds)
    starts = np.array([[x, y, 0.0] for x, y in STARTS[panel]])
    rule = dynamics.NormalizedGD(s.lr) if s.rule == "ngd" else dynamics.GD(s.lr)
    tr = dynamics.run(dynamics.Problem.from_datasets([ds] * len(starts)), rule, starts, s.steps, every=1)
    P = tr.p.cpu().numpy()                                         # (H+1, S, 3)
    norms = np.linalg.norm(P, axis=-1)
    Q = np.array([d["p_mm"] for d in dirs]).reshape(len(dirs), P.shape[-1])     # (D, 3)
    corr = np.einsum("rsk,dk->rsd", P, Q) / np.maximum(norms[..., None] * np.linalg.norm(Q, axis=-1), 1e-300)
    gmm = next((k for k, d in enumerate(dirs) if d["gmm"]), None)
    h = s.steps // 2
    records = []
    for b, start in enumerate(STARTS[panel]):
        rec = {"panel": panel, "start": list(start), "status": tr.status[b], "final_p": P[-1, b].tolist(),
               "final_norm": float(norms[-1, b]), "corr_mid": corr[h, b].tolist(), "corr_final": corr[-1, b].tolist(),
               "resid_worst": (1 - corr[h:, b]).max(0).tolist(),
               "path": P[:s.window + 1, b, :2].tolist()}
        if gmm is not None:
            ip = P[:, b] @ Q[gmm]
            inc = np.diff(ip)
            rounding = 8 * EPS * norms[1:, b] * np.linalg.norm(Q[gmm])        # rounding of <p_{t+1}, p_mm>
            rec.update(ip_decreases=int(np.sum(inc < -rounding)), ip_flat=int(np.sum(np.abs(inc) <= rounding)),
                       ip_min_increment=float(inc.min()), ip_curve=(ip / np.linalg.norm(Q[gmm]))[::5].tolist())
        records.append(rec)
    return {"panel": panel, "directions": dirs, "keys": ds.X[..., :2].tolist(),
            "scores": (ds.X[..., 2] * ds.Y[:, None]).tolist(), "assumption_b": bool(model.assumption_b(ds)),
            "records": records}


def label(direction: dict) -> str:
    """'GMM', or 'LMM (i.t, ...)' with 1-based input.token labels (as drawn)."""
    if direction["gmm"]:
        return "GMM"
    return "LMM (" + ", ".join(f"{i + 1}.{a + 1}" for i, a in enumerate(direction["alpha"])) + ")"


def _convergence(claim: str, recs: list[dict], k: int | None, s: Settings) -> Report:
    """Every start's path converges in direction to direction k (aggregate of `vanishing`)."""
    if k is None:
        return check(claim, "INCONCLUSIVE", "(ATT-SVM) for the optimal tokens is infeasible on this draw: no GMM")
    per = [vanishing(claim, 1 - r["corr_mid"][k], 1 - r["corr_final"][k], r["resid_worst"][k], s.tol, "") for r in recs]
    verdicts = [c.verdict for c in per]
    verdict = every(verdicts)
    finals = [r["corr_final"][k] for r in recs]
    return check(claim, verdict, f"corr(p_H, p_mm) per start {[round(c, 5) for c in finals]} (min {min(finals):.5f}); "
                                 f"{verdicts.count('SUPPORTED')} of {len(recs)} starts within "
                                 "tolerance throughout [H/2, H]",
                 min_final_corr=min(finals))


def _monotone(claim: str, recs: list[dict], s: Settings) -> Report:
    if any("ip_decreases" not in r for r in recs):
        return check(claim, "INCONCLUSIVE", "(ATT-SVM) for the optimal tokens is infeasible on this draw: no GMM")
    dec = sum(r["ip_decreases"] for r in recs)
    flat = sum(r["ip_flat"] for r in recs)
    steps = s.steps * len(recs)
    verdict = "REFUTED" if dec else "SUPPORTED" if flat == 0 else "INCONCLUSIVE"
    return check(claim, verdict, f"{dec} decreasing and {flat} flat steps (within rounding) of {steps} "
                                 f"({len(recs)} starts x {s.steps}); smallest increment "
                                 f"{min(r['ip_min_increment'] for r in recs):.3g}", decreases=dec, flat=flat)


def _local(recs: list[dict], dirs: list[dict], s: Settings) -> Report:
    claim = ("(b) without Assumption B, suitably started GD converges to an LMM direction (Theorem 3) and every "
             "path to an LMM or the GMM direction (Theorem 4)")
    best = [int(np.argmax(r["corr_final"])) for r in recs]
    per = [vanishing(claim, 1 - r["corr_mid"][k], 1 - r["corr_final"][k], r["resid_worst"][k], s.tol, "").verdict
           for r, k in zip(recs, best)]
    to_lmm = sum(v == "SUPPORTED" and not dirs[k]["gmm"] for v, k in zip(per, best))
    if "REFUTED" in per or (set(per) == {"SUPPORTED"} and to_lmm == 0):
        verdict = "REFUTED"
    elif set(per) == {"SUPPORTED"}:
        verdict = "SUPPORTED"
    else:
        verdict = "INCONCLUSIVE"
    names = [label(dirs[k]) for k in best]
    return check(claim, verdict, f"{len(dirs) - 1} non-global LMM(s); limits per start {names} at corr "
                                 f"{[round(r['corr_final'][k], 5) for r, k in zip(recs, best)]}; {to_lmm} of "
                                 f"{len(recs)} starts converge to a non-global LMM", to_lmm=to_lmm)


def summarize(s: Settings, results: list[dict]) -> dict:
    by = {r["panel"]: r for r in results}
    gmm = lambda p: next((k for k, d in enumerate(by[p]["directions"]) if d["gmm"]), None)
    checks = [
        _convergence("(a) n = 1, Assumption B: every GD path converges in direction to the GMM p_mm (Theorem 2)",
                     by["a"]["records"], gmm("a"), s),
        _monotone("(a) <p_t, p_mm> increases at every step of every path (Lemma 4)", by["a"]["records"], s),
        _local(by["b"]["records"], by["b"]["directions"], s),
        _convergence("(c) n = 3, Assumption B: every GD path converges in direction to the GMM p_mm",
                     by["c"]["records"], gmm("c"), s),
        _monotone("(c) <p_t, p_mm> increases at every step of every path (Lemma 4)", by["c"]["records"], s),
    ]
    rows = []
    for p in PANELS:
        dirs = by[p]["directions"]
        for r in by[p]["records"]:
            k = int(np.argmax(r["corr_final"])) if dirs else None
            rows.append({"panel": p, "start": r["start"], "closest": "none" if k is None else label(dirs[k]),
                         "corr": None if k is None else r["corr_final"][k], "norm": r["final_norm"],
                         "ip_decreases": r.get("ip_decreases"), "status": r["status"]})
    panels = {p: {"directions": by[p]["directions"], "assumption_b": by[p]["assumption_b"]} for p in PANELS}
    return {"settings": s.to_json(), "panels": panels, "rows": rows, "checks": with_conditions(checks, s.describe())}


def plot(s: Settings, results: list[dict], path: Path) -> None:
    """(a), (b), (c): tokens (colour = score, star = optimal), the GMM (dashed) and LMM (dotted)
    directions and the first `window` steps of every path (framed on the tokens, as the paper);
    (d): <p_t, p_mm(GMM)>/||p_mm|| against t on every path ((b)'s LMM-bound paths fall)."""
    from attnsvm.interfaces.plotting.common import (
        LMM_COLORS,
        draw_direction,
        draw_paths,
        draw_tokens,
        frame,
        new_figure,
    )

    fig, axes = new_figure(4, (22, 5.6))
    titles = {"a": "(a) n = 1, scores 1, .9, .9 (Assumption B)", "b": "(b) n = 1, scores 1, .9, 0 (no Assumption B)",
              "c": f"(c) n = 3, T = 7, scores 1 / .5 (seed {s.seed})"}
    for ax, res in zip(axes, results):
        keys, scores = np.array(res["keys"]), np.array(res["scores"])
        draw_tokens(ax, keys, scores, scores.argmax(-1))
        paths = np.array([r["path"] for r in res["records"]]).transpose(1, 0, 2)
        reach = frame(ax, np.concatenate([keys.reshape(-1, 2), paths[:s.window // 4].reshape(-1, 2)]))
        for k, d in enumerate(res["directions"]):
            draw_direction(ax, np.array(d["p_mm"][:2]), label(d),
                           d["gmm"], LMM_COLORS[k % len(LMM_COLORS)], reach)
        draw_paths(ax, paths, [f"p0 = {r['start']}" for r in res["records"]], ["0.45"] * paths.shape[1])
        ax.set_title(titles[res["panel"]] + f"; first {s.window} steps", fontsize=9)
        handles, labels = ax.get_legend_handles_labels()
        keep = [i for i, l in enumerate(labels) if l.startswith(("GMM", "LMM"))]
        ax.legend([handles[i] for i in keep], [labels[i] for i in keep], fontsize=7, loc="lower right")
    ax = axes[3]
    for res, color in zip(results, ("tab:blue", "tab:red", "tab:green")):
        for j, r in enumerate(r for r in res["records"] if "ip_curve" in r):
            t = np.arange(0, s.steps + 1, 5)[:len(r["ip_curve"])]
            ax.plot(t, r["ip_curve"], color=color, lw=1, alpha=0.8, ls="--" if res["panel"] == "b" else "-",
                    label=(f"panel ({res['panel']})" + (" (no Assumption B)" if res["panel"] == "b" else "")
                           if j == 0 else None))
    ax.set(xlabel="iteration t", ylabel="<p_t, p_mm> / ||p_mm||  (p_mm = GMM)")
    ax.set_title("(d) <p_t, p_mm(GMM)>: rises under Assumption B (Lemma 4)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save_png(fig, path)


def sweep(s: Settings, out: Path, executor=None, on_done=None, draw: bool = True) -> tuple[dict, list[dict]]:
    """Run (or resume) into `out`: shards/, fig1.json, fig1.png."""
    out = Path(out)
    results, records = run_sweep("fig1", s, run_shard, out, executor, on_done)
    summary = summarize(s, results)
    finish(out, "fig1", summary, (lambda p: plot(s, results, p)) if draw else None)
    return summary, records
