"""The linter runs with the tests: `ruff check .` from the repository root, as configured in
pyproject.toml ([tool.ruff]), reports nothing. CI runs the suite, so CI runs the linter; ruff
comes with the `test` extra (`pip install -e ".[test]"`)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_check_reports_nothing():
    assert importlib.util.find_spec("ruff") is not None, \
        'ruff is not installed: it comes with the test extra, pip install -e ".[test]"'
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", "."], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"`ruff check .` exited {r.returncode}:\n{r.stdout}{r.stderr}"
