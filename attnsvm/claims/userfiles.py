"""Claims from a user's Python file (`attnsvm check my_claims.py`): its module-level `Claim`
objects by variable name. Loading runs the file (the user named it on the command line); an
exception or `sys.exit` while loading is reported, never a traceback."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

from attnsvm.claims.claim import Claim
from attnsvm.claims.isolation import CodeError, guarded
from attnsvm.errors import UserError


def load_claims_file(path: str) -> dict[str, Claim]:
    """Module-level Claim objects of a user's file. UserError when the path is not a readable
    .py file or defines no claims; CodeError when running it raised."""
    p = Path(path)
    if p.suffix != ".py":
        raise UserError(f"{p}: a claims file must be a .py file")
    if not p.is_file():
        raise UserError(f"{p}: no such file")
    digest = hashlib.sha1(str(p.resolve()).encode()).hexdigest()[:10]
    spec = importlib.util.spec_from_file_location(f"attnsvm_user_{digest}", p)
    if spec is None or spec.loader is None:
        raise UserError(f"{p}: cannot load as a Python module")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod          # pickling claims by reference needs the module registered
    try:
        guarded(f"loading {p.name}", spec.loader.exec_module, mod)
    except CodeError:
        sys.modules.pop(spec.name, None)
        raise
    found = {k: v for k, v in vars(mod).items() if isinstance(v, Claim)}
    if not found:
        raise UserError(f"{p}: defines no attnsvm.claims.Claim objects")
    return found
