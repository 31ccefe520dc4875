"""`attnsvm blueprint`: the page names every node, links it to its section, counts results by
standing as the reports say (a result is proved only with everything it rests on, else proved
modulo the results that are not), states every result, shows each proof's steps by kind, each
shipped witness with the command that replays it on any install and each figure, holds no path
of the machine that built it and fetches nothing; the Markdown form says the same; in headless
Chromium, the real command's page shows every node label at 11 px or more at 1400 px, nothing
clipped, and a click on a node opens its section."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import time
from dataclasses import replace
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import networkx as nx
import pytest

from attnsvm.claims import registry, runner
from attnsvm.claims.budget import Budget
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.verdicts import Report, Verdict
from attnsvm.interfaces import blueprint
from attnsvm.interfaces.blueprint import collect as C

from browser import Page as Browser
from cli_run import run

TINY = Budget("tiny", evaluations=6, seconds=0.0, min_instances=6, horizon=1.0, limit=60.0)
OK = lambda: {"ok": True}
PARTIAL_STEPS = (Step("the Hessian of the risk is bounded", "symbolic", verify=OK),
                 Step("the bound's constant, in rationals", "exact", verify=OK),
                 Step("the descent inequality at small sizes", "symbolic", verify=OK, sizes="T = 2..3"),
                 Step("descent along GD iterates", "numeric", reference="checks/lemma6.py"),
                 Step("smoothness of the logistic loss", "cited", reference="Soudry et al. 2018, Lemma 1",
                      by=("assumption-A", "lemma2")))


@pytest.fixture(scope="module")
def reports():
    """Real reports of five results, one of each standing: lemma2 proved (a fully machine-checked
    outline, resting on a definition only), lemma6 partial (numeric, cited and fixed-size steps),
    theorem1 unsettled (an INCONCLUSIVE derivation), theorem3 refuted (its stored witness presented
    as the check of the claim as stated), theorem2-tightness proved modulo what it rests on (its
    own outline machine-checked, its witnesses replayed; theorem2, lemma4, lemma5, lemma6 not
    proved on this run)."""
    e2, e6, e3, et = (registry.entry(i) for i in ("lemma2", "lemma6", "theorem3", "theorem2-tightness"))
    proved = Outline("ATT-SVM(opt) is feasible", (Step("a Farkas argument", "exact", verify=OK),
                                                  Step("the KKT identity", "symbolic", verify=OK))
                     ).check("lemma2", ("PROVED",))
    partial = Outline("L_p-smoothness", PARTIAL_STEPS).check("lemma6", ("PARTIAL",))
    reps = [proved, runner.check_report(e2, TINY, 0)] + [runner.necessity_report(e2, h, TINY, 0) for h in e2.necessity]
    reps += [partial, runner.check_report(e6, TINY, 0), runner.necessity_report(e6, "step_size", TINY, 0)]
    reps.append(Report("theorem1", "derivation", Verdict.INCONCLUSIVE, ("PARTIAL",),
                       {"note": "step 3: sympy gave up within the time limit"}))
    w = runner.necessity_report(e3, "locally_optimal", TINY, 0)
    reps.append(replace(w, part="check", expected=("SUPPORTED",)))
    reps.append(Outline("GD from two starts reaches two limits",
                        (Step("the two limits, in rationals", "exact", verify=OK),),
                        ).check("theorem2-tightness", ("PROVED",)))
    hand, search = (runner.witness_report(et, registry.witness_path(et, n)) for n in ("hand", "search"))
    reps += [replace(hand, part="check", expected=("REFUTED",)), hand, search]
    return reps


@pytest.fixture(scope="module")
def site(reports, tmp_path_factory):
    out = tmp_path_factory.mktemp("blueprint")
    (out / "figures").mkdir()
    png = _tiny_png(out / "figures" / "theorem2.png")
    summary, written = blueprint.build(reports, out, blueprint.FORMATS, {"theorem2": "figures/theorem2.png"},
                                       {"budget": "tiny", "seed": 0})
    bp = json.loads(written["json"].read_text())
    return out, bp, written["html"].read_text(), written["md"].read_text(), png


def _tiny_png(path: Path) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1))
    FigureCanvasAgg(fig)
    fig.add_subplot().plot([0, 1], [1, 0])
    fig.savefig(path, format="png", dpi=20)
    return path.read_bytes()


class Page(HTMLParser):
    """Ids, link targets, sources and the text of an HTML page."""

    def __init__(self, html: str):
        super().__init__()
        self.ids, self.hrefs, self.srcs, self.text, self.cells = set(), [], [], [], {}
        self._cell = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for key in ("href", "xlink:href"):
            if key in a:
                self.hrefs.append(a[key])
        if "src" in a:
            self.srcs.append(a["src"])
        self._cell = a.get("data-standing")

    def handle_data(self, data):
        self.text.append(data)
        if self._cell:
            self.cells[self._cell] = int(data.strip())
            self._cell = None


EXPECTED = {"lemma2": "proved", "lemma6": "partial", "theorem1": "unsettled", "theorem3": "refuted",
            "theorem2-tightness": "proved modulo"}


def test_standings_follow_the_reports_and_what_each_rests_on(site):
    _, bp, _, _, _ = site
    got = {n["id"]: n["standing"] for n in bp["nodes"]}
    for n in registry.all_nodes():
        assert got[n.id] == EXPECTED.get(n.id, "not run" if n.has_parts else "stated"), n.id
    six = next(n for n in bp["nodes"] if n["id"] == "lemma6")
    assert six["rests_on"] == ["fixed sizes", "numeric", "cited"]
    assert six["step_counts"] == {"symbolic": 1, "exact": 1, "fixed sizes": 1, "numeric": 1, "cited": 1}
    s = bp["summary"]
    assert s["by_standing"] == {"proved": 1, "proved modulo": 1, "partial": 1, "unsettled": 1, "refuted": 1,
                                "not run": len(registry.RESULTS) - len(EXPECTED)}
    assert s["results"] == len(registry.RESULTS) and s["rests_on"]["cited"] == 1 and s["steps"]["exact"] == 3
    assert s["parts_run"] == 14 and s["parts_as_expected"] == 12
    # modulo: the results a node rests on through the graph's edges (the registry's `uses` and
    # the steps' `by`) that are not proved on their own; "proved" only when there is none
    edges = nx.DiGraph(bp["edges"])
    results = {e.id for e in registry.RESULTS}
    own = {i: ("proved" if st == "proved modulo" else st) for i, st in got.items()}
    for n in bp["nodes"]:
        rests = nx.ancestors(edges, n["id"]) if n["id"] in edges else set()
        assert set(n["modulo"]) == {a for a in rests & results if own[a] != "proved"}, n["id"]
        assert (n["standing"] == "proved") <= (n["modulo"] == [])
    tight = next(n for n in bp["nodes"] if n["id"] == "theorem2-tightness")
    assert tight["modulo"] == ["lemma4", "lemma6", "theorem2", "lemma5"]        # registry order
    assert next(n for n in bp["nodes"] if n["id"] == "lemma2")["modulo"] == []


def test_edges_are_what_the_proofs_use_and_go_forward(site):
    _, bp, _, _, _ = site
    want = {(u, e.id) for e in registry.all_nodes() for u in e.uses} | {("lemma2", "lemma6")}   # a step's `by`
    assert {tuple(e) for e in bp["edges"]} == want
    layer = {n["id"]: n["layer"] for n in bp["nodes"]}
    assert all(layer[u] < layer[v] for u, v in bp["edges"])
    assert {n["id"]: n["uses"] for n in bp["nodes"]}["lemma6"] == ["assumption-A", "lemma2"]


def test_page_names_every_node_and_opens_its_section_from_the_graph(site):
    _, bp, html, _, _ = site
    page = Page(html)
    for n in registry.all_nodes():
        assert f"node-{n.id}" in page.ids and f"graph-node-{n.id}" in page.ids, n.id
        assert f"#node-{n.id}" in page.hrefs, n.id
    assert page.cells == {k: bp["summary"]["by_standing"].get(k, 0) for k in C.STANDINGS if k != "stated"}


def test_page_shows_steps_evidence_witnesses_and_figures_and_fetches_nothing(site):
    out, bp, html, _, png = site
    section = unescape(html[html.index('id="node-lemma6"'):html.index('id="node-theorem1"')])
    for step in PARTIAL_STEPS:
        assert step.statement in section
    assert "fixed sizes (T = 2..3)" in section and "Soudry et al. 2018, Lemma 1" in section
    assert "Rests on: fixed sizes, numeric, cited steps." in section
    two = unescape(html[html.index('id="node-lemma2"'):html.index('id="node-lemma4"')])
    shipped = sorted(registry.WITNESS_DIR.glob("lemma2--*.json"))
    assert shipped and all(f"attnsvm replay --shipped {path.stem}" in two for path in shipped)
    check = next(n for n in bp["nodes"] if n["id"] == "lemma2")["check"]
    assert check["summary"] in two and "SUPPORTED" in two
    srcs = Page(html).srcs
    assert srcs == ["data:image/png;base64," + base64.b64encode(png).decode()]
    external = [u for u in Page(html).hrefs + srcs if re.match(r"[a-z]+:", u) and not u.startswith("data:")]
    assert external == [] and "<link" not in html and "@import" not in html and "<script src" not in html


def _sections(html: str, raw: bool = True) -> dict[str, str]:
    """Each node's section of the page, as text (`raw=False`: without the raw JSON it folds away)."""
    starts = [(m.group(1), m.start()) for m in re.finditer(r'<details class="node" id="node-([^"]+)"', html)]
    ends = [k for _, k in starts[1:]] + [html.index("<script>", starts[-1][1])]
    cut = (lambda t: t) if raw else (lambda t: re.sub(r"<pre>.*?</pre>", "", t, flags=re.S))
    return {i: unescape(re.sub(r"<[^>]+>", "", cut(html[k:end]))) for (i, k), end in zip(starts, ends)}


