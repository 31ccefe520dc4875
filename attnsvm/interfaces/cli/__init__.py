"""The `attnsvm` command line: `app` (the typer application and `main`), `checking` (list,
check, counterexample, replay), `datasets` (analyze, run, plot), `reporting` (blueprint),
`reproducing` (the papers' experiments), `entry` (the console script). `main` is imported on
first use, so the console script can guard start-up before typer loads."""

__all__ = ["main"]


def __getattr__(name: str):
    if name == "main":
        import importlib

        return importlib.import_module("attnsvm.interfaces.cli.app").main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
