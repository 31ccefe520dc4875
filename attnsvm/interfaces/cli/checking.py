"""`attnsvm list | check | counterexample | replay`: the results, their verdicts, witnesses."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import typer

from attnsvm.errors import UserError, printable, shell_word
from attnsvm.interfaces.cli.app import BudgetOpt, JsonOpt, SeedOpt, app, consoles

AUTO_WORKERS_FROM = 8     # fan out over processes from this many parts on (fewer: in-process)
WITNESS_DIR = "attnsvm-witnesses"    # `check FILE.py`: where counterexamples to the file's claims go
LOAD_LIMIT = 120.0        # seconds a worker may take to load a claims file for its names


@app.command("list")
def list_results(json_file: Path | None = JsonOpt):
    """The results, their hypotheses, expected verdicts and what their proofs use."""
    from rich.markup import escape
    from rich.table import Table

    from attnsvm.claims import registry
    from attnsvm.files import write_json_atomic

    out, _ = consoles()
    t = Table(title="attnsvm results", expand=out.is_terminal)      # piped: as wide as its content
    for col in ("id", "result", "hypotheses (* necessity shown)", "expected: derivation / check", "uses"):
        # ids whole (they are typed back); the result column, with its statement, gets the room
        t.add_column(col, overflow="fold", no_wrap=col == "id", ratio={"id": None, "result": 3}.get(col, 1))
    rows = []
    for e in registry.all_nodes():
        hyps = [h + ("*" if registry.short(h) in e.necessity else "") for h in e.hypotheses]
        expected = f"{'|'.join(e.derivation)} / {'|'.join(e.check)}" if e.has_parts else e.kind
        title = e.title + (f" (also: {', '.join(e.aliases)})" if e.aliases else "")
        stated = f"{escape(title)} ({escape(e.source)})\n[dim]{escape(e.statement)}[/dim]"    # docs/statements.md
        t.add_row(e.id, stated, ", ".join(hyps), expected, ", ".join(e.uses))
        rows.append({"id": e.id, "kind": e.kind, "title": e.title, "paper": e.paper, "aliases": list(e.aliases),
                     "uses": list(e.uses), "hypotheses": list(e.hypotheses), "statement": e.statement,
                     "source": e.source,
                     "expected": {"derivation": list(e.derivation), "check": list(e.check),
                                  "drops": {h: ["REFUTED"] for h in e.necessity}} if e.has_parts else None})
    for e in registry.all_nodes():
        for a in e.aliases:
            t.add_row(a, f"alias of {e.id}", "", "", "")
    out.print(t)
    if json_file:
        write_json_atomic(json_file, {"results": rows,
                                      "aliases": {a: e.id for e in registry.all_nodes() for a in e.aliases}})


def tasks_of(targets: list[str], budget: str, seed: int, search: bool):
    """The tasks of each target ('all', an id or alias, a claims file), and rows for files that
    could not be loaded."""
    from attnsvm.claims import registry, runner, supervise
    from attnsvm.claims.isolation import CodeError
    from attnsvm.claims.userfiles import declared
    from attnsvm.claims.verdicts import Report, Verdict

    tasks, failed, seen = [], [], set()
    for target in targets:
        file, _, name = claims_target(target)
        if file:
            try:                                 # a claims file is loaded in a worker, never here
                found = supervise.call(declared, file, limit=LOAD_LIMIT)
            except CodeError as e:
                failed.append(Report(Path(file).name, "load", Verdict.INCONCLUSIVE, (), {"note": e.line()},
                                     error=e.to_json()))
                continue
            tasks += runner.file_tasks(file, [claim_variable(file, found, name)] if name else list(found), budget, seed)
            continue
        entries = registry.ENTRIES if target == "all" else [registry.entry(target)]
        for e in entries:
            if e.id in seen:
                continue
            seen.add(e.id)
            if not e.has_parts:
                raise UserError(f"{e.id} is a {e.kind}: it has no parts to check (`attnsvm list` shows results)")
            tasks += runner.result_tasks(e, budget, seed, search)
    return tasks, failed


ExecutorOpt = typer.Option("local", "--executor",
                           help="local (processes on this machine), dask (a local Dask cluster) or tcp://HOST:PORT "
                                "(an existing Dask scheduler)")
WorkersOpt = typer.Option(0, "--workers", min=0,
                          help=f"worker processes (0: CPU count from {AUTO_WORKERS_FROM} parts on, else 1)")


def run_tasks(tasks, executor: str, workers: int, err):
    """Run the tasks on the executor with a progress bar on `err`: (reports in task order, whether
    interrupted). An interrupt cancels what is pending and keeps the parts that finished."""
    done, interrupted = _run_indexed(tasks, executor, workers, err)
    return [done[k] for k in range(len(tasks)) if k in done], interrupted


def _run_indexed(tasks, executor: str, workers: int, err):
    """`run_tasks`, with the reports keyed by their task's index."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from attnsvm.claims import runner, supervise
    from attnsvm.interfaces import executors

    n = workers or ((os.cpu_count() or 1) if len(tasks) >= AUTO_WORKERS_FROM else 1)
    # local: each part in a supervised worker, killed at its limit (claim code may block, fork or exit)
    pool = supervise.parts(min(n, max(1, len(tasks)))) if executor == "local" else \
        executors.pool(executor, min(n, max(1, len(tasks))))
    done: dict[int, object] = {}
    interrupted = False
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=err, transient=True) as bar:
        progress = bar.add_task("checking", total=len(tasks))

        def finished(k: int) -> None:
            """The bar moves on; where it cannot show (stderr not a terminal), one line per part."""
            bar.update(progress, advance=1, description=tasks[k].label)
            if not err.is_terminal:
                r = done[k]
                err.print(f"[{len(done)}/{len(tasks)}] {printable(tasks[k].label)}: {r.verdict}"
                          f"{'' if r.as_expected else ' (NOT as expected)'} ({r.seconds:.1f} s)",
                          markup=False, highlight=False, soft_wrap=True)

        order = range(len(tasks)) if isinstance(pool, executors.Inline) else \
            sorted(range(len(tasks)), key=lambda k: tasks[k].part != "check")              # long parts first
        work = runner.run if executor == "local" else run_part_on_dask
        futures = {k: pool.submit(work, tasks[k]) for k in order}
        try:
            for k, fut in executors.completed(futures):
                done[k] = fut.result()
                finished(k)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            if interrupted:
                executors.abort(pool)
            else:
                pool.shutdown(wait=True, cancel_futures=True)
    return done, interrupted


