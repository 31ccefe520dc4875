"""`attnsvm analyze | run | plot`: one dataset's geometry, dynamics and pictures."""

from __future__ import annotations

from pathlib import Path

import typer

from attnsvm.errors import UserError
from attnsvm.files import MAX_FILE_BYTES
from attnsvm.interfaces.cli.app import BudgetOpt, JsonOpt, SeedOpt, app, consoles

MAX_STEPS = 10**8          # `run --steps` (the work estimate usually refuses far fewer first)
AllowLargeOpt = typer.Option(False, "--allow-large", help="read datasets over the input-file size limit and run "
                             "past the memory and work estimates' limits (see attnsvm.interfaces.cost)")
SecondsOpt = typer.Option(30.0, "--seconds",
                          help="stop the LMM search after this long (the set is then not exhaustive)")


def _load(path: Path, allow_large: bool, steps: int = 0):
    """The dataset at `path`, refused before it is built when its estimated cost is over the
    limits (`cost.admit`), unless --allow-large."""
    from attnsvm.attention.data import load_dataset
    from attnsvm.interfaces import cost

    return load_dataset(path, None if allow_large else MAX_FILE_BYTES,
                        admit=lambda obj: cost.admit(cost.Shape.of(obj), steps, allow_large))


def _seconds(seconds: float) -> float:
    if not (seconds > 0 and seconds < float("inf")):
        raise UserError(f"--seconds must be a positive finite number, got {seconds}")
    return seconds


@app.command()
def analyze(data: Path = typer.Argument(..., help="dataset JSON file"), json_file: Path | None = JsonOpt,
            limit: int = typer.Option(4096, "--limit", min=1,
                                      help="enumerate all T^n selections up to this many, else sample this many"),
            seconds: float = SecondsOpt,
            screen: bool | None = typer.Option(None, "--screen/--no-screen",
                                               help="skip certificates of robust non-LMMs "
                                                    "(default: only when sampling)"),
            allow_large: bool = AllowLargeOpt):
    """Scores, optimal tokens, GMM and every LMM with its SVM-neighbours and certificate status, and whether the LMM set is exact."""  # noqa: E501 - one line: typer shows a docstring's line breaks in the command list
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from attnsvm.errors import printable
    from attnsvm.files import check_output, write_json_atomic

    out, err = consoles()
    _seconds(seconds)
    if json_file:
        json_file = check_output(json_file, inputs=(data,))
    ds = _load(data, allow_large)
    from attnsvm.interfaces.analysis import analyze_dataset  # (after the data: a bad file fails fast)
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task("analyzing", total=None)
        res = analyze_dataset(ds, limit, seconds, screen,
                              progress=lambda what, done, total: bar.update(task, description=what, completed=done,
                                                                            total=total))
    t = Table(title=f"{escape(printable(ds.name))}: n={ds.n}, T={ds.T}, d={ds.d}; optimal tokens "
                    f"{_short(res['optimal_tokens'])}"
              f"{'' if res['strict_optimality'] else ' (ties)'}")
    for col in ("alpha", "LMM", "GMM", "p_mm", "neighbours T_i", "score gap", "decided"):
        t.add_column(col, overflow="fold")
    for s in res["lmms"]:
        t.add_row(_short(s["alpha"]), "yes", "yes" if s["is_gmm"] else "", _short(s["p_mm"], 4),
                  _short(s["neighbors"]), _gap(s), s["decision"])
    out.print(t)
    out.print(res["lmm_search"])
    g = res["gmm"]
    if g["feasible"] is None:
        out.print(f"GMM: undecided ({g['undecided_because']})", markup=False)
    else:
        out.print(f"GMM: {'feasible' if g['feasible'] else 'infeasible (' + g['status'] + ')'}"
                  + (f", p_mm = {_short(g['p_mm'], 4)}" if g["feasible"] else "")
                  + f" ({'certified exactly' if g['certified'] else 'NOT certified: ' + g['decision']})")
    if json_file:
        write_json_atomic(json_file, res)


def _short(x, precision: int | None = None) -> str:
    """A list for the table, elided past a dozen entries."""
    import numpy as np

    if precision is not None:
        return np.array2string(np.array(x, dtype=float), precision=precision, threshold=12, edgeitems=3)
    text = str(x)
    return text if len(text) <= 80 else text[:60] + " ... " + text[-15:]


def _gap(s: dict) -> str:
    """The exact score gap when short, else its float; 'none' without neighbours."""
    exact = s["score_gap_exact"]
    if exact.startswith("none"):
        return exact[6:]
    if len(exact) <= 12:
        return exact
    if s.get("score_gap") is None:                # beyond float64's range: the exact value's order of magnitude
        import math
        from fractions import Fraction

        try:
            q = abs(Fraction(exact))
            return f"~1e{math.floor(math.log10(q.numerator) - math.log10(q.denominator))} (exact, beyond float64)"
        except (ValueError, ZeroDivisionError):
            return exact[:9] + "..."
    return f"{s['score_gap']:.6g}"