def test_every_section_states_its_result_and_links_its_statement(site):
    _, bp, html, md, _ = site
    sections = _sections(html)
    assert set(sections) == {n.id for n in registry.all_nodes()}
    statements = (Path(__file__).parents[1] / "docs" / "statements.md").read_text()
    for e in registry.all_nodes():
        assert f'<a id="{e.id}"></a>' in statements, e.id                      # the link lands on its entry
        text = " ".join(sections[e.id].split())
        for part in (e.title, e.statement, e.source):
            assert " ".join(part.split()) in text, (e.id, part)
        assert f'href="docs/statements.md#{e.id}"' in html and f"(docs/statements.md#{e.id})" in md
        title = e.title.replace("|", "\\|")                                    # Markdown's escaped bar
        assert f"**{title}**" in md and " ".join(e.statement.split()) in " ".join(md.split())
    tight = " ".join(sections["theorem2-tightness"].split())
    assert "Proved modulo lemma4, lemma6, theorem2, lemma5" in tight


def test_the_page_holds_no_path_of_the_machine_that_built_it_and_shows_the_proxy_once(site):
    out, bp, html, md, _ = site
    for text in (html, md, json.dumps(bp)):
        for here in (str(Path.cwd()), str(registry.WITNESS_DIR), str(out), "site-packages", str(Path.home())):
            assert here not in text
    sections = _sections(html, raw=False)
    proxies = [(n["id"], n["check"]["evidence"]["proxy"]) for n in bp["nodes"]
               if n["check"] and n["check"]["evidence"].get("proxy")]
    assert proxies
    for id, proxy in proxies:
        assert sections[id].count(proxy) == 1, id


