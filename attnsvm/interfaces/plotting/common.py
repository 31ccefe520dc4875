"""Shared drawing for `attnsvm plot`, in the style of the paper's Figures 1 and 8: 2-D key
embeddings with token scores, max-margin directions (GMM dashed, LMMs dotted), GD paths from
several starts, and a second panel of ||p_t|| and softmax saturation against iterations.

Figures are object-oriented matplotlib on the Agg canvas (no pyplot state, no display);
`save_png` writes atomically through `files.write_atomic` (umask honoured).
The helpers take plain arrays (keys (n, T, 2), paths (R, B, 2)) so any module can use them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from attnsvm import dynamics
from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.dynamics.smoothness import smoothness_constant
from attnsvm.errors import UserError
from attnsvm.svm import geometry

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "h")
LABEL_OFFSETS = ((7, 6), (7, -14), (-22, 6), (-22, -14))
GMM_STYLE = dict(color="black", linestyle="--", linewidth=1.6)
LMM_COLORS = ("tab:red", "tab:purple", "tab:brown", "tab:olive", "tab:cyan")


def new_figure(ncols: int = 2, size: tuple[float, float] = (12.0, 6.2)) -> tuple[Figure, list]:
    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, ncols, k + 1) for k in range(ncols)]
    return fig, axes


def save_png(fig: Figure, out: Path, dpi: int = 110) -> None:
    """Write `fig` to `out` as PNG atomically (`files.write_atomic`: only a regular file or a new
    path, the umask honoured, never half a file)."""
    import io

    from attnsvm.files import write_atomic

    buf = io.BytesIO()
    fig.savefig(buf, dpi=dpi, format="png")
    write_atomic(out, buf.getvalue())


def draw_tokens(ax, keys: np.ndarray, scores: np.ndarray, opt: Sequence[int]) -> None:
    """Tokens at their 2-D keys, coloured by score, one marker per input; optimal tokens get a
    star and every token an 'i.t' label (1-based, as in the papers)."""
    vmin, vmax = float(scores.min()), float(scores.max())
    if vmin == vmax:
        vmin, vmax = vmin - 1, vmax + 1
    sc = None
    for i in range(keys.shape[0]):
        m = MARKERS[i % len(MARKERS)]
        sc = ax.scatter(keys[i, :, 0], keys[i, :, 1], c=scores[i], cmap="viridis", vmin=vmin, vmax=vmax,
                        marker=m, s=110, edgecolors="black", linewidths=0.8, zorder=4, label=f"input {i + 1}")
        ax.scatter(*keys[i, opt[i]], marker="*", s=330, facecolors="none", edgecolors="gold", linewidths=1.8, zorder=5)
        offset = LABEL_OFFSETS[i % len(LABEL_OFFSETS)]          # inputs sharing a key stay readable
        for t in range(keys.shape[1]):
            ax.annotate(f"{i + 1}.{t + 1}", keys[i, t], textcoords="offset points", xytext=offset, fontsize=8, zorder=6)
    if sc is not None:
        ax.figure.colorbar(sc, ax=ax, shrink=0.75, label="score gamma (Def. 1)")


def draw_direction(ax, q: np.ndarray, label: str, gmm: bool, color: str = "black", reach: float = 1.0) -> None:
    """The ray from the origin along q, drawn to length `reach` (GMM dashed, LMMs dotted)."""
    u = np.asarray(q, dtype=float) / np.linalg.norm(q)
    style = GMM_STYLE if gmm else dict(color=color, linestyle=":", linewidth=2.0)
    ax.plot([0, reach * u[0]], [0, reach * u[1]], label=label, zorder=2, **style)


def draw_paths(ax, paths: np.ndarray, labels: Sequence[str], colors: Sequence) -> None:
    """Trajectories paths (R, B, 2): a line per start, a circle at the start, an arrow at the end."""
    for b in range(paths.shape[1]):
        P = paths[:, b]
        ax.plot(P[:, 0], P[:, 1], color=colors[b], linewidth=1.4, alpha=0.9, zorder=3, label=labels[b])
        ax.scatter(*P[0], color=colors[b], s=28, zorder=3)
        k = max(0, len(P) - max(2, len(P) // 40))
        ax.annotate("", xy=P[-1], xytext=P[k], arrowprops=dict(arrowstyle="-|>", color=colors[b], lw=1.4), zorder=3)


def draw_saturation(ax, steps: Sequence[int], norms: np.ndarray, unsat: np.ndarray, labels: Sequence[str],
                    colors: Sequence) -> None:
    """||p_t|| (solid, left axis) and 1 - max_t s_it of the least saturated input (dashed, right
    axis, log scale) against the iteration, per start."""
    x = np.maximum(np.asarray(steps, dtype=float), 1)
    twin = ax.twinx()
    for b in range(norms.shape[1]):
        ax.plot(x, norms[:, b], color=colors[b], linewidth=1.4, label=labels[b])
        twin.plot(x, np.maximum(unsat[:, b], 1e-300), color=colors[b], linestyle="--", linewidth=1.0)
    ax.set_xscale("log")
    twin.set_yscale("log")
    ax.set_xlabel("iteration t")
    ax.set_ylabel("||p_t||  (solid)")
    twin.set_ylabel("1 - max softmax, least saturated input  (dashed)")
    ax.grid(alpha=0.3)


def frame(ax, points: np.ndarray, pad: float = 0.15) -> float:
    """Equal-aspect limits around `points` (k, 2) and the origin; returns the half-diagonal (a
    ray length that reaches the frame's edge)."""
    pts = np.vstack([points.reshape(-1, 2), np.zeros((1, 2))])
    lo, hi = pts.min(0), pts.max(0)
    span = max(float((hi - lo).max()), 1.0)
    mid = (lo + hi) / 2
    half = span * (0.5 + pad)
    ax.set_xlim(mid[0] - half, mid[0] + half)
    ax.set_ylim(mid[1] - half, mid[1] + half)
    ax.set_aspect("equal")
    ax.axhline(0, color="0.85", linewidth=0.8, zorder=0)
    ax.axvline(0, color="0.85", linewidth=0.8, zorder=0)
    ax.grid(alpha=0.25)
    return float(np.linalg.norm(np.abs(mid) + half))


def run_rule(ds: Dataset, rule: str, starts: np.ndarray, steps: int, loss: str = "logistic",
             frames: int = 400) -> tuple[dynamics.Trajectory, float]:
    """Run 'gd' (eta = 1/L_p), 'ngd' (eta 0.25) or 'polyak' (f_star = L_inf) from every start,
    recording about `frames` rows for smooth paths; returns the trajectory and eta (nan for Polyak)."""
    if rule == "gd":
        eta = 1.0 / smoothness_constant(ds, loss)
        update = dynamics.GD(eta)
    elif rule == "ngd":
        eta = 0.25
        update = dynamics.NormalizedGD(eta)
    elif rule == "polyak":
        eta = float("nan")
        update = dynamics.Polyak(f_star="infimum")
    else:
        raise UserError(f"rule must be one of gd, ngd, polyak; got {rule!r}")
    problem = dynamics.Problem.from_datasets([ds] * len(starts), loss)
    every = max(1, steps // frames)
    return dynamics.run(problem, update, starts, steps, every=every), eta


def directions(ds: Dataset, limit: int = 256,
               seconds: float = 30.0) -> tuple[geometry.Selection, list[geometry.Selection]]:
    """The GMM selection and the other locally optimal selections (LMMs) of `ds` that a search of
    at most `limit` selections and `seconds` finds (a picture, not a certificate)."""
    gmm = geometry.gmm(ds)
    return gmm, [s for s in geometry.search(ds, limit, seconds=seconds, known=[gmm]).lmms if not s.is_gmm]


def tokens_label(alpha) -> str:
    """Selected tokens as 1-based 'i.t' labels, matching `draw_tokens`."""
    return "(" + ", ".join(f"{i + 1}.{a + 1}" for i, a in enumerate(alpha)) + ")"


def limit_names(P_final: np.ndarray, gmm: geometry.Selection, others: list[geometry.Selection]) -> list[dict]:
    """Per start: the max-margin direction its final iterate correlates with best."""
    cands = ([("GMM", gmm)] if gmm.feasible else []) + [(f"LMM {tokens_label(s.alpha)}", s) for s in others]
    out = []
    for p in P_final:
        best = max(((name, geometry.corr(p, s.p_mm)) for name, s in cands), key=lambda c: c[1], default=(None, 0.0))
        out.append({"final_p": p.tolist(), "closest": best[0], "corr": best[1]})
    return out


def panel(ds: Dataset, keys2: np.ndarray, tr: dynamics.Trajectory, labels: Sequence[str], title: str,
          axes: list, project=lambda P: P) -> list[dict]:
    """The standard two panels: tokens, directions and paths on the left; norm and saturation on
    the right. `project` maps p (.., d) to the plane of `keys2`. Returns `limit_names` per start."""
    ax, ax2 = axes
    colors = [f"C{k % 10}" for k in range(tr.p.shape[1])]
    paths = project(tr.p.cpu().numpy())
    gmm, others = directions(ds)
    draw_tokens(ax, keys2, model.scores(ds), model.optimal_tokens(ds))
    reach = frame(ax, np.concatenate([keys2.reshape(-1, 2), paths.reshape(-1, 2)]))
    if gmm.feasible:
        draw_direction(ax, project(gmm.p_mm), f"GMM p_mm(opt) = {np.round(gmm.p_mm, 3).tolist()}", True, reach=reach)
    for k, s in enumerate(others):
        draw_direction(ax, project(s.p_mm), f"LMM selecting tokens {tokens_label(s.alpha)} = "
                       f"{np.round(s.p_mm, 3).tolist()}", False, LMM_COLORS[k % len(LMM_COLORS)], reach)
    draw_paths(ax, paths, labels, colors)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("key coordinate 1 (also p_1)")
    ax.set_ylabel("key coordinate 2 (also p_2)")
    ax.figure.legend(*ax.get_legend_handles_labels(), fontsize=7, loc="outside lower center", ncol=3, framealpha=0.9)
    unsat = np.exp(tr.log_unsat.cpu().numpy()).max(-1)
    draw_saturation(ax2, tr.steps, tr.p.norm(dim=-1).cpu().numpy(), unsat, labels, colors)
    ax2.set_title("norm growth and softmax saturation (colours as on the left)", fontsize=10)
    return limit_names(tr.final.cpu().numpy(), gmm, others)
