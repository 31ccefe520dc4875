"""`attnsvm plot DATA.json`: a user's 2-D dataset in the style of the paper's Figure 1 (tokens
at their keys coloured by score, GMM dashed, LMMs dotted, paths of the chosen rule from
seeded starts: the origin, random points, and one start 2 p_mm(alpha) per non-global LMM),
with ||p_t|| and softmax saturation against iterations."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.errors import UserError
from attnsvm.interfaces.plotting.common import (
    directions,
    new_figure,
    panel,
    run_rule,
    save_png,
)


def starts_for(ds: Dataset, seed: int, random: int = 3) -> np.ndarray:
    """The origin, `random` seeded points with norm in [1, 3], and 2 p_mm(alpha) per non-global LMM."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(random, ds.d))
    u *= rng.uniform(1, 3, size=(random, 1)) / np.linalg.norm(u, axis=1, keepdims=True)
    _, others = directions(ds)
    return np.vstack([np.zeros((1, ds.d)), u] + [2 * s.p_mm[None] for s in others[:4]])


def plot_dataset(ds: Dataset, out: Path, seed: int = 0, rule: str = "gd", steps: int = 4000,
                 loss: str = "logistic") -> dict:
    if ds.d != 2:
        raise UserError(f"plot needs 2-D tokens (d = 2) to draw the keys; {ds.name} has d = {ds.d}")
    starts = starts_for(ds, seed)
    tr, eta = run_rule(ds, rule, starts, steps, loss)
    fig, axes = new_figure()
    labels = [f"start {np.round(s, 2).tolist()}" for s in starts]
    title = f"{ds.name}: {rule.upper()} (eta = {eta:.3g}), {steps} steps, {loss} loss"
    limits = panel(ds, model.keys(ds), tr, labels, title, axes)
    save_png(fig, Path(out))
    closest = [l["closest"] for l in limits]
    return {"summary": f"{len(starts)} starts, limits by best correlation: {closest}", "rule": rule, "eta": eta,
            "steps": steps, "starts": [s.tolist() for s in starts], "limits": limits, "status": tr.status}
