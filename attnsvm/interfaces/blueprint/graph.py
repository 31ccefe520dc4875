"""The blueprint's dependency graph as an inline SVG with clickable nodes.

Layout: networkx layers the DAG (`topological_generations`: a node sits one layer right of the
last result it uses) and places the layers (`multipartite_layout`); within a layer, nodes are
ordered by the barycentre of their neighbours (down and up sweeps, the usual Sugiyama heuristic)
so that few edges cross. Drawing: matplotlib writes the SVG; each node is a box coloured by its
standing with a bar of its proof steps by kind, linked to its section of the page (`#node-ID`).
Why these and not a JavaScript graph library: both are already dependencies (networkx comes with
torch), the SVG is static and self-contained (no script, no fetch, prints and diffs well), and
matplotlib's SVG backend writes the links (`set_url`) and element ids (`set_gid`) the page needs.
"""

from __future__ import annotations

import io
from statistics import mean

import networkx as nx

STANDING_COLORS = {"proved": "#b9e4bc", "partial": "#c6dcf5", "refuted": "#f6bfd6", "unsettled": "#fde68a",
                   "unexpected": "#fbcfb0", "incomplete": "#e5e7eb", "not run": "#ffffff", "stated": "#f3f4f6"}
STEP_COLORS = {"symbolic": "#1b5e20", "fixed sizes": "#7cb342", "exact": "#00838f", "numeric": "#f57c00",
               "cited": "#8e24aa", "open": "#d32f2f"}
DX, DY = 3.0, 1.0            # layer and row spacing (data units)
BOX_W, BOX_H = 2.45, 0.86


def _ordered_layers(bp: dict) -> dict[int, list[str]]:
    """Layers with their nodes in an order that crosses few edges (barycentre sweeps)."""
    layers: dict[int, list[str]] = {}
    for n in bp["nodes"]:
        layers.setdefault(n["layer"], []).append(n["id"])
    g = nx.DiGraph(bp["edges"])
    g.add_nodes_from(n["id"] for n in bp["nodes"])
    rank = {v: k for layer in layers.values() for k, v in enumerate(layer)}

    def sweep(order, neighbours):
        for key in order:
            layer = layers[key]
            bary = {v: mean(rank[u] for u in nbrs) if (nbrs := list(neighbours(v))) else rank[v] for v in layer}
            layer.sort(key=lambda v: bary[v])
            rank.update({v: k for k, v in enumerate(layer)})

    keys = sorted(layers)
    for _ in range(2):
        sweep(keys[1:], g.predecessors)
        sweep(keys[-2::-1], g.successors)
    return {k: layers[k] for k in keys}


def positions(bp: dict) -> dict[str, tuple[float, float]]:
    """Node centres: layers left to right, rows top to bottom."""
    layers = _ordered_layers(bp)
    pos = nx.multipartite_layout(nx.empty_graph([v for layer in layers.values() for v in layer]),
                                 subset_key=layers, align="vertical")
    xs = sorted({round(float(p[0]), 9) for p in pos.values()})
    ys = sorted({round(float(p[1]), 9) for p in pos.values()})
    gaps = [b - a for a, b in zip(xs, xs[1:])] + [b - a for a, b in zip(ys, ys[1:])]
    unit = min(gaps) if gaps else 1.0
    return {v: (float(p[0]) / unit * DX, -float(p[1]) / unit * DY) for v, p in pos.items()}


def _lines(n: dict) -> tuple[str, str]:
    """The two lines under a node's id: its derivation, and its check with the necessity rows
    that refute (definitions and assumptions: their kind)."""
    if n["standing"] == "stated":
        return n["kind"], ""
    rows = [r["report"] for r in n["necessity_rows"] if r["report"]]
    drops = f" · drops {sum(r['verdict'] == 'REFUTED' for r in rows)}/{len(rows)}" if rows else ""
    return (f"D {n['derivation']['verdict'] if n['derivation'] else 'not run'}",
            f"C {n['check']['verdict'] if n['check'] else 'not run'}{drops}")


def svg(bp: dict) -> str:
    """The graph as an <svg> element (no XML prolog), to embed in the page."""
    from matplotlib import rc_context
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyBboxPatch, Rectangle

    pos = positions(bp)
    xs, ys = [p[0] for p in pos.values()], [p[1] for p in pos.values()]
    x0, x1 = min(xs) - BOX_W / 2 - 0.1, max(xs) + BOX_W / 2 + 0.1
    y0, y1 = min(ys) - BOX_H / 2 - 0.1, max(ys) + BOX_H / 2 + 0.1
    scale = 0.62                                      # inches per data unit
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "attnsvm-blueprint", "font.family": "sans-serif"}):
        fig = Figure(figsize=((x1 - x0) * scale, (y1 - y0) * scale))
        FigureCanvasSVG(fig)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
        ax.set_axis_off()
        boxes = {}
        for n in bp["nodes"]:
            x, y = pos[n["id"]]
            off = n["parts_run"] > n["parts_as_expected"]
            box = FancyBboxPatch((x - BOX_W / 2, y - BOX_H / 2), BOX_W, BOX_H, boxstyle="round,pad=0,rounding_size=0.08",
                                 facecolor=STANDING_COLORS[n["standing"]], edgecolor="#b91c1c" if off else "#374151",
                                 linewidth=1.6 if off else 0.8, zorder=2)
            box.set_url(f"#node-{n['id']}")
            box.set_gid(f"graph-node-{n['id']}")
            ax.add_patch(box)
            boxes[n["id"]] = box
            second, third = _lines(n)
            for dy, text, size, weight in ((0.24, n["id"], 9.5, "bold"), (0.05, second, 7.5, "normal"),
                                           (-0.13, third, 7.5, "normal")):
                if text:
                    t = ax.text(x, y + dy, text, ha="center", va="center", fontsize=size, fontweight=weight, zorder=3)
                    t.set_url(f"#node-{n['id']}")
            total = sum(n["step_counts"].values())
            left = x - BOX_W / 2 + 0.12
            for kind, count in n["step_counts"].items():           # the proof's steps by kind
                w = (BOX_W - 0.24) * count / total
                ax.add_patch(Rectangle((left, y - BOX_H / 2 + 0.05), w, 0.06, facecolor=STEP_COLORS[kind],
                                       edgecolor="none", zorder=3))
                left += w
        for u, v in bp["edges"]:
            span = abs(pos[v][0] - pos[u][0]) / DX
            ax.annotate("", xy=pos[v], xytext=pos[u], zorder=1,
                        arrowprops=dict(arrowstyle="-|>", color="#6b7280", linewidth=0.8, shrinkA=1, shrinkB=1,
                                        patchA=boxes[u], patchB=boxes[v],
                                        connectionstyle=f"arc3,rad={0.12 if span > 1 else 0.0}"))
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]
