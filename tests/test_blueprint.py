"""`attnsvm blueprint`: the page names every node, links it to its section, counts results by
standing as the reports say, shows each proof's steps by kind, each stored witness with its
replay command and each figure, fetches nothing; the Markdown form says the same; the page
renders in headless Chromium when it is installed."""

from __future__ import annotations

import base64
import json
import re
import subprocess
from dataclasses import replace
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest

from cli_run import run
from attnsvm.claims import registry, runner
from attnsvm.claims.budget import Budget
from attnsvm.claims.outline import Outline, Step
from attnsvm.claims.verdicts import Report, Verdict
from attnsvm.interfaces import blueprint
from attnsvm.interfaces.blueprint import collect as C

TINY = Budget("tiny", evaluations=6, seconds=0.0, min_instances=6, horizon=1.0, limit=60.0)
OK = lambda: {"ok": True}                                                   # noqa: E731
PARTIAL_STEPS = (Step("the Hessian of the risk is bounded", "symbolic", verify=OK),
                 Step("the bound's constant, in rationals", "exact", verify=OK),
                 Step("the descent inequality at small sizes", "symbolic", verify=OK, sizes="T = 2..3"),
                 Step("descent along GD iterates", "numeric", reference="checks/lemma6.py"),
                 Step("smoothness of the logistic loss", "cited", reference="Soudry et al. 2018, Lemma 1",
                      by=("assumption-A", "lemma2")))
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def reports():
    """Real reports of four results, one of each standing: lemma2 proved (a fully machine-checked
    outline), lemma6 partial (numeric, cited and fixed-size steps), theorem1 unsettled (an
    INCONCLUSIVE derivation), theorem3 refuted (its stored witness presented as the check of the
    claim as stated)."""
    e2, e6, e3 = (registry.entry(i) for i in ("lemma2", "lemma6", "theorem3"))
    proved = Outline("ATT-SVM(opt) is feasible", (Step("a Farkas argument", "exact", verify=OK),
                                                  Step("the KKT identity", "symbolic", verify=OK))).check("lemma2", ("PROVED",))
    partial = Outline("L_p-smoothness", PARTIAL_STEPS).check("lemma6", ("PARTIAL",))
    reps = [proved, runner.check_report(e2, TINY, 0)] + [runner.necessity_report(e2, h, TINY, 0) for h in e2.necessity]
    reps += [partial, runner.check_report(e6, TINY, 0), runner.necessity_report(e6, "step_size", TINY, 0)]
    reps.append(Report("theorem1", "derivation", Verdict.INCONCLUSIVE, ("PARTIAL",),
                       {"note": "step 3: sympy gave up within the time limit"}))
    w = runner.necessity_report(e3, "locally_optimal", TINY, 0)
    reps.append(replace(w, part="check", expected=("SUPPORTED",)))
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


EXPECTED = {"lemma2": "proved", "lemma6": "partial", "theorem1": "unsettled", "theorem3": "refuted"}


def test_standings_follow_the_reports(site):
    _, bp, _, _, _ = site
    got = {n["id"]: n["standing"] for n in bp["nodes"]}
    for n in registry.all_nodes():
        assert got[n.id] == EXPECTED.get(n.id, "not run" if n.has_parts else "stated"), n.id
    six = next(n for n in bp["nodes"] if n["id"] == "lemma6")
    assert six["rests_on"] == ["fixed sizes", "numeric", "cited"]
    assert six["step_counts"] == {"symbolic": 1, "exact": 1, "fixed sizes": 1, "numeric": 1, "cited": 1}
    s = bp["summary"]
    assert s["by_standing"] == {"proved": 1, "partial": 1, "unsettled": 1, "refuted": 1,
                                "not run": len(registry.RESULTS) - len(EXPECTED)}
    assert s["results"] == len(registry.RESULTS) and s["rests_on"]["cited"] == 1 and s["steps"]["exact"] == 2
    assert s["parts_run"] == 10 and s["parts_as_expected"] == 8
    # theorem3 rests, through what it uses, on results that are not proved on this run
    three = next(n for n in bp["nodes"] if n["id"] == "theorem3")
    ancestors, todo = set(), list(registry.entry("theorem3").uses)
    while todo:
        u = registry.entry(todo.pop())
        if u.id not in ancestors:
            ancestors.add(u.id)
            todo.extend(u.uses)
    results = {e.id for e in registry.RESULTS}
    assert "lemma6" in three["unsettled_ancestors"]
    assert set(three["unsettled_ancestors"]) == {a for a in ancestors & results if EXPECTED.get(a) != "proved"}


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
    for path in registry.WITNESS_DIR.glob("lemma2--*.json"):
        rel = path.relative_to(Path.cwd()).as_posix() if path.is_relative_to(Path.cwd()) else str(path)
        assert f"attnsvm replay {rel}" in two
        assert Path(rel).exists()
    check = next(n for n in bp["nodes"] if n["id"] == "lemma2")["check"]
    assert check["summary"] in two and "SUPPORTED" in two
    srcs = Page(html).srcs
    assert srcs == ["data:image/png;base64," + base64.b64encode(png).decode()]
    external = [u for u in Page(html).hrefs + srcs if re.match(r"[a-z]+:", u) and not u.startswith("data:")]
    assert external == [] and "<link" not in html and "@import" not in html and "<script src" not in html


