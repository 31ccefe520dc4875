"""The `attnsvm` command line. Exit codes: 0 all as expected, 1 not, 2 usage or input error."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path
from typing import Optional

import numpy as np
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from attnsvm.attention.data import load_dataset
from attnsvm.claims import engine as C
from attnsvm.claims import registry, runner
from attnsvm.errors import UserError
from attnsvm.files import read_json, write_json_atomic
from attnsvm.interfaces.report import print_table
from attnsvm.interfaces.sweeps.cli import app as reproduce_app

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Check results on attention as max-margin token selection.")
out = Console(width=None if sys.stdout.isatty() else 150)
err = Console(stderr=True)

BudgetOpt = typer.Option("quick", "--budget", help="quick | standard | thorough")
SeedOpt = typer.Option(0, "--seed", help="random seed (every run is reproducible from it)")
JsonOpt = typer.Option(None, "--json", help="also write machine-readable results to this file")


# ---- claims from files ----------------------------------------------------------------

def load_claims_file(path: str) -> dict[str, C.Claim]:
    """Module-level Claim objects of a user's Python file, by variable name."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{p}: no such file")
    spec = importlib.util.spec_from_file_location(f"attnsvm_user_{p.stem}", p)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001 - user code: one line, no traceback
        line = getattr(e, "lineno", None)
        raise UserError(f"{p}: cannot load ({e.__class__.__name__}: {e}{f', line {line}' if line else ''})") from None
    found = {k: v for k, v in vars(mod).items() if isinstance(v, C.Claim)}
    if not found:
        raise UserError(f"{p}: defines no attnsvm.claims.Claim objects")
    return found


def resolve_claim(target: str) -> tuple[C.Claim, str]:
    """'ID' or 'FILE.py' (one claim) or 'FILE.py:NAME' -> (claim, source string for witnesses)."""
    file, _, name = target.partition(":") if target.split(":")[0].endswith(".py") else (target, "", "")
    if file.endswith(".py"):
        found = load_claims_file(file)
        if not name:
            if len(found) > 1:
                raise UserError(f"{file} defines several claims ({', '.join(found)}); use {file}:NAME")
            name = next(iter(found))
        if name not in found:
            raise UserError(f"{file} has no claim {name!r}; it has {', '.join(found)}")
        return found[name], f"{Path(file).resolve()}:{name}"
    e = registry.entry(target)
    return replace(registry.claim(e), name=e.id), e.id


# ---- commands -------------------------------------------------------------------------

@app.command("list")
def list_results(json_file: Optional[Path] = JsonOpt):
    """The results, their hypotheses and expected verdicts."""
    t = Table(title="attnsvm results")
    for col in ("id", "result", "hypotheses", "expected: derivation / check / each drop"):
        t.add_column(col, overflow="fold")
    rows = []
    for e in registry.ENTRIES:
        try:
            hyps = registry.claim(e).hypothesis_names()
            drops = {h: "|".join(s.expected) for h, s in registry.searches(e).items()}
        except ModuleNotFoundError:
            hyps, drops = ["(not encoded yet)"], {}
        rows.append({"id": e.id, "title": e.title, "paper": e.paper, "hypotheses": hyps,
                     "expected": {"derivation": list(e.derivation), "check": list(e.check), "drops": drops}})
        t.add_row(e.id, e.title, ", ".join(hyps),
                  f"{'|'.join(e.derivation)} / {'|'.join(e.check)}" + "".join(f" / -{h}: {v}" for h, v in drops.items()))
    out.print(t)
    if json_file:
        write_json_atomic(json_file, {"results": rows})


def _targets(targets: list[str]) -> list:
    items = []
    for t in targets:
        if t == "all":
            items += registry.ENTRIES
        elif t.endswith(".py"):
            items += [(t, name, c) for name, c in load_claims_file(t).items()]
        else:
            items.append(registry.entry(t))
    return items