def test_markdown_says_the_same(site):
    _, bp, _, md, _ = site
    for n in registry.all_nodes():
        assert f"### {n.id}\n" in md
    assert md.count(" --> n") == len(bp["edges"])
    assert "| proved | 1 |" in md and "| proved modulo | 1 |" in md and "| cited steps | 1 | 1 |" in md
    assert f"| not run | {len(registry.RESULTS) - len(EXPECTED)} |" in md
    assert "4. [numeric] descent along GD iterates (checks/lemma6.py)" in md
    assert "replay: `attnsvm replay --shipped lemma2--common_label`" in md
    assert "![theorem2](figures/theorem2.png)" in md
    # the Mermaid graph: every node with its standing and verdicts, and a click to its section
    mermaid = md[md.index("```mermaid"):md.index("```", md.index("```mermaid") + 3)]
    index = {n["id"]: k for k, n in enumerate(bp["nodes"])}
    for n in bp["nodes"]:
        assert f'click n{index[n["id"]]} href "#{n["id"].lower()}"' in mermaid
        if n["standing"] != "stated":
            line = next(x for x in mermaid.splitlines() if x.strip().startswith(f'n{index[n["id"]]}["'))
            assert n["standing"] in line and f"D {n['derivation']['verdict'] if n['derivation'] else 'not run'}" in line
            assert f"C {n['check']['verdict'] if n['check'] else 'not run'}" in line
    assert 'subgraph stated["definitions and assumptions"]' in mermaid


GRAPH_JS = """(() => {
  const svg = document.getElementById("graph-svg"), view = svg.getBoundingClientRect();
  const labels = [...svg.querySelectorAll(".gnode text")].map(t => {
    const r = t.getBoundingClientRect(), box = t.closest("a").querySelector("rect").getBoundingClientRect();
    return {px: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a, text: t.textContent,
            inside: r.left >= box.left - 0.5 && r.right <= box.right + 0.5 &&
                    r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5};
  });
  const boxes = [...svg.querySelectorAll(".gnode")].map(a => {
    const r = a.querySelector("rect").getBoundingClientRect();
    return {id: a.dataset.id, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
  });
  return {labels, boxes, view: {left: view.left, right: view.right, top: view.top, bottom: view.bottom},
          width: innerWidth, viewBox: svg.getAttribute("viewBox"),
          lane: [...svg.querySelectorAll(".edge.lane")].map(p => getComputedStyle(p).display)};
})()"""


