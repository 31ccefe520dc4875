"""The blueprint's dependency graph as an inline SVG, laid out here (no graphviz, no script
library, nothing fetched).

Layout (Sugiyama's, as graphviz's dot does it): the results are layered left to right, each one
layer right of the last result it uses (a result that uses none sits just before its first user;
one unconnected, in the first layer); an edge that skips layers runs through a waypoint in
each layer it crosses, so it passes between boxes, not through them; barycentre sweeps order
each layer so that few edges cross, and each node is pulled toward its neighbours' height.
Definitions and assumptions sit apart in a lane above the results: their edges, which reach
most results, are drawn but hidden until asked for (the page's toggle) or hovered, so they do
not drown the edges between results.

Each node is a link to its section (`#node-ID`, id `graph-node-ID`) with its statement and
verdicts as hover text (`<title>`); its box is coloured by standing, its lines say its
derivation (D) and check (C) verdicts and how many necessity rows refute, a bar shows its proof
steps by kind. Text is sized from DejaVu Sans' metrics (matplotlib ships the font; the page asks
for it first), so labels fit their boxes and the graph's natural width keeps them at least
11 px on a 1400 px page; the page's script pans and zooms the SVG's viewBox.
"""

from __future__ import annotations

import functools
from html import escape
from statistics import mean

import networkx as nx

STANDING_COLORS = {"proved": "#b9e4bc", "proved modulo": "#e4f2c4", "partial": "#c6dcf5", "refuted": "#f6bfd6",
                   "unsettled": "#fde68a", "unexpected": "#fbcfb0", "incomplete": "#e5e7eb", "not run": "#ffffff",
                   "stated": "#f3f4f6"}
STEP_COLORS = {"symbolic": "#1b5e20", "fixed sizes": "#7cb342", "exact": "#00838f", "numeric": "#f57c00",
               "cited": "#8e24aa", "open": "#d32f2f"}
FONT = "'DejaVu Sans', Verdana, sans-serif"
ID_SIZE, LINE_SIZE = 12.5, 11.5      # px at the graph's natural size
LINE_H = 15.0                        # px between text lines
PAD = 7.0                            # px inside a box, left and right
MAX_ID = 124.0                       # px: a longer id is broken at a hyphen
WIDTH = 1340.0                       # px the layers spread over when their boxes leave room (a 1400 px page)
COL_GAP, ROW_GAP, LANE_GAP = (24.0, 56.0), 12.0, 46.0     # gap between layers: at least, at most
WAYPOINT_H = 6.0                     # px an edge's waypoint takes in a layer
MARGIN = 6.0


@functools.cache
def text_width(text: str, size: float, bold: bool = False) -> float:
    """Width in px of `text` in DejaVu Sans at `size` px."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    props = FontProperties(family="DejaVu Sans", weight="bold" if bold else "normal", size=size)
    return TextToPath().get_text_width_height_descent(text, props, ismath=False)[0]


def id_lines(id: str) -> list[str]:
    """The id on one line, or broken after the hyphen that balances two lines best."""
    if text_width(id, ID_SIZE, True) <= MAX_ID or "-" not in id:
        return [id]
    cuts = [k + 1 for k, ch in enumerate(id) if ch == "-"]
    k = min(cuts, key=lambda c: max(text_width(id[:c], ID_SIZE, True), text_width(id[c:], ID_SIZE, True)))
    return [id[:k], id[k:]]


def lines(n: dict) -> list[str]:
    """The lines under a node's id: its derivation, and its check with how many necessity rows
    refute (definitions and assumptions: their kind)."""
    if n["standing"] == "stated":
        return [n["kind"]]
    rows = [r["report"] for r in n["necessity_rows"] if r["report"]]
    drops = f" · {sum(r['verdict'] == 'REFUTED' for r in rows)}/{len(rows)}" if rows else ""
    modulo = f" · mod {len(n['modulo'])}" if n["standing"] == "proved modulo" else ""
    return [f"D {n['derivation']['verdict'] if n['derivation'] else 'not run'}{modulo}",
            f"C {n['check']['verdict'] if n['check'] else 'not run'}{drops}"]


def hover(n: dict) -> str:
    """The node's hover text: title, statement, standing and verdicts."""
    out = [f"{n['id']}: {n['title']}"]
    if n["statement"]:
        out.append(n["statement"])
    if n["standing"] == "stated":
        return "\n".join(out + [f"({n['kind']}: stated, not proved)"])
    standing = n["standing"] + (f" {', '.join(n['modulo'])}" if n["standing"] == "proved modulo" else "")
    if n["modulo"] and n["standing"] != "proved modulo":
        standing += f"; rests on {', '.join(n['modulo'])}, not proved"
    out.append(f"standing: {standing}")
    for part, label in (("derivation", "derivation"), ("check", "check")):
        r = n[part]
        out.append(f"{label}: {r['verdict']} (expected {' | '.join(r['expected']) or 'a pass'})" if r
                   else f"{label}: not run")
    for row in n["necessity_rows"]:
        out.append(f"without {row['hypothesis']}: {row['report']['verdict'] if row['report'] else 'not run'}")
    return "\n".join(out)


