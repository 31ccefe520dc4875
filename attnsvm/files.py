"""Files: the one policy for reading untrusted input files, and atomic writes.

Reading (datasets, witnesses, reports): regular files only, of at most a stated size, opened
without blocking (`read_bytes`); JSON strictly (`parse_json`: no NaN, no duplicate keys, bounded
digits and nesting, no lone surrogates); every failure one line (`UserError`). Writing: bytes,
text and JSON through a temporary file beside the target, then a rename, into outputs checked
up front (`check_output`: never an input of the same command). numpy is not imported here: a
value can only be a numpy value when numpy is loaded already."""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any

from attnsvm.errors import UserError

MAX_FILE_BYTES = 256 * 2**20   # an input file's size limit (datasets may be raised past it: --allow-large)
MAX_DIGITS = 4300               # digits of one number: Python's own limit on int <-> str conversion
MAX_DEPTH = 64                  # nesting of JSON arrays and objects (a dataset needs 3, a report about 10)


def _size(n: int) -> str:
    return f"{n / 2**20:.3g} MiB" if n >= 2**20 else f"{n} bytes"


def read_bytes(path: str | os.PathLike, max_bytes: int | None = MAX_FILE_BYTES) -> bytes:
    """The content of a regular file of at most `max_bytes` (None: any size). Anything else (a
    FIFO, a device, a directory, a larger file) is a one-line UserError before a byte is read:
    a FIFO is opened without blocking and refused, a device never read."""
    p = Path(path)
    try:
        st = os.stat(p)
        if not stat.S_ISREG(st.st_mode):
            raise UserError(f"{p}: {_kind(st.st_mode)}, not a regular file (attnsvm reads only regular files)")
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UserError(f"{p}: no such file") from None
    except OSError as e:
        raise UserError(f"{p}: cannot read ({e.strerror or e.__class__.__name__})") from None
    try:
        st = os.fstat(fd)                  # what was opened, not what the name pointed to before
        if not stat.S_ISREG(st.st_mode):
            raise UserError(f"{p}: {_kind(st.st_mode)}, not a regular file (attnsvm reads only regular files)")
        cap = st.st_size if max_bytes is None else max_bytes
        if st.st_size > cap:
            raise UserError(f"{p}: {_size(st.st_size)}, over the {_size(cap)} limit for input files")
        chunks, total = [], 0
        while True:                        # at most cap + 1 bytes: a file growing while read is refused too
            chunk = os.read(fd, min(1 << 24, cap + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > cap:
                raise UserError(f"{p}: grew past the {_size(cap)} limit for input files while being read")
        return b"".join(chunks)
    except OSError as e:
        raise UserError(f"{p}: cannot read ({e.strerror or e.__class__.__name__})") from None
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    return next((name for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                                         (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                                         (stat.S_ISSOCK, "a socket")) if test(mode)), "not a file")


def read_json(path: str | os.PathLike, max_bytes: int | None = MAX_FILE_BYTES) -> Any:
    """Read a JSON file (`read_bytes`, then `parse_json`); any failure is a one-line UserError."""
    data = read_bytes(path, max_bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text (byte {e.start})") from None
    return parse_json(text, str(path))


class _Refused(ValueError):
    """Raised inside the JSON parser's hooks: the input breaks the policy (`parse_json`)."""


def _number(token: str, kind):
    if len(token) > MAX_DIGITS + 1:
        raise _Refused(f"a number of {len(token)} characters (at most {MAX_DIGITS} digits)")
    if kind is int:
        return int(token)
    x = float(token)
    if x in (float("inf"), float("-inf")):
        raise _Refused(f"the number {token[:40]} overflows float64 (write it as a string, e.g. \"1e400\", "
                       "to keep its exact value)")
    if x == 0 and any(c in "123456789" for c in token.partition("e")[0].partition("E")[0]):
        raise _Refused(f"the number {token[:40]} underflows float64 to 0 (write it as a string, e.g. "
                       "\"1e-400\", to keep its exact value)")
    return x


def _constant(token: str):
    raise _Refused(f"{token} is not JSON (strict JSON has no NaN or Infinity)")


def _object(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _Refused(f"duplicate key {dup!r} in an object")
    return out


def parse_json(text: str, where: str = "JSON") -> Any:
    """Strict JSON from untrusted text, or a one-line UserError: no NaN or Infinity, no duplicate
    keys, numbers of at most MAX_DIGITS digits that stay finite and nonzero as floats, nesting at
    most MAX_DEPTH deep, no lone surrogates (escapes such as \\ud800, which no output can encode)."""
    try:
        obj = json.loads(text, object_pairs_hook=_object, parse_constant=_constant,
                         parse_int=lambda s: _number(s, int), parse_float=lambda s: _number(s, float))
    except _Refused as e:
        raise UserError(f"{where}: {e}") from None
    except json.JSONDecodeError as e:
        raise UserError(f"{where}: malformed JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise UserError(f"{where}: JSON nested too deeply (more than {MAX_DEPTH} levels)") from None
    _check_tree(obj, where, surrogates="\\u" in text)
    return obj


def _check_tree(obj: Any, where: str, surrogates: bool) -> None:
    """Nesting depth (and, when the text has \\u escapes, lone surrogates), without recursion."""
    if isinstance(obj, str) and surrogates and _lone_surrogate(obj):
        raise UserError(f"{where}: a string holds a lone surrogate (an unpaired \\ud800-\\udfff escape)")
    stack = [(obj, 1)] if type(obj) in (list, dict) else []
    while stack:
        o, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise UserError(f"{where}: JSON nested too deeply (more than {MAX_DEPTH} levels)")
        items = o.items() if isinstance(o, dict) else enumerate(o)
        for k, v in items:
            if surrogates and ((isinstance(k, str) and _lone_surrogate(k))
                               or (isinstance(v, str) and _lone_surrogate(v))):
                raise UserError(f"{where}: a string holds a lone surrogate (an unpaired \\ud800-\\udfff escape)")
            if type(v) in (list, dict):
                stack.append((v, depth + 1))


def _lone_surrogate(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_output(path: str | os.PathLike, inputs: tuple = ()) -> Path:
    """An output path must be a new path or an existing regular file in an existing, writable
    directory, and none of the command's `inputs`: one-line UserError otherwise (checked before
    any work is done). Returns it absolute, so that code run later (a claims file that changes
    directory) cannot move where it goes."""
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
    for q in inputs:
        if q is not None and p.exists() and Path(q).exists() and os.path.samefile(p, q):
            raise UserError(f"{p}: is an input of this command ({q}); refusing to overwrite it")
    return p.absolute()


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
