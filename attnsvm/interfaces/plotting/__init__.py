"""Pictures (`attnsvm plot`). One module per result id that has a picture, named like the
result's module (`theorem2_tightness.py`), exposing `plot(out: Path, seed: int, budget) -> dict`
(a JSON-ready summary of what was drawn); `dataset.py` draws a user's 2-D dataset."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

from attnsvm.errors import UserError


def available() -> list[str]:
    from attnsvm.claims import registry

    return [e.id for e in registry.ENTRIES if importlib.util.find_spec(f"{__name__}.{e.module}")]


def plot_result(id: str, out: Path, seed: int = 0, budget: str = "quick") -> dict:
    from attnsvm.claims import registry

    e = registry.entry(id)
    if not importlib.util.find_spec(f"{__name__}.{e.module}"):
        raise UserError(f"no picture for {id}; pictures exist for: {', '.join(available())} (or pass a DATA.json)")
    return importlib.import_module(f"{__name__}.{e.module}").plot(Path(out), seed=seed, budget=budget)
