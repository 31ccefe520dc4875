"""The `attnsvm` command line: `app` (the application and `main`), `checking` (list, check,
counterexample, replay), `datasets` (analyze, run, plot), `reporting` (blueprint),
`reproducing` (the papers' experiments)."""

from attnsvm.interfaces.cli.app import app, main

__all__ = ["app", "main"]
