"""`attnsvm plot theorem2-tightness` (Appendix E, Figure 8): the hand instance of
docs/statements.md#theorem2-tightness, n = 2, T = 2; GD with eta = 1/L_p from p_0 = 0 converges to the GMM (1, -3),
from p_0 = (5, 0) (inside the invariant region of lemmas/theorem2_tightness.py) to the LMM (1, 0): two starts, two
limits."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnsvm.attention import model
from attnsvm.attention.data import Dataset
from attnsvm.claims import get_budget
from attnsvm.interfaces.plotting.common import new_figure, panel, run_rule, save_png

STEPS = 16000
STARTS = np.array([[0.0, 0.0], [5.0, 0.0]])


def hand_instance() -> Dataset:
    return Dataset.from_arrays([[[1, 0], [0, 0]], [[0, 0], [2, 1]]], [1, 1], [1, -3], name="SPEC hand instance")


def plot(out: Path, seed: int = 0, budget: str = "quick") -> dict:
    ds = hand_instance()
    steps = int(STEPS * get_budget(budget).horizon)
    tr, eta = run_rule(ds, "gd", STARTS, steps)
    fig, axes = new_figure()
    labels = [f"p_0 = {s.tolist()}" for s in STARTS]
    limits = panel(ds, model.keys(ds), tr, labels,
                   f"Appendix E (n = 2, T = 2): GD, eta = 1/L_p = {eta:.3g}, {steps} steps\ntwo starts, two limits: "
                   f"the GMM and an LMM whose input-2 token has no SVM-neighbour", axes)
    save_png(fig, Path(out))
    return {"summary": f"p_0 = 0 -> {limits[0]['closest']} (corr {limits[0]['corr']:.3f}), "
                       f"p_0 = (5, 0) -> {limits[1]['closest']} (corr {limits[1]['corr']:.4f})",
            "steps": steps, "eta": eta, "limits": limits}
