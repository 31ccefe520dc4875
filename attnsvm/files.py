"""Files: reading JSON with one-line errors, writing bytes, text and JSON atomically (temp file
beside the target, then rename). numpy is not imported here: a value can only be a numpy value when
numpy is loaded already."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any

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
    except RecursionError:
        raise UserError(f"{p}: JSON nested too deeply") from None


def check_output(path: str | os.PathLike) -> Path:
    """An output path must be a new path or an existing regular file in an existing, writable
    directory: one-line UserError otherwise (checked before any work is done)."""
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise UserError(f"{p}: is a directory (give a file name)")
    if p.exists() and not p.is_file():
        raise UserError(f"{p}: exists and is not a regular file (device, FIFO or socket); refusing to replace it")
    if not parent.exists():
        raise UserError(f"{p}: directory {parent} does not exist")
    if not parent.is_dir():
        raise UserError(f"{p}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UserError(f"{p}: directory {parent} is not writable")
    if p.exists() and not os.access(p, os.W_OK):
        raise UserError(f"{p}: file is not writable")
    return p


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json_atomic(path: str | os.PathLike, obj: Any, indent: int | None = 1) -> None:
    """Write strict JSON (`strict`) atomically; indent=None writes compact JSON (json's C encoder:
    3-4x faster on large record lists)."""
    write_text_atomic(path, json.dumps(strict(obj), indent=indent, allow_nan=False) + "\n")


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    write_atomic(path, text.encode("utf-8"))


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write bytes through a temporary file beside the target and rename: a crash never leaves
    half a file, only regular files or new paths are written, the umask is honoured."""
    p = check_output(path)
    parent = p.parent if str(p.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=parent)
    except OSError as e:
        raise UserError(f"{p}: cannot write ({e.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_umask())
        if p.exists() and not p.is_file():
            raise UserError(f"{p}: exists and is not a regular file; refusing to replace it")
        os.replace(tmp, p)
    except OSError as e:
        raise UserError(f"{p}: cannot write ({e.strerror})") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def strict(o):
    """`o` as strict JSON values: numpy scalars and arrays as Python values, Fractions as
    strings, NaN as null and infinities as the strings "inf" / "-inf" (JSON has neither)."""
    np = sys.modules.get("numpy")
    if isinstance(o, dict):
        return {str(k): strict(v) for k, v in o.items()}
    if isinstance(o, (list, tuple, set, frozenset)):
        return [strict(v) for v in o]
    if isinstance(o, bool) or (np is not None and isinstance(o, np.bool_)):
        return bool(o)
    if isinstance(o, int) or (np is not None and isinstance(o, np.integer)):
        return int(o)
    if isinstance(o, float) or (np is not None and isinstance(o, np.floating)):
        x = float(o)
        return None if x != x else ("inf" if x == float("inf") else "-inf" if x == float("-inf") else x)
    if o is None or isinstance(o, str):
        return o
    if np is not None and isinstance(o, np.ndarray):
        return strict(o.tolist())
    if isinstance(o, Fraction):
        return str(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")
