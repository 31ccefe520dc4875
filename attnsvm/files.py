"""Files: reading JSON with one-line errors, writing JSON atomically (temp file beside the
target, then rename)."""

from __future__ import annotations

import json
import os
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from attnsvm.errors import UserError


def read_json(path: str | os.PathLike) -> Any:
    """Read a JSON file; any failure is a one-line UserError."""
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise UserError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{p}: cannot read ({e.__class__.__name__})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{p}: malformed JSON ({e.msg} at line {e.lineno} column {e.colno})") from None


def write_json_atomic(path: str | os.PathLike, obj: Any) -> None:
    """Write JSON through a temporary file and rename: a crash never leaves half a file."""
    p = Path(path)
    if p.parent and not p.parent.exists():
        raise UserError(f"{p}: directory {p.parent} does not exist")
    text = json.dumps(obj, indent=1, default=_json_default)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent or ".")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text + "\n")
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _json_default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.bool_,)):
        return bool(o)
    if isinstance(o, Fraction):
        return str(o)
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")