def box_size(n: dict) -> tuple[float, float]:
    ids, rest = id_lines(n["id"]), lines(n)
    w = max([text_width(t, ID_SIZE, True) for t in ids] + [text_width(t, LINE_SIZE) for t in rest])
    return w + 2 * PAD, LINE_H * (len(ids) + len(rest)) + 12.0


def layers(results: list[str], g: nx.DiGraph) -> dict[str, int]:
    """Each result's layer: one right of the last result it uses; a result that uses none just
    before its first user; one with no edge at all in the first layer."""
    layer = {}
    for v in nx.topological_sort(g):
        layer[v] = max((layer[u] + 1 for u in g.predecessors(v)), default=0)
    for v in results:
        if g.in_degree(v) == 0 and g.out_degree(v) > 0:
            layer[v] = min(layer[w] for w in g.successors(v)) - 1
    return layer


def _with_waypoints(results: list[str], g: nx.DiGraph, layer: dict[str, int]):
    """The layered graph with a waypoint in every layer an edge skips: (graph, layer of each
    vertex, each edge's chain of vertices)."""
    h = nx.DiGraph()
    h.add_nodes_from(results)
    lay, chains = dict(layer), {}
    for u, v in g.edges:
        chain = [u] + [("wp", u, v, k) for k in range(layer[u] + 1, layer[v])] + [v]
        for a, b in zip(chain, chain[1:]):
            h.add_edge(a, b)
        for k, w in enumerate(chain[1:-1]):
            lay[w] = layer[u] + 1 + k
        chains[(u, v)] = chain
    return h, lay, chains


def _order(h: nx.DiGraph, lay: dict, start: list) -> list[list]:
    """The vertices of each layer in an order with few crossings (barycentre sweeps)."""
    cols = [[] for _ in range(max(lay.values()) + 1)]
    for v in start:
        cols[lay[v]].append(v)
    rank = {v: k for col in cols for k, v in enumerate(col)}
    for _ in range(4):
        for seq, nbrs in ((range(1, len(cols)), h.predecessors), (range(len(cols) - 2, -1, -1), h.successors)):
            for k in seq:
                bary = {v: mean(rank[u] for u in ns) if (ns := list(nbrs(v))) else rank[v] for v in cols[k]}
                cols[k].sort(key=lambda v: bary[v])
                rank.update({v: j for j, v in enumerate(cols[k])})
    return cols