def run_part_on_dask(task):
    """`runner.run(task)` in a Dask worker, whose own threads draw from the global `random` while
    a Hypothesis strategy runs: Hypothesis takes that for the strategy's use of `random` and warns
    (HypothesisDeprecationWarning), a false alarm the local executor never raises. That one
    warning is silenced there; the task and its report are the same."""
    import warnings

    from attnsvm.claims import runner

    warnings.filterwarnings("ignore", message="Do not use the `random` module inside strategies")
    return runner.run(task)


@app.command()
def check(targets: list[str] = typer.Argument(..., help="result ids, 'all', or Python files of claims"),
          budget: str = BudgetOpt, seed: int = SeedOpt, json_file: Path | None = JsonOpt,
          search: bool = typer.Option(False, "--search", help="search afresh instead of replaying stored witnesses"),
          workers: int = WorkersOpt, executor: str = ExecutorOpt,
          witness_dir: Path = typer.Option(Path(WITNESS_DIR), "--witnesses", metavar="DIR",
                                           help="where the counterexamples to claims from Python files are written "
                                                "(created when one is found)")):
    """Derivation + search + necessity of each hypothesis, as a verdict table. Exit 0 only when
    every verdict is as expected (no expectation: PROVED, CERTIFIED or SUPPORTED). A claim from a
    Python file that is REFUTED gets its witness written to the --witnesses directory, with the
    command that replays it."""
    from attnsvm.claims.budget import get_budget
    from attnsvm.files import check_output, write_json_atomic
    from attnsvm.interfaces.report import print_table, replay_shipped

    out, err = consoles()
    b = get_budget(budget)
    if json_file:
        json_file = check_output(json_file)             # absolute: nothing run later moves it
    if any(claims_target(t)[0] for t in targets):
        check_witness_dir(witness_dir)
        witness_dir = witness_dir.absolute()
    tasks, reports_failed = tasks_of(targets, b.name, seed, search)
    indexed, interrupted = _run_indexed(tasks, executor, workers, err)
    done = [indexed[k] for k in range(len(tasks)) if k in indexed]
    if interrupted and not done:                 # no table of nothing; the JSON says the run was cut short
        if json_file:
            write_json_atomic(json_file, {"budget": b.to_json(), "seed": seed, "interrupted": True, "reports": []})
        err.print(f"interrupted before any of the {len(tasks)} parts finished: no verdict"
                  + (f" ({json_file} records the interrupted run, with no reports)" if json_file else ""),
                  markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(130)
    saved, unsaved = save_user_witnesses([(tasks[k], indexed[k]) for k in sorted(indexed)], witness_dir)
    reports = reports_failed + done
    print_table(reports, out)
    for line in saved:
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    if any(r.evidence.get("shipped_witness") for r in reports):
        out.print(f"shipped witnesses: `attnsvm witnesses` lists them; {replay_shipped('ID--NAME')} replays one",
                  markup=False, highlight=False, soft_wrap=True)
    if json_file:
        write_json_atomic(json_file, {"budget": b.to_json(), "seed": seed, "interrupted": interrupted,
                                      "reports": [r.to_json() for r in reports]})
    if unsaved:                  # the table and the JSON are out; a witness that could not be written is an error
        raise UserError(unsaved[0] + (f" (and {len(unsaved) - 1} more)" if len(unsaved) > 1 else ""))
    if interrupted:
        err.print(f"interrupted after {len(done)} of {len(tasks)} parts"
                  + (f"; the {len(done)} finished saved to {json_file}" if json_file else ""))
        raise typer.Exit(130)
    bad = [r for r in reports if not r.as_expected]
    out.print(f"{len(reports) - len(bad)} of {len(reports)} verdicts as expected")
    raise typer.Exit(1 if bad else 0)


def check_witness_dir(folder: Path, option: str = "--witnesses") -> None:
    """The witness directory must be a writable directory, or a path that can be created as one:
    one-line UserError otherwise (checked before any work is done)."""
    if folder.exists():
        if not folder.is_dir():
            raise UserError(f"{option} {folder}: exists and is not a directory")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise UserError(f"{option} {folder}: directory is not writable")
        return
    parent = folder.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise UserError(f"{option} {folder}: cannot be created ({parent} is not a writable directory)")


def _shown(path) -> str:
    """A path as a user types it back: relative to the current directory when under it."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def save_user_witnesses(pairs, folder: Path) -> tuple[list[str], list[str]]:
    """Write the witness of each REFUTED claim from a user's file (task, report) to `folder` as
    `<file stem>--<variable>.json` (atomically: a file is there whole or not at all). Returns, per
    witness written, the line naming the file and the command that replays it (its path is also
    recorded in the report's evidence, `witness_file`), and one message per witness that could
    not be written. Results of the registry keep their stored witnesses and are not written here."""
    from attnsvm.files import write_json_atomic

    lines, failed, used = [], [], set()
    for task, rep in pairs:
        if task.file is None or rep.witness is None or str(rep.verdict) != "REFUTED":
            continue
        stem = f"{Path(task.file).stem}--{task.name}"
        name, k = f"{stem}.json", 2
        while name in used:                          # two files of the same name in different directories
            name, k = f"{stem}-{k}.json", k + 1
        used.add(name)
        path = folder / name
        try:
            folder.mkdir(parents=True, exist_ok=True)
            write_json_atomic(path, rep.witness)
        except OSError as e:
            failed.append(f"--witnesses {folder}: cannot write the witness of {task.id} ({e.strerror})")
            continue
        except UserError as e:
            failed.append(f"cannot write the witness of {task.id}: {e}")
            continue
        rep.evidence["witness_file"] = _shown(path)
        lines.append(f"{printable(task.id)}: REFUTED; counterexample {printable(_shown(path))}; "
                     f"replay: attnsvm replay {shell_word(_shown(path))} --claims {shell_word(_shown(task.file))}")
    return lines, failed


def claims_target(target: str) -> tuple[str, str, str]:
    """'FILE.py' or 'FILE.py:NAME' -> (file, ':', name); a result id -> ('', '', '')."""
    file, colon, name = target.partition(":")
    return (file, colon, name) if file.endswith(".py") else ("", "", "")


def claim_variable(file: str, found: dict, name: str) -> str:
    """The variable of the claim `name` names in a claims file: its variable, or its
    `Claim(name=...)` (claims are shown everywhere as FILE.py:VARIABLE)."""
    if name in found:
        return name
    named = [var for var, c in found.items() if c.name == name]
    if len(named) == 1:
        return named[0]
    listed = ", ".join(f"{var} (name {c.name!r})" for var, c in found.items())
    if named:
        raise UserError(f"{file}: several claims are named {name!r} ({', '.join(named)}); use the variable")
    raise UserError(f"{file} has no claim {name!r} (a variable or a Claim name); it has {listed}")


def _resolve(target: str):
    """'ID' or 'FILE.py[:NAME]' (NAME: the claim's variable or its `Claim(name=...)`) -> (claim
    named as it is shown everywhere: the id, or 'FILE.py:VARIABLE'; the same as the witness's source)."""
    from attnsvm.claims import registry, supervise
    from attnsvm.claims.isolation import CodeError
    from attnsvm.claims.userfiles import FileClaim, declared

    file, _, name = claims_target(target)
    if file:
        try:                                     # loaded in a worker; here only by reference
            found = supervise.call(declared, file, limit=LOAD_LIMIT)
        except CodeError as e:
            raise UserError(f"{file}: {e.line()}") from None
        if not name:
            if len(found) > 1:
                raise UserError(f"{file} defines several claims ({', '.join(found)}); use {file}:NAME")
            name = next(iter(found))
        var = claim_variable(file, found, name)
        return FileClaim(str(Path(file).resolve()), var, f"{Path(file).name}:{var}", found[var].hypotheses)
    e = registry.entry(target)
    if not e.has_parts:
        raise UserError(f"{e.id} is a {e.kind}: it has no claim")
    return replace(registry.claim(e), name=e.id)


@app.command()
def counterexample(target: str = typer.Argument(..., help="result id, or FILE.py[:NAME] of a user claim (NAME: "
                                                         "its variable or its Claim name)"),
                   drop: list[str] = typer.Option([], "--drop", help="hypothesis to drop (repeatable)"),
                   out_file: Path | None = typer.Option(None, "--out", help="witness file (default ./ID--HYP.json, "
                                                                              "./FILE--VARIABLE[--HYP].json)"),
                   budget: str = BudgetOpt, seed: int = SeedOpt):
    """Search for a counterexample (with hypotheses dropped), minimize it, save it as a witness."""
    from rich.progress import Progress, TextColumn, TimeElapsedColumn

    from attnsvm.claims import registry, supervise, userfiles
    from attnsvm.claims.budget import get_budget
    from attnsvm.claims.search import check as search
    from attnsvm.files import check_output, write_json_atomic
    from attnsvm.interfaces.report import print_table

    out, err = consoles()
    claim = _resolve(target)
    source = claim.name                              # the id, or FILE.py:VARIABLE
    if drop:
        # a result's necessity search may bring its own instance space; a user's claim (source
        # 'FILE.py:NAME') is searched in its own space, with any number of hypotheses dropped
        builtin = ":" not in source
        s = registry.searches(registry.entry(source)).get(drop[0]) if builtin and len(drop) == 1 else None
        claim = claim.drop(*drop, instances=s.instances if s else None)
    import re

    safe = lambda text: re.sub(r"[^A-Za-z0-9._-]", "_", text).lstrip(".") or "_"   # stays in ./
    if ":" in source:                                # a user's claim: FILE--VARIABLE[--HYP], as `check` names it
        file, _, var = source.partition(":")
        stem = f"{safe(Path(file).stem)}--{safe(var)}" + (f"--{safe('-'.join(sorted(drop)))}" if drop else "")
    else:
        stem = f"{safe(claim.name)}--{safe('-'.join(sorted(drop)) or 'none')}"
    path = out_file or Path(f"{stem}.json")
    check_output(path)
    with Progress(TextColumn("searching {task.description}"), TimeElapsedColumn(), console=err, transient=True) as bar:
        bar.add_task(f"{claim.name} {claim.part}")
        rep = supervise.call(userfiles.search, claim, budget, seed, limit=get_budget(budget).limit) \
            if isinstance(claim, userfiles.FileClaim) else search(claim, budget, seed)
    print_table([rep], out)
    if rep.witness is None:
        out.print(f"no counterexample found ({rep.verdict}); nothing written")
        raise typer.Exit(1)
    rep.witness["source"] = source
    write_json_atomic(path, rep.witness)
    out.print(f"witness written to {printable(str(path))} (replay: attnsvm replay {shell_word(str(path))}"
              + (f" --claims {shell_word(claims_target(target)[0])}" if ":" in source else "") + ")",
              markup=False, highlight=False, soft_wrap=True)


def shipped_path(name: str) -> Path:
    """The file of the shipped witness `ID--NAME` (`attnsvm witnesses` lists them)."""
    from attnsvm.claims import registry

    name = name.removesuffix(".json")
    path = registry.WITNESS_DIR / f"{name}.json"
    if "/" in name or "\\" in name or "--" not in name or not path.is_file():
        raise UserError(f"--shipped {name}: no shipped witness of that name (`attnsvm witnesses` lists them)")
    return path


@app.command()
def replay(witness: Path | None = typer.Argument(None, help="a witness JSON file"),
           shipped: str | None = typer.Option(None, "--shipped", metavar="ID--NAME",
                                                 help="a witness shipped with attnsvm "
                                                      "(`attnsvm witnesses` lists them)"),
           json_file: Path | None = JsonOpt,
           claims: Path | None = typer.Option(None, "--claims", help="the Python file of claims the witness refutes "
                                                                       "(witnesses never name code that runs)")):
    """Re-verify a stored witness (a file, or one shipped with attnsvm): it must meet the kept
    hypotheses and refute the conclusion."""
    from attnsvm.claims import registry
    from attnsvm.files import check_output, read_json, write_json_atomic

    out, _ = consoles()
    if (witness is None) == (shipped is None):
        raise UserError("give a witness file or --shipped ID--NAME (`attnsvm witnesses` lists the shipped ones)")
    path = shipped_path(shipped) if shipped else witness
    if json_file:
        check_output(json_file, inputs=(path,))
    shown = shipped.removesuffix(".json") if shipped else str(witness)
    data = read_json(path)                    # before the engine's import: a missing file fails fast
    from attnsvm.claims import supervise, userfiles
    from attnsvm.claims.budget import Budget
    from attnsvm.claims.parameters import DECLARED
    from attnsvm.claims.witnesses import replay_witness, validate
    from attnsvm.interfaces.report import print_table

    w = validate(data, shown)
    source = w["source"]
    if ":" in source:            # a user's claim: only from the file named on the command line
        if claims is None:
            raise UserError(f"{shown}: refutes the claim {source!r} from a Python file; replay it with "
                            f"--claims FILE.py (attnsvm never runs code a witness names)")
        claim = _resolve(f"{claims}:{source.partition(':')[2]}")
    else:
        try:
            e = registry.entry(source)
        except UserError:
            raise UserError(f"{shown}: source {source!r} is not a result id (`attnsvm list`)") from None
        claim = _resolve(e.id)
    dropped = list(w["dropped"])
    if dropped:
        unknown = [h for h in dropped if h not in claim.hypothesis_names()]
        if unknown:
            raise UserError(f"{shown}: dropped hypothesis {unknown[0]!r} is not one of {claim.hypothesis_names()}")
        searches = registry.searches(registry.entry(source)) if ":" not in source else {}
        s = searches.get(dropped[0]) if len(dropped) == 1 else None
        claim = claim.drop(*dropped, instances=s.instances if s else None)
    claim = replace(claim, expected=("REFUTED",))                     # a replay is as expected when it still refutes
    rep = supervise.call(userfiles.replay, w, claim, limit=Budget.from_json(w["budget"]).limit) \
        if isinstance(claim, userfiles.FileClaim) else replay_witness(w, claim, declared=DECLARED.get(claim.name))
    rep.evidence["shipped_witness" if shipped else "witness_file"] = shown
    print_table([rep], out)
    if json_file:
        write_json_atomic(json_file, rep.to_json())
    raise typer.Exit(0 if str(rep.verdict) == "REFUTED" else 1)


@app.command("witnesses")
def list_witnesses(targets: list[str] | None = typer.Argument(None, help="result ids (default: every result)"),
                   export: Path | None = typer.Option(None, "--export", metavar="DIR",
                                                         help="copy them (JSON files) into this directory"),
                   json_file: Path | None = JsonOpt):
    """The counterexamples shipped with attnsvm: what each refutes and the command that replays it
    on any install; --export copies them out, to read or to replay as files."""
    from rich.table import Table

    from attnsvm.claims import registry
    from attnsvm.files import check_output, write_atomic, write_json_atomic
    from attnsvm.interfaces.report import shipped_witnesses

    out, _ = consoles()
    if json_file:
        check_output(json_file)
    if export is not None:
        check_witness_dir(export, "--export")
    entries = registry.ENTRIES if not targets else [registry.entry(t) for t in dict.fromkeys(targets)]
    found = [w for e in entries for w in shipped_witnesses(e)]
    t = Table(title=f"{len(found)} shipped witnesses")
    for col in ("witness", "refutes", "replay"):
        t.add_column(col, overflow="fold", no_wrap=col == "witness")
    for w in found:
        t.add_row(w["name"], w["refutes"], w["replay"])
    out.print(t)
    if export is not None:
        for w in found:
            try:
                export.mkdir(parents=True, exist_ok=True)
                write_atomic(export / w["path"].name, w["path"].read_bytes())
            except OSError as e:
                raise UserError(f"--export {export}: cannot write {w['path'].name} ({e.strerror})") from None
        out.print(f"exported {len(found)} witnesses to {export} (replay one: attnsvm replay "
                  f"{shell_word(_shown(export / 'ID--NAME.json'))})", markup=False, highlight=False, soft_wrap=True)
    if json_file:
        write_json_atomic(json_file, [{k: v for k, v in w.items() if k != "path"} for w in found])