@app.command()
def check(targets: list[str] = typer.Argument(..., help="result ids, 'all', or a Python file of claims"),
          budget: str = BudgetOpt, seed: int = SeedOpt, json_file: Optional[Path] = JsonOpt,
          search: bool = typer.Option(False, "--search", help="search afresh instead of replaying stored witnesses")):
    """Derivation + randomized check + necessity of each hypothesis, as a verdict table."""
    b = C.get_budget(budget)
    items = _targets(targets)
    if json_file and not json_file.resolve().parent.is_dir():
        raise UserError(f"{json_file}: directory {json_file.parent} does not exist")
    total = sum(runner.parts(i) if isinstance(i, registry.Entry) else 1 for i in items)
    reports: list[C.Report] = []
    interrupted = False
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=err, transient=True) as bar:
        task = bar.add_task("checking", total=total)
        try:
            for item in items:
                if isinstance(item, registry.Entry):
                    bar.update(task, description=f"{item.id}")
                    for r in runner.reports(item, b, seed, search):
                        reports.append(r)
                        bar.advance(task)
                else:
                    file, name, claim = item
                    bar.update(task, description=f"{file}:{name}")
                    reports.append(C.check(replace(claim, name=f"{Path(file).name}:{name}"), b, seed))
                    bar.advance(task)
        except KeyboardInterrupt:
            interrupted = True
    print_table(reports, out)
    if json_file:
        write_json_atomic(json_file, {"budget": b.name, "seed": seed, "interrupted": interrupted,
                                      "reports": [r.to_json() for r in reports]})
    if interrupted:
        err.print(f"interrupted after {len(reports)} of {total} parts" + (f"; completed parts saved to {json_file}" if json_file else ""))
        raise typer.Exit(130)
    bad = [r for r in reports if not r.as_expected]
    out.print(f"{len(reports) - len(bad)} of {len(reports)} verdicts as expected")
    raise typer.Exit(1 if bad else 0)


@app.command()
def counterexample(target: str = typer.Argument(..., help="result id, or FILE.py[:NAME] of a user claim"),
                   drop: list[str] = typer.Option([], "--drop", help="hypothesis to drop (repeatable)"),
                   out_file: Optional[Path] = typer.Option(None, "--out", help="witness file (default ./ID--HYP.json)"),
                   budget: str = typer.Option("standard", "--budget"), seed: int = SeedOpt):
    """Search for a counterexample (with hypotheses dropped), minimize it, save it as a witness."""
    claim, source = resolve_claim(target)
    if drop:
        claim = claim.drop(*drop, instances=_search_strategy(target, drop))
    with Progress(TextColumn("searching {task.description}"), TimeElapsedColumn(), console=err, transient=True) as bar:
        bar.add_task(f"{claim.name} {claim.part}")
        rep = C.check(claim, budget, seed)
    print_table([rep], out)
    if rep.witness is None:
        out.print(f"no counterexample found ({rep.verdict}); nothing written")
        raise typer.Exit(1)
    rep.witness["source"] = source
    path = out_file or Path(f"{claim.name.replace(':', '_')}--{'-'.join(sorted(drop)) or 'none'}.json")
    write_json_atomic(path, rep.witness)
    out.print(f"witness written to {path} (replay: attnsvm replay {path})")


def _search_strategy(target: str, drop: list[str]):
    """A registry result's targeted search strategy for a single dropped hypothesis, if any."""
    if target.endswith(".py") or ":" in target or len(drop) != 1:
        return None
    s = registry.searches(registry.entry(target)).get(drop[0])
    return s.instances if s else None


@app.command()
def replay(witness: Path = typer.Argument(..., help="a witness JSON file"), json_file: Optional[Path] = JsonOpt):
    """Re-verify a stored witness: it must meet the kept hypotheses and refute the conclusion."""
    w = read_json(witness)
    if not isinstance(w, dict) or w.get("format") != C.WITNESS_FORMAT or "instance" not in w:
        raise UserError(f"{witness}: not an attnsvm witness (expected format {C.WITNESS_FORMAT!r})")
    claim, _ = resolve_claim(str(w.get("source") or w.get("claim")))
    dropped = list(w.get("dropped", []))
    if dropped:
        claim = claim.drop(*dropped)
    try:
        rep = C.replay_witness(w, claim)
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, UserError):
            raise
        raise UserError(f"{witness}: malformed witness ({e.__class__.__name__}: {e})") from None
    rep.evidence["witness_file"] = str(witness)
    print_table([rep], out)
    if json_file:
        write_json_atomic(json_file, rep.to_json())
    raise typer.Exit(0 if str(rep.verdict) == "REFUTED" else 1)