def _heights(cols: list[list], h: nx.DiGraph, size: dict) -> dict:
    """Vertical centres: each layer in its order within the tallest layer's height, each vertex
    pulled toward its neighbours' mean height as far as its layer leaves room."""
    height = lambda v: size[v][1] if v in size else WAYPOINT_H
    span = max(sum(height(v) for v in col) + ROW_GAP * (len(col) - 1) for col in cols)
    y = {}
    for col in cols:                                 # start: each layer centred
        top = (span - sum(height(v) for v in col) - ROW_GAP * (len(col) - 1)) / 2
        for v in col:
            y[v] = top + height(v) / 2
            top += height(v) + ROW_GAP
    for sweep in range(8):
        for col in (cols if sweep % 2 == 0 else cols[::-1]):
            want = [mean(y[u] for u in ns) if (ns := list(h.predecessors(v)) + list(h.successors(v))) else y[v]
                    for v in col]
            pos, low = [], 0.0
            for v, w in zip(col, want):              # down the layer: no overlap, nothing above the top
                pos.append(max(w, low + height(v) / 2))
                low = pos[-1] + height(v) / 2 + ROW_GAP
            high = span
            for k in range(len(col) - 1, -1, -1):    # up: nothing below the bottom
                pos[k] = min(pos[k], high - height(col[k]) / 2)
                high = pos[k] - height(col[k]) / 2 - ROW_GAP
            y.update(zip(col, pos))
    return y


def layout(bp: dict) -> dict:
    """Box of every node (x, y of its top left, w, h), the layers' x, every edge's points, and the
    graph's size. Results are laid out in layers; definitions and assumptions in a lane above."""
    nodes = {n["id"]: n for n in bp["nodes"]}
    results = [i for i, n in nodes.items() if n["standing"] != "stated"]
    lane = [i for i, n in nodes.items() if n["standing"] == "stated"]
    g = nx.DiGraph()
    g.add_nodes_from(results)
    g.add_edges_from((u, v) for u, v in bp["edges"] if u in g and v in g)
    layer = layers(results, g)
    h, lay, chains = _with_waypoints(results, g, layer)
    cols = _order(h, lay, results + [w for c in chains.values() for w in c[1:-1]])
    size = {i: box_size(nodes[i]) for i in nodes}
    widths = [max([size[v][0] for v in col if v in size], default=0.0) for col in cols]
    gap = min(COL_GAP[1], max(COL_GAP[0], (WIDTH - 2 * MARGIN - sum(widths)) / max(1, len(cols) - 1)))
    xs, left = [], MARGIN
    for w in widths:
        xs.append(left)
        left += w + gap
    total_w = left - gap + MARGIN
    lane_h = max((size[i][1] for i in lane), default=0.0)
    top = MARGIN + (lane_h + LANE_GAP if lane else 0.0)
    ys = _heights(cols, h, size)
    box = {}
    for k, col in enumerate(cols):
        for v in col:
            if v in size:
                w, hh = size[v]
                box[v] = (xs[k] + (widths[k] - w) / 2, top + ys[v] - hh / 2, w, hh)
    total_h = max(b[1] + b[3] for b in box.values()) + MARGIN
    # the lane: in the order of where its edges land, spread over the width
    land = {i: mean(box[v][0] for v in g_succ) if (g_succ := [v for u, v in bp["edges"] if u == i and v in box])
            else 0.0 for i in lane}
    lane = sorted(lane, key=lambda i: land[i])
    free = (total_w - 2 * MARGIN - sum(size[i][0] for i in lane)) / max(1, len(lane))
    x = MARGIN + free / 2
    for i in lane:
        box[i] = (x, MARGIN, *size[i])
        x += size[i][0] + free
    total_w = max(total_w, x - free / 2 + MARGIN)
    points = {}
    for (u, v), chain in chains.items():
        bu, bv = box[u], box[v]
        mid = [(xs[lay[w]] + widths[lay[w]] / 2, top + ys[w]) for w in chain[1:-1]]
        points[(u, v)] = [(bu[0] + bu[2], bu[1] + bu[3] / 2)] + mid + [(bv[0], bv[1] + bv[3] / 2)]
    for u, v in bp["edges"]:
        if u in lane or v in lane:
            bu, bv = box[u], box[v]
            points[(u, v)] = [(bu[0] + bu[2] / 2, bu[1] + bu[3]), (bv[0] + bv[2] / 2, bv[1])]
    return {"box": box, "points": points, "lane": lane, "width": total_w, "height": total_h}