def test_markdown_says_the_same(site):
    _, bp, _, md, _ = site
    for n in registry.all_nodes():
        assert f"### {n.id}\n" in md
    assert md.count(" --> n") == len(bp["edges"])
    assert "| proved | 1 |" in md and f"| not run | {len(registry.RESULTS) - len(EXPECTED)} |" in md and "| cited steps | 1 | 1 |" in md
    assert "4. [numeric] descent along GD iterates (checks/lemma6.py)" in md
    assert "replay: `attnsvm replay counterexamples/witnesses/lemma2--common_label.json`" in md
    assert "![theorem2](figures/theorem2.png)" in md


def test_page_renders_in_chromium(site):
    """The page as a browser shows it: not blank, and it names every id. The HTML is checked
    always; the browser is used when /usr/bin/chromium is installed (apt-get install chromium)."""
    out, _, html, _, _ = site
    text = " ".join(Page(html).text)
    assert all(n.id in text for n in registry.all_nodes())
    if not CHROMIUM.exists():
        return
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1200,1600"]
    url = (out / "index.html").as_uri()
    dom = subprocess.run([str(CHROMIUM), *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    rendered = " ".join(Page(dom).text)
    assert all(n.id in rendered for n in registry.all_nodes())
    shot = out / "shot.png"
    subprocess.run([str(CHROMIUM), *flags, f"--screenshot={shot}", url], capture_output=True, timeout=120)
    from matplotlib.image import imread

    pixels = imread(shot)[..., :3]
    assert (pixels.min(axis=2) < 0.9).mean() > 0.02          # ink on more than 2% of the first screen


def test_cli_from_a_check_json_and_its_errors(monkeypatch, capsys, reports, tmp_path):
    src = tmp_path / "c.json"
    src.write_text(json.dumps({"budget": {"name": "tiny"}, "seed": 0, "reports": [r.to_json() for r in reports]}))
    code, out, _ = run(monkeypatch, capsys, "blueprint", "--reports", src, "--out", tmp_path / "bp", "--format", "all",
                       "--no-figures")
    assert code == 1 and "8 of 10 parts as expected" in out          # theorem1, theorem3: not as expected
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
    assert two["check"]["verdict"] == "SUPPORTED" and [r["report"]["verdict"] for r in two["necessity_rows"]] == ["REFUTED"] * 3
    assert bp["summary"]["by_standing"]["not run"] == len(registry.RESULTS) - 1 and bp["run"] == {"budget": "quick", "seed": 0, "interrupted": False}
    assert code == (0 if two["parts_as_expected"] == two["parts_run"] else 1) and (tmp_path / "blueprint.md").exists()


def test_an_interrupted_run_writes_the_blueprint_of_the_parts_that_finished(monkeypatch, capsys, tmp_path):
    real, calls = runner.run, []

    def interrupted(task):
        calls.append(task)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(runner, "run", interrupted)
    code, _, err = run(monkeypatch, capsys, "blueprint", "lemma2", "--out", tmp_path, "--no-figures", "--workers", "1")
    bp = json.loads((tmp_path / "blueprint.json").read_text())
    two = next(n for n in bp["nodes"] if n["id"] == "lemma2")
    assert code == 130 and bp["run"]["interrupted"] and "interrupted after 1 of 5 parts" in err
    assert two["parts_run"] == 1 and two["derivation"] and two["check"] is None
    assert two["standing"] == ("unsettled" if two["parts_as_expected"] == 0 else "incomplete")
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
