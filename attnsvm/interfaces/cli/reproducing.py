"""`attnsvm reproduce ...`: the papers' experiments (attnsvm.interfaces.sweeps)."""

from attnsvm.interfaces.cli.app import app
from attnsvm.interfaces.sweeps.cli import app as reproduce_app

app.add_typer(reproduce_app, name="reproduce", help="Reproduce the papers' experiments (batched sweeps).")
