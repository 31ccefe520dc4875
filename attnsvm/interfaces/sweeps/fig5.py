"""Figure 5 of Max-Margin Token Selection (Section 4, "Transient optimization dynamics and the
influence of the loss function"): the correlation loss -u and the logistic loss bias the early
path of p towards different optimal tokens.

Data (the authors' loss-comparison notebook; `strategies.keyed_dataset`): n = 2, T = 2, Y = (1, 1),
input 1: tokens (0, 0) score 0 and (1, 1) score C; input 2: (0, 0) score 0 and (1, -1) score 1;
both optimal tokens are the second, the GMM direction is (1, 0). p0 = 0, normalized GD lr 0.1,
C in {1, .., 10, 100}. Mirror symmetry: at C = 1 the path stays on the axis p_2 = 0.

The bias is b(C) = p_2 / ||p|| at the transient horizon t* = `window` (the paper draws 200
steps): b > 0 leans towards input 1's high-score token (1, 1) (s_{1,opt} > s_{2,opt}), b < 0
towards input 2's low-score token (1, -1); 1 - s_{i,opt} = sigmoid(-(p_1 +- p_2)) says which
input's optimal token is attended more. Proxies (deterministic data, no seed):
* correlation loss: b(C) > 0 for every C > 1 and non-decreasing in C (REFUTED if b < 0 at the
  largest C);
* logistic loss: b(C) < 0 for every C > 1 and non-increasing in C (REFUTED if b > 0 at the
  largest C);
* the two losses select different tokens: at the largest C the correlation run attends most to
  input 1's optimal token and the logistic run to input 2's (REFUTED if both lean the same way),
  judged only once each run has selected the token it leans towards (its softmax probability
  >= SELECTED = 0.99 at t*; before that, e.g. after one step with 1 - s ~ 0.5, INCONCLUSIVE);
* "more as C grows" needs at least two values of C (INCONCLUSIVE from one); a non-finite run is
  no evidence (INCONCLUSIVE).
|b| <= ZERO counts as no lean.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from attnsvm.claims.verdicts import Report
from attnsvm.interfaces.plotting.common import save_png
from attnsvm.interfaces.sweeps import params
from attnsvm.interfaces.sweeps.figures import finish
from attnsvm.interfaces.sweeps.reports import check, with_conditions
from attnsvm.interfaces.sweeps.shards import Shard, run_sweep

LOSSES = ("correlation", "logistic")
KEYS = [[[0, 0], [1, 1]], [[0, 0], [1, -1]]]
ZERO = 1e-12
SELECTED = 0.99     # a run selects a token once its softmax probability is >= this (fig4's default level)


@dataclass(frozen=True)
class Settings:
    Cs: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100)
    steps: int = 1000
    lr: float = 0.1
    window: int = 200

    PARAMS: ClassVar[dict] = {"Cs": params.Each(params.COUNT), "steps": params.COUNT, "lr": params.STEP,
                              "window": params.COUNT}
    RELATIONS: ClassVar[tuple] = (params.Relation("window", "<=", "steps"),)
    FLAGS: ClassVar[dict] = {"Cs": "C"}

    def __post_init__(self):
        params.validate(self)

    def to_json(self) -> dict:
        return {**asdict(self), "Cs": list(self.Cs)}

    def shards(self) -> list[Shard]:
        return [Shard(loss, {"loss": loss}) for loss in LOSSES]

    def describe(self) -> str:
        return (f"normalized GD lr {self.lr:g} from p0 = 0, bias b = p_2/||p|| at t* = {self.window} "
                f"(H = {self.steps}), C in {list(self.Cs)}; deterministic data")


def dataset(C: int):
    from attnsvm.claims.strategies import keyed_dataset

    return keyed_dataset(KEYS, [[0, C], [0, 1]], name=f"Figure 5, C = {C}")


def run_shard(settings: dict, shard: Shard) -> dict:
    """One loss, every C in one batched run."""
    from attnsvm import dynamics

    s = params.from_json(Settings, settings)
    loss = shard.params["loss"]
    prob = dynamics.Problem.from_datasets([dataset(C) for C in s.Cs], loss)
    tr = dynamics.run(prob, dynamics.NormalizedGD(s.lr), np.zeros(3), s.steps, every=1)
    P = tr.p.cpu().numpy()
    records = []
    for b, C in enumerate(s.Cs):
        pw, pH = P[s.window, b], P[-1, b]
        records.append({"loss": loss, "C": C, "status": tr.status[b], "p_window": pw[:2].tolist(),
                        "p_H": pH[:2].tolist(),
                        "bias": float(pw[1] / np.linalg.norm(pw)), "bias_H": float(pH[1] / np.linalg.norm(pH)),
                        "unsat": [float(1 / (1 + np.exp(pw[0] + sign * pw[1]))) for sign in (1, -1)],   # 1 - s_{i,opt}
                        "path": P[:s.window + 1, b, :2].tolist()})
    return {"records": records}


def _lean(claim: str, recs: list[dict], sign: int, toward: str) -> Report:
    """SUPPORTED needs every C > 1 to lean the claimed way and b monotone in C over at least two
    values of C ("more as C grows" cannot be read from one); REFUTED if the largest C leans the
    other way; a run with a non-finite status is no evidence (INCONCLUSIVE)."""
    b = [r["bias"] for r in recs]
    Cs = [r["C"] for r in recs]
    big = [x for C, x in zip(Cs, b) if C > 1]
    leans = all(sign * x > ZERO for x in big)
    monotone = all(sign * (y - x) >= -ZERO for x, y in zip(b, b[1:]))
    last = sign * b[-1]
    untrusted = [r["C"] for r in recs if r["status"] == "non-finite" or not np.isfinite(r["bias"])]
    if untrusted:
        verdict = "INCONCLUSIVE"
    else:
        verdict = ("SUPPORTED" if leans and monotone and big and len(Cs) >= 2 else "REFUTED" if last < -ZERO
                   else "INCONCLUSIVE")
    return check(claim, verdict, f"b(C) at t* = {dict(zip(Cs, [round(x, 4) for x in b]))}: "
                                 f"{'all' if leans else 'not all'} C > 1 lean towards {toward}, "
                                 f"{'monotone' if monotone else 'not monotone'} in C"
                                 + ("" if len(Cs) >= 2 else " (one C: 'more as C grows' needs at least two)")
                                 + (f"; non-finite run at C = {untrusted} (untrusted)" if untrusted else ""),
                 bias=dict(zip(map(str, Cs), b)))


def _selected(r: dict) -> bool:
    """The run has selected the token it leans towards at t*: 1 - s_{i,opt} <= 1 - SELECTED for
    the input i of its lean (input 1 if b > 0, input 2 if b < 0), on a finite run."""
    if r["status"] == "non-finite" or not np.isfinite(r["bias"]) or abs(r["bias"]) <= ZERO:
        return False
    return r["unsat"][0 if r["bias"] > 0 else 1] <= 1 - SELECTED


def summarize(s: Settings, records: list[dict]) -> dict:
    by = {loss: sorted((r for r in records if r["loss"] == loss), key=lambda r: r["C"]) for loss in LOSSES}
    top = {loss: by[loss][-1] for loss in LOSSES}
    corr_b, log_b = top["correlation"]["bias"], top["logistic"]["bias"]
    selected = all(_selected(top[loss]) for loss in LOSSES)
    if not selected:
        verdict = "INCONCLUSIVE"        # a lean before any token is selected (1 - s ~ 0.5) is no selection
    elif corr_b > ZERO and log_b < -ZERO:
        verdict = "SUPPORTED"
    elif (corr_b > ZERO and log_b > ZERO) or (corr_b < -ZERO and log_b < -ZERO) or (corr_b < -ZERO < ZERO < log_b):
        verdict = "REFUTED"
    else:
        verdict = "INCONCLUSIVE"
    C = top["correlation"]["C"]
    so = {loss: top[loss]["unsat"] for loss in LOSSES}
    checks = [
        _lean("correlation loss: the path leans towards the high-score token (1, 1), more as C grows",
              by["correlation"], 1, "(1, 1)"),
        _lean("logistic loss: the path leans towards the low-score token (1, -1), more as C grows",
              by["logistic"], -1, "(1, -1)"),
        check("the correlation and the logistic loss select different tokens (Figure 5)", verdict,
              f"at C = {C}, t* = {s.window}: correlation b = {corr_b:.4f}, (1 - s_1,opt, 1 - s_2,opt) = "
              f"({so['correlation'][0]:.3g}, {so['correlation'][1]:.3g}); logistic b = {log_b:.4f}, "
              f"(1 - s_1,opt, 1 - s_2,opt) = ({so['logistic'][0]:.3g}, {so['logistic'][1]:.3g})"
              + ("" if selected else f"; not both runs have selected the token they lean towards "
                                     f"(s >= {SELECTED:g}) at t*: no selection to compare")),
    ]
    rows = [{k: r[k] for k in ("loss", "C", "bias", "bias_H", "unsat", "p_window", "p_H", "status")} for r in records]
    return {"settings": s.to_json(), "rows": rows, "checks": with_conditions(checks, s.describe())}


def plot(s: Settings, records: list[dict], path: Path) -> None:
    """Left: the paper's view, paths of the first `window` steps for every C (darker = larger C,
    dashed = the largest), red correlation, blue logistic; right: b(C) for both losses."""
    from attnsvm.interfaces.plotting.common import draw_tokens, new_figure

    fig, (ax1, ax2) = new_figure(2, (12, 5))
    keys = np.array(KEYS, float)
    draw_tokens(ax1, keys, np.array([[0, max(s.Cs)], [0, 1]], float), [1, 1])
    for loss, color in zip(LOSSES, ("tab:red", "tab:blue")):
        recs = sorted((r for r in records if r["loss"] == loss), key=lambda r: r["C"])
        for j, r in enumerate(recs):
            P = np.array(r["path"])
            last = j == len(recs) - 1
            ax1.plot(P[:, 0], P[:, 1], color=color, lw=2.5 if last else 2, ls="--" if last else "-",
                     alpha=1 if last else 0.15 + 0.75 * j / max(1, len(recs) - 1),
                     label=f"{loss} loss, C = {r['C']}" if last or j == len(recs) - 2 else None)
        ax2.plot([r["C"] for r in recs], [r["bias"] for r in recs], "o-", color=color, label=f"{loss} loss")
    ax1.axhline(0, color="0.6", lw=0.8)
    ax1.set(xlim=(-2, 12), ylim=(-6, 6), xlabel="p_1", ylabel="p_2",
            title=f"Figure 5: paths of the first {s.window} steps (tokens 1.2 = (1,1) score C, 2.2 = (1,-1) score 1)")
    ax1.title.set_fontsize(9)
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=7, loc="upper left")
    ax2.axhline(0, color="0.6", lw=0.8)
    ax2.set_xscale("log")
    ax2.set(xlabel="C (score of input 1's optimal token)", ylabel=f"b = p_2 / ||p|| at t = {s.window}",
            title="bias: > 0 towards (1, 1) (high score), < 0 towards (1, -1)")
    ax2.title.set_fontsize(9)
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=8)
    save_png(fig, path)


def sweep(s: Settings, out: Path, executor=None, on_done=None, draw: bool = True) -> tuple[dict, list[dict]]:
    """Run (or resume) into `out`: shards/, fig5.json, fig5.png."""
    out = Path(out)
    _, records = run_sweep("fig5", s, run_shard, out, executor, on_done)
    summary = summarize(s, records)
    finish(out, "fig5", summary, (lambda p: plot(s, records, p)) if draw else None)
    return summary, records