@app.command()
def analyze(data: Path = typer.Argument(..., help="dataset JSON file"), json_file: Optional[Path] = JsonOpt,
            limit: int = typer.Option(4096, "--limit", help="enumerate all T^n selections up to this many, else sample")):
    """Scores, optimal tokens, GMM and every LMM with its SVM-neighbours and certificate status."""
    from attnsvm.interfaces.analysis import analyze_dataset

    ds = load_dataset(data)
    res = analyze_dataset(ds, limit)
    t = Table(title=f"{ds.name}: n={ds.n}, T={ds.T}, d={ds.d}; optimal tokens {res['optimal_tokens']}"
              f"{'' if res['strict_optimality'] else ' (ties)'}; {res['lmm_search']}")
    for col in ("alpha", "LMM", "GMM", "p_mm", "neighbours T_i", "score gap", "certified"):
        t.add_column(col, overflow="fold")
    for s in res["lmms"]:
        t.add_row(str(s["alpha"]), "yes", "yes" if s["is_gmm"] else "", np.array2string(np.array(s["p_mm"]), precision=4),
                  str(s["neighbors"]), f"{s['score_gap']:.4g}", "exact" if s["certified"] else "numeric")
    out.print(t)
    g = res["gmm"]
    out.print(f"GMM: {'feasible' if g['feasible'] else 'infeasible (' + g['status'] + ')'}"
              + (f", p_mm = {np.array2string(np.array(g['p_mm']), precision=4)}" if g["feasible"] else ""))
    if json_file:
        write_json_atomic(json_file, res)


@app.command("run")
def run_dynamics(data: Path = typer.Argument(..., help="dataset JSON file"),
                 rule: str = typer.Option("gd", "--rule", help="gd | ngd | polyak"),
                 steps: int = typer.Option(1000, "--steps"), lr: Optional[float] = typer.Option(None, "--lr", help="step size (gd default 1/L_p, Lemma 6; ngd default 0.1)"),
                 init: Optional[str] = typer.Option(None, "--init", help="start p_0, comma-separated (default 0)"),
                 loss: str = typer.Option("logistic", "--loss"), json_file: Optional[Path] = JsonOpt):
    """Run GD / normalized GD / Polyak from p_0 and report the limit: which LMM it aligns with."""
    from attnsvm.interfaces.analysis import run_report

    ds = load_dataset(data)
    p0 = _vector(init, ds.d) if init else np.zeros(ds.d)
    if steps < 1:
        raise UserError("--steps must be >= 1")
    res = run_report(ds, rule, steps, lr, p0, loss)
    t = Table(title=f"{rule} for {steps} steps (eta {res['eta']:.4g}) from {p0.tolist()}: status {res['status']}")
    t.add_column("quantity")
    t.add_column("value", overflow="fold")
    for k in ("final_p", "norm", "direction", "selected_tokens", "max_log_unsaturation", "aligned_with", "best_corr"):
        t.add_row(k, str(res[k]))
    out.print(t)
    for c in res["correlations"]:
        out.print(f"  corr with LMM alpha={c['alpha']}{' (GMM)' if c['is_gmm'] else ''}: {c['corr']:.6f}")
    if json_file:
        write_json_atomic(json_file, res)


def _vector(text: str, d: int) -> np.ndarray:
    try:
        v = np.array([float(x) for x in text.split(",")])
    except ValueError:
        raise UserError(f"--init: expected {d} comma-separated numbers, got {text!r}") from None
    if v.shape != (d,) or not np.all(np.isfinite(v)):
        raise UserError(f"--init: expected {d} finite comma-separated numbers, got {text!r}")
    return v


@app.command()
def plot(target: str = typer.Argument(..., help="a result id, or a 2-D dataset JSON file"),
         out_file: Path = typer.Option(..., "--out", help="PNG file to write"), seed: int = SeedOpt,
         budget: str = BudgetOpt):
    """Draw a result's picture (tokens, SVM directions, GD trajectories, rate curves)."""
    from attnsvm.interfaces import plotting

    if not out_file.resolve().parent.is_dir():
        raise UserError(f"{out_file}: directory {out_file.parent} does not exist")
    if target.endswith(".json"):
        from attnsvm.interfaces.plotting.dataset import plot_dataset

        info = plot_dataset(load_dataset(target), out_file, seed=seed)
    else:
        info = plotting.plot_result(target, out_file, seed=seed, budget=budget)
    out.print(f"wrote {out_file}" + (f": {info.get('summary')}" if isinstance(info, dict) and info.get("summary") else ""))


app.add_typer(reproduce_app, name="reproduce", help="Reproduce the papers' experiments (batched sweeps).")


def main() -> None:
    try:
        app()
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)      # one line, never wrapped
        sys.exit(2)