def _center(page, id: str) -> tuple[float, float]:
    page.js(f"document.getElementById('graph-node-{id}').scrollIntoView({{block: 'center'}})")
    return tuple(page.js(f"(() => {{ const r = document.querySelector('#graph-node-{id} rect').getBoundingClientRect();"
                         " return [r.left + r.width / 2, r.top + r.height / 2]; })()"))


def _settle(page, expression: str, timeout: float = 5.0):
    """The expression's value once truthy (the page handles an event after its dispatch returns)."""
    deadline = time.monotonic() + timeout
    while not (value := page.js(expression)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


def test_the_real_page_reads_at_a_glance_in_chromium(tmp_path):
    """`attnsvm blueprint` as a user runs it, in headless Chromium at 1400 px: every node label is
    at least 11 px (its font size times the SVG's scale) and inside its box, no box is clipped or
    overlaps another, the definitions' edges are hidden until asked for, hover text carries the
    statement and verdicts, zoom and pan move the view without leaving it, and a click on a node
    opens its section."""
    site = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "attnsvm", "blueprint", "lemma2", "theorem2-tightness",
                        "--out", str(site), "--no-figures"], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    with Browser(1400, 900) as page:
        page.open((site / "index.html").as_uri())
        g = page.js(GRAPH_JS)
        assert len(g["boxes"]) == len(registry.all_nodes()) and g["labels"]
        small = [(x["text"], round(x["px"], 2)) for x in g["labels"] if x["px"] < 11]
        assert not small, small
        assert all(x["inside"] for x in g["labels"]), [x["text"] for x in g["labels"] if not x["inside"]]
        v = g["view"]
        assert 0 <= v["left"] and v["right"] <= g["width"]                     # the whole graph across the page
        for b in g["boxes"]:
            assert (v["left"] <= b["left"] and b["right"] <= v["right"]
                    and v["top"] <= b["top"] and b["bottom"] <= v["bottom"]), b
        for a, b in ((a, b) for k, a in enumerate(g["boxes"]) for b in g["boxes"][k + 1:]):
            assert (a["right"] <= b["left"] or b["right"] <= a["left"]
                    or a["bottom"] <= b["top"] or b["bottom"] <= a["top"]), (a, b)
        assert g["lane"] and set(g["lane"]) == {"none"}
        shot = page.screenshot(tmp_path / "graph-1400.png")
        from matplotlib.image import imread

        assert (imread(shot)[..., :3].min(axis=2) < 0.9).mean() > 0.02           # ink on the first screen
        title = page.js("document.querySelector('#graph-node-theorem2-tightness title').textContent")
        e = registry.entry("theorem2-tightness")
        assert e.statement.split()[0] in title and "proved modulo lemma4, lemma6, theorem2, lemma5" in title
        assert "derivation: PROVED" in title and "check: REFUTED" in title
        page.click(*page.js("(() => { const r = document.getElementById('show-lane').getBoundingClientRect();"
                            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"))
        assert _settle(page, "[...document.querySelectorAll('.edge.lane')].every(p => "
                             "getComputedStyle(p).display !== 'none')")
        page.js("document.querySelector('[data-zoom=in]').click()")
        zoomed = page.js(GRAPH_JS)
        assert min(x["px"] for x in zoomed["labels"]) > min(x["px"] for x in g["labels"]) * 1.3
        x, y = page.js("(() => { const r = document.getElementById('graph-svg').getBoundingClientRect();"
                       " return [r.left + r.width / 2, Math.max(r.top, 0) + 100]; })()")
        page.drag((x, y), (x + 120, y + 40))                                     # a drag pans, never follows a link
        assert page.js(GRAPH_JS)["viewBox"] != zoomed["viewBox"] and page.js("location.hash") == ""
        page.js("document.querySelector('[data-zoom=fit]').click()")
        assert [float(v) for v in page.js(GRAPH_JS)["viewBox"].split()] == [float(v) for v in g["viewBox"].split()]
        page.click(*_center(page, "lemma2"))
        assert _settle(page, "document.getElementById('node-lemma2').open")
        assert page.js("location.hash") == "#node-lemma2"
        top = page.js("document.getElementById('node-lemma2').getBoundingClientRect().top")
        assert -1 <= top < 900                                                   # its section is on screen


def test_cli_from_a_check_json_and_its_errors(monkeypatch, capsys, reports, tmp_path):
    src = tmp_path / "c.json"
    src.write_text(json.dumps({"budget": {"name": "tiny"}, "seed": 0, "reports": [r.to_json() for r in reports]}))
    code, out, _ = run(monkeypatch, capsys, "blueprint", "--reports", src, "--out", tmp_path / "bp", "--format", "all",
                       "--no-figures")
    assert code == 1 and "12 of 14 parts as expected" in out         # theorem1, theorem3: not as expected
    assert {p.name for p in (tmp_path / "bp").iterdir()} == {"index.html", "blueprint.md", "blueprint.json"}
    for args, message in ((["--out", src], "is not a directory"), (["--out", tmp_path / "no" / "bp"], "does not exist"),
                          (["--out", tmp_path / "x", "--format", "pdf"], "--format")):
        code, out, err = run(monkeypatch, capsys, "blueprint", "--reports", src, *args)
        assert code == 2 and message in err and err.count("\n") == 1, err
    bad = tmp_path / "bad.json"
    bad.write_text('{"reports": [{"id": "lemma2"}]}')
    code, _, err = run(monkeypatch, capsys, "blueprint", "--reports", bad, "--out", tmp_path / "y")
    assert code == 2 and "malformed" in err and not (tmp_path / "y" / "index.html").exists()


def test_cli_runs_the_results_it_is_given(monkeypatch, capsys, tmp_path):
    code, out, _ = run(monkeypatch, capsys, "blueprint", "lemma2", "--out", tmp_path, "--format", "md", "--no-figures",
                       "--workers", "1")
    bp = json.loads((tmp_path / "blueprint.json").read_text())
    two = next(n for n in bp["nodes"] if n["id"] == "lemma2")
    assert two["check"]["verdict"] == "SUPPORTED"
    assert [r["report"]["verdict"] for r in two["necessity_rows"]] == ["REFUTED"] * 3
    assert bp["summary"]["by_standing"]["not run"] == len(registry.RESULTS) - 1
    assert bp["run"] == {"budget": "quick", "seed": 0, "interrupted": False}
    assert code == (0 if two["parts_as_expected"] == two["parts_run"] else 1) and (tmp_path / "blueprint.md").exists()


def test_an_interrupted_run_writes_the_blueprint_of_the_parts_that_finished(monkeypatch, capsys, tmp_path):
    """An interrupt once the first part's report is in (the parts run in workers the test cannot
    reach, so the interrupt comes where the command collects them)."""
    from attnsvm.interfaces import executors

    real = executors.completed

    def interrupted(futures):
        for pair in real(futures):
            yield pair
            raise KeyboardInterrupt

    monkeypatch.setattr(executors, "completed", interrupted)
    code, _, err = run(monkeypatch, capsys, "blueprint", "lemma2", "--out", tmp_path, "--no-figures", "--workers", "1")
    bp = json.loads((tmp_path / "blueprint.json").read_text())
    two = next(n for n in bp["nodes"] if n["id"] == "lemma2")
    assert code == 130 and bp["run"]["interrupted"] and "interrupted after 1 of 5 parts" in err
    assert two["parts_run"] == 1 and two["standing"] in ("unsettled", "unexpected", "refuted", "incomplete")
    assert two["standing"] == "incomplete" or two["parts_as_expected"] == 0
    assert "The run was interrupted" in (tmp_path / "index.html").read_text()


@pytest.mark.parametrize("change, field", [
    ({"evidence": [1]}, "evidence"), ({"part": ["x"]}, "part"), ({"evidence": {"steps": [{}]}}, "steps[0].status"),
    ({"evidence": {"steps": "abc"}}, "evidence.steps"), ({"evidence": {"steps": [1]}}, "steps[0]"),
    ({"evidence": {"steps": [{"status": "symbolic", "by": "x"}]}}, "steps[0].by"), ({"id": 5}, "id"),
    ({"expected": "PROVED"}, "expected"), ({"seconds": "x"}, "seconds")])
def test_malformed_reports_file_is_one_line_naming_the_field(monkeypatch, capsys, tmp_path, change, field):
    base = {"id": "lemma1", "part": "derivation", "verdict": "PROVED", "expected": ["PROVED"], "as_expected": True,
            "evidence": {}, "witness": None, "error": None, "seconds": 0}
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"reports": [dict(base, **change)]}))
    code, out, err = run(monkeypatch, capsys, "blueprint", "--reports", f, "--out", tmp_path / "bp", "--no-figures")
    assert code == 2 and err.startswith(f"error: {f}") and field in err and err.count("\n") == 1, err
    assert not (tmp_path / "bp").exists()
