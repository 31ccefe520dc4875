"""Claims from a user's Python file (`attnsvm check my_claims.py`): its module-level `Claim`
objects by variable name. Loading runs the file (the user named it on the command line); an
exception or `sys.exit` while loading is reported, never a traceback.

The command line never loads a claims file in its own process: a worker does
(`claims.supervise`), and tells it what it may know without running the code (`declared`:
each claim's name and hypotheses); a claim is then handled by reference (`FileClaim`), loaded,
searched and replayed only in a worker (`search`, `replay`)."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from dataclasses import dataclass, replace
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


@dataclass(frozen=True)
class FileClaim:
    """A claim of a user's file by reference: its file (absolute), variable, shown name
    ('FILE.py:VARIABLE') and hypothesis names, with the hypotheses dropped and the verdicts
    expected as `Claim` has them. Plain data: its code runs only where it is `load`ed."""

    file: str
    var: str
    name: str
    hypotheses: tuple[str, ...]
    dropped: frozenset = frozenset()
    expected: tuple[str, ...] = ()

    def hypothesis_names(self) -> list[str]:
        return list(self.hypotheses)

    def drop(self, *names: str, instances=None) -> FileClaim:
        unknown = [n for n in names if n not in self.hypotheses]
        if unknown:
            raise UserError(f"{self.name} has no hypothesis {unknown[0]!r}; it has {list(self.hypotheses)}")
        return replace(self, dropped=self.dropped | frozenset(names), expected=("REFUTED",))

    @property
    def part(self) -> str:
        return "check" if not self.dropped else "drop:" + ",".join(sorted(self.dropped))

    def load(self) -> Claim:
        claim = replace(load_claims_file(self.file)[self.var], name=self.name)
        claim = claim.drop(*self.dropped) if self.dropped else claim
        return replace(claim, expected=self.expected)


@dataclass(frozen=True)
class Declared:
    """What a claims file says of one claim without its code running: name and hypotheses."""

    name: str
    hypotheses: tuple[str, ...]


def declared(path: str) -> dict[str, Declared]:
    """The claims of a file by variable (`load_claims_file`, in the worker that calls it)."""
    return {var: Declared(c.name, tuple(c.hypothesis_names())) for var, c in load_claims_file(path).items()}


def search(claim: FileClaim, budget, seed: int):
    """The search of a user's claim (in a worker)."""
    from attnsvm.claims.search import check

    return check(claim.load(), budget, seed)


def replay(witness: dict, claim: FileClaim):
    """A witness replayed against a user's claim (in a worker)."""
    from attnsvm.claims.witnesses import replay_witness

    return replay_witness(witness, claim.load())
