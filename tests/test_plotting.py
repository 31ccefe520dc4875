"""Pictures: a PNG is written atomically, 2-D datasets only, and the drawn runs say what the
theorems say (Appendix E: two starts, two limits; Theorem 2: paths turn to the GMM)."""

import os

import numpy as np
import pytest

from attnsvm.attention.data import Dataset
from attnsvm.claims import Budget
from attnsvm.errors import UserError
from attnsvm.interfaces import plotting
from attnsvm.interfaces.plotting import common
from attnsvm.interfaces.plotting.dataset import plot_dataset

PNG = b"\x89PNG\r\n\x1a\n"
SHORT = Budget("test", evaluations=1, seconds=1.0, min_instances=1, horizon=0.25, limit=120.0)


def _is_png(path) -> bool:
    return path.read_bytes()[:8] == PNG


def test_plot_dataset_writes_png_and_names_limits(tmp_path):
    ds = Dataset.from_arrays([[[1, 0], [0, 0]], [[0, 0], [2, 1]]], [1, 1], [1, -3], name="hand")
    out = tmp_path / "hand.png"
    info = plot_dataset(ds, out, seed=0, steps=300)
    assert _is_png(out)
    assert os.listdir(tmp_path) == ["hand.png"]                     # no temporary file left behind
    assert len(info["limits"]) == len(info["starts"]) == 5          # origin, 3 random, 1 aimed at the LMM
    assert info["limits"][-1]["closest"] == "LMM (1.1, 2.2)"        # the start 2 p_mm(LMM) stays there


def test_plot_dataset_needs_2d(tmp_path):
    ds = Dataset.from_arrays([[[1, 0, 0], [0, 1, 0]]], [1], [1, 0, 0])
    with pytest.raises(UserError, match="d = 2") as e:
        plot_dataset(ds, tmp_path / "x.png")
    assert "\n" not in str(e.value)
    assert not (tmp_path / "x.png").exists()


def test_save_png_refuses_missing_directory(tmp_path):
    fig, _ = common.new_figure()
    with pytest.raises(UserError, match="does not exist"):
        common.save_png(fig, tmp_path / "missing" / "x.png")


def test_tightness_picture_two_starts_two_limits(tmp_path):
    out = tmp_path / "t.png"
    info = plotting.plot_result("theorem2-tightness", out, budget=SHORT)
    assert _is_png(out)
    first, second = info["limits"]
    assert second["closest"].startswith("LMM") and second["corr"] > 0.999      # p_0 = (5, 0)
    assert first["closest"] == "GMM"                                              # p_0 = 0


def test_theorem2_picture_paths_turn_to_gmm(tmp_path):
    out = tmp_path / "t2.png"
    info = plotting.plot_result("theorem2", out, budget=SHORT)
    assert _is_png(out)
    assert all(l["closest"] == "GMM" and l["corr"] > 0.9 for l in info["limits"])


def test_frame_contains_points_and_origin():
    fig, (ax, _) = common.new_figure()
    pts = np.array([[3.0, -1.0], [5.0, 2.0]])
    reach = common.frame(ax, pts)
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert x0 <= 0 <= x1 and y0 <= -1 and y1 >= 2 and x1 >= 5
    assert reach >= np.linalg.norm(pts, axis=1).max()
