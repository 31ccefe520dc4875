"""attnsvm's per-user cache directory: $ATTNSVM_CACHE_DIR, else $XDG_CACHE_HOME/attnsvm, else
~/.cache/attnsvm. It holds the fused kernel's builds and the command line's Hypothesis storage
(`hypothesis/`), so a check never writes `.hypothesis/` into the current directory. Standard
library only: the command line reads it before any heavy import."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    if d := os.environ.get("ATTNSVM_CACHE_DIR"):
        return Path(d)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attnsvm"


def hypothesis_dir() -> Path:
    """Where Hypothesis keeps what it stores (its examples, its constants cache) for attnsvm's commands."""
    return cache_dir() / "hypothesis"