@app.command("run")
def run_dynamics(data: Path = typer.Argument(..., help="dataset JSON file"),
                 rule: str = typer.Option("gd", "--rule", help="gd | ngd | polyak"),
                 steps: int = typer.Option(1000, "--steps", min=1, max=MAX_STEPS),
                 lr: float | None = typer.Option(None, "--lr", help="step size (gd default 1/L_p, "
                                                                    "Lemma 6; ngd default 0.1)"),
                 init: str | None = typer.Option(None, "--init", help="start p_0, comma-separated (default 0)"),
                 loss: str = typer.Option("logistic", "--loss"), json_file: Path | None = JsonOpt,
                 seconds: float = SecondsOpt, allow_large: bool = AllowLargeOpt):
    """Run GD / normalized GD / Polyak from p_0 and report the limit: which LMM it aligns with."""
    import numpy as np
    from rich.table import Table

    from attnsvm.files import check_output, write_json_atomic

    out, _ = consoles()
    _seconds(seconds)
    if json_file:
        json_file = check_output(json_file, inputs=(data,))
    ds = _load(data, allow_large, steps)
    from attnsvm.interfaces.analysis import run_report  # (after the data: a bad file fails fast)
    p0 = _vector(init, ds.d) if init is not None else np.zeros(ds.d)
    _check_smoothness(ds, loss, need_step=rule == "gd" and lr is None)
    with np.errstate(all="ignore"):
        res = run_report(ds, rule, steps, lr, p0, loss, seconds=seconds)
    _check_finite(res)
    t = Table(title=f"{rule} for {steps} steps (eta {res['eta']:.4g}) from {p0.tolist()}: status {res['status']}")
    t.add_column("quantity")
    t.add_column("value", overflow="fold")
    for k in ("final_p", "norm", "direction", "selected_tokens", "max_log_unsaturation", "aligned_with", "best_corr"):
        t.add_row(k, str(res[k]))
    out.print(t)
    for c in res["correlations"]:
        out.print(f"  corr with LMM alpha={c['alpha']}{' (GMM)' if c['is_gmm'] else ''}: {c['corr']:.6f}")
    out.print(f"  among the LMMs of the search: {res['lmm_search']}")
    if json_file:
        write_json_atomic(json_file, res)


def _check_smoothness(ds, loss: str, need_step: bool = True) -> None:
    """GD's default step 1/L_p needs a positive, finite smoothness constant whose inverse is finite; an
    infinite one means the data's scale is beyond float64 whatever the rule."""
    import math

    import numpy as np

    from attnsvm.dynamics.smoothness import smoothness_constant

    try:
        with np.errstate(all="ignore"):
            L = smoothness_constant(ds, loss)
    except UserError:
        if need_step:
            raise
        return
    if not need_step:
        if not math.isfinite(L):
            raise UserError(f"the smoothness constant ({L:.3g}) overflows float64: the data's scale is too large; "
                            "rescale the data")
        return
    if L == 0:
        raise UserError("the risk is constant or its scale underflows float64 (smoothness constant 0): "
                        "nothing to run (pass --lr to run anyway)")
    if not (math.isfinite(L) and math.isfinite(1.0 / L)):
        raise UserError(f"the smoothness constant ({L:.3g}) is outside float64's range: the data's scale "
                        "is too large or too small; rescale the data or pass --lr")


def _check_finite(res: dict) -> None:
    """Non-finite iterates, norms or correlations are float64 overflow: refuse them, never report them."""
    import math

    values = [res["eta"] if res["rule"] != "polyak" else 0.0, res["norm"], res["max_log_unsaturation"],
              *res["final_p"], *(c["corr"] for c in res["correlations"])]
    if not all(math.isfinite(x) for x in values):
        raise UserError("the run overflowed float64 (non-finite iterate, norm or correlation): result untrusted; "
                        "rescale the data, --init or --lr")


def _vector(text: str, d: int):
    import numpy as np

    if not text.strip():
        raise UserError(f"--init: expected {d} comma-separated numbers, got an empty string")
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
         budget: str = BudgetOpt, allow_large: bool = AllowLargeOpt):
    """Draw a result's picture (tokens, SVM directions, GD trajectories, rate curves)."""
    from attnsvm.files import check_output
    from attnsvm.interfaces import plotting

    out, _ = consoles()
    check_output(out_file, inputs=(target,) if target.endswith(".json") else ())
    if target.endswith(".json"):
        ds = _load(Path(target), allow_large)
        from attnsvm.interfaces.plotting.dataset import plot_dataset  # (after the data: a bad file fails fast)

        _check_smoothness(ds, "logistic")
        info = plot_dataset(ds, out_file, seed=seed)
    else:
        info = plotting.plot_result(target, out_file, seed=seed, budget=budget)
    out.print(f"wrote {out_file}"
              + (f": {info.get('summary')}" if isinstance(info, dict) and info.get("summary") else ""))