def _path(pts: list[tuple[float, float]], vertical: bool) -> str:
    """A smooth path through the points, leaving and entering each horizontally (a lane edge:
    vertically)."""
    d = f"M{pts[0][0]:.1f},{pts[0][1]:.1f}"
    for (x1, y1), (x2, y2) in zip(pts, pts[1:]):
        if vertical:
            dy = (y2 - y1) / 2
            d += f" C{x1:.1f},{y1 + dy:.1f} {x2:.1f},{y2 - dy:.1f} {x2:.1f},{y2:.1f}"
        else:
            dx = (x2 - x1) / 2
            d += f" C{x1 + dx:.1f},{y1:.1f} {x2 - dx:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
    return d


def _node(n: dict, box: tuple[float, float, float, float]) -> str:
    x, y, w, h = box
    off = n["parts_run"] > n["parts_as_expected"]
    stroke = "#b91c1c" if off else "#374151"
    dash = ' stroke-dasharray="4 2"' if n["standing"] == "proved modulo" else ""
    out = [f'<a href="#node-{escape(n["id"])}" id="graph-node-{escape(n["id"])}" class="gnode" '
           f'data-id="{escape(n["id"])}">',
           f"<title>{escape(hover(n))}</title>",
           f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="5" '
           f'fill="{STANDING_COLORS[n["standing"]]}" stroke="{stroke}" stroke-width="{1.8 if off else 1}"{dash}/>']
    ty = y + 6 + LINE_H * 0.75
    for t in id_lines(n["id"]):
        out.append(f'<text class="label nid" x="{x + w / 2:.1f}" y="{ty:.1f}" font-size="{ID_SIZE}" font-weight="bold">'
                   f"{escape(t)}</text>")
        ty += LINE_H
    for t in lines(n):
        out.append(f'<text class="label" x="{x + w / 2:.1f}" y="{ty:.1f}" font-size="{LINE_SIZE}">{escape(t)}</text>')
        ty += LINE_H
    total, left = sum(n["step_counts"].values()), x + PAD
    for kind, count in n["step_counts"].items():              # the proof's steps by kind
        bw = (w - 2 * PAD) * count / total
        out.append(f'<rect x="{left:.1f}" y="{y + h - 7:.1f}" width="{bw:.1f}" height="4" fill="{STEP_COLORS[kind]}"/>')
        left += bw
    out.append("</a>")
    return "".join(out)


def svg(bp: dict) -> str:
    """The graph as an <svg> element to embed in the page (its natural size in px as width and
    viewBox; the page scales it to fit and pans and zooms it)."""
    lay = layout(bp)
    w, h = lay["width"], lay["height"]
    lane = set(lay["lane"])
    edges = []
    for (u, v), pts in lay["points"].items():
        cls = "edge lane" if u in lane or v in lane else "edge"
        edges.append(f'<path class="{cls}" data-from="{escape(u)}" data-to="{escape(v)}" '
                     f'd="{_path(pts, u in lane or v in lane)}" marker-end="url(#arrow)"/>')
    nodes = [_node(n, lay["box"][n["id"]]) for n in bp["nodes"]]
    return (f'<svg xmlns="http://www.w3.org/2000/svg" id="graph-svg" viewBox="0 0 {w:.0f} {h:.0f}" width="{w:.0f}" '
            f'height="{h:.0f}" font-family="{FONT}" text-anchor="middle" role="img" aria-label="dependency graph">'
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#6b7280"/></marker></defs>'
            f'<g class="edges">{"".join(edges)}</g><g class="nodes">{"".join(nodes)}</g></svg>')
