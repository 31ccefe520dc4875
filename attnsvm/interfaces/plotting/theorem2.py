"""`attnsvm plot theorem2` (Figure 1 style): one input of three tokens in the paper's Figure 1
construction (keys in the plane, scores in a third coordinate: the optimal token scores 1,
the others 0, so Assumption B holds); GD with eta = 1/L_p from starts on a circle around the
origin bends towards the GMM direction while ||p_t|| grows and the softmax saturates."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnsvm.attention import model
from attnsvm.claims import get_budget
from attnsvm.claims.strategies import keyed_dataset
from attnsvm.interfaces.plotting.common import new_figure, panel, run_rule, save_png

STEPS = 4000
KEYS = [[[1, 0], [-1, 1], [0, -1]]]
SCORES = [[1, 0, 0]]


def plot(out: Path, seed: int = 0, budget: str = "quick", starts: int = 6) -> dict:
    ds = keyed_dataset(KEYS, SCORES, name="Figure 1 style, n = 1, T = 3, Assumption B")
    rng = np.random.default_rng(seed)
    angles = np.linspace(0, 2 * np.pi, starts, endpoint=False) + rng.uniform(0, 2 * np.pi / starts)
    p0 = np.stack([2 * np.cos(angles), 2 * np.sin(angles), np.zeros(starts)], 1)
    steps = int(STEPS * get_budget(budget).horizon)
    tr, eta = run_rule(ds, "gd", p0, steps)
    fig, axes = new_figure()
    labels = [f"p_0 = {np.round(s[:2], 2).tolist()}" for s in p0]
    limits = panel(ds, model.keys(ds)[..., :2], tr, labels,
                   f"Theorem 2 (n = 1, Assumption B): GD, eta = 1/L_p = {eta:.3g}, {steps} steps",
                   axes, project=lambda P: P[..., :2])
    save_png(fig, Path(out))
    corrs = [round(l["corr"], 3) for l in limits]
    return {"summary": f"{starts} starts; corr(p_H, GMM) = {corrs}", "steps": steps, "eta": eta, "limits": limits}
