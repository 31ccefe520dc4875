"""pytest plugin: put claims in a test suite without writing tests.

    pytest --attnsvm-claims my_claims.py [--attnsvm-claims more.py] [--attnsvm-budget standard] [--attnsvm-seed 3]

collects every module-level `Claim` of each file as a test item named after its variable, as
`attnsvm check` shows it (FILE.py:VARIABLE; `-k` also matches the Claim's `name`). An
item passes when its verdict is as expected: one of the claim's `expected`, or with none,
PROVED, CERTIFIED or SUPPORTED (fail closed: REFUTED, INCONCLUSIVE and errors in the claim's
code fail). A failure shows the verdict, the evidence summary, for code that raised the
exception, its frame and the instance (compact JSON), and for a counterexample the witness file
it wrote and the command that replays it. A bad --attnsvm-budget or --attnsvm-seed is a usage
error at startup. Witnesses go to pytest's cache
(`.pytest_cache/d/attnsvm-witnesses/`) unless `--attnsvm-witness-dir` says where.

With no other paths on the command line only the claims are collected; `pytest tests
--attnsvm-claims my_claims.py` runs both. The plugin is registered through the `pytest11` entry
point, so every pytest run in an environment with attnsvm loads it: this module imports only
pytest and the standard library; the engine is imported when a claims file is collected.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

WITNESS_CACHE = "attnsvm-witnesses"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("attnsvm", "attnsvm claims")
    group.addoption("--attnsvm-claims", action="append", default=[], metavar="FILE.py",
                    help="a Python file of attnsvm Claims; each claim becomes a test item (repeatable)")
    group.addoption("--attnsvm-budget", default="quick", metavar="BUDGET", help="quick | standard | thorough")
    group.addoption("--attnsvm-seed", type=int, default=0, metavar="N", help="random seed of the searches")
    group.addoption("--attnsvm-witness-dir", default=None, metavar="DIR",
                    help="where counterexamples are written (default: pytest's cache)")


_FILES = pytest.StashKey[set]()


def pytest_configure(config: pytest.Config) -> None:
    files = config.getoption("attnsvm_claims", default=[])
    if not files:
        return
    _check_search_options(config)
    paths = []
    for f in files:
        p = Path(f).resolve()
        if p.suffix != ".py" or not p.is_file():
            raise pytest.UsageError(f"--attnsvm-claims {f}: not a Python file")
        paths.append(p)
    config.stash[_FILES] = set(paths)
    given = config.args_source == pytest.Config.ArgsSource.ARGS
    known = {Path(a).resolve() for a in config.args} if given else set()
    config.args[:] = (list(config.args) if given else []) + [str(p) for p in paths if p not in known]


def _check_search_options(config: pytest.Config) -> None:
    """A bad --attnsvm-budget or --attnsvm-seed is a usage error at startup (one line), not a
    traceback in every item. `attnsvm.claims.budget` is plain data: nothing heavy is imported."""
    from attnsvm.claims.budget import get_budget
    from attnsvm.errors import UserError

    try:
        get_budget(config.getoption("attnsvm_budget"))
    except UserError as e:
        raise pytest.UsageError(f"--attnsvm-budget: {e}") from None
    seed = config.getoption("attnsvm_seed")
    if seed < 0:
        raise pytest.UsageError(f"--attnsvm-seed: must be a non-negative integer, got {seed}")


def pytest_pycollect_makemodule(module_path: Path, parent):
    if module_path.resolve() in parent.config.stash.get(_FILES, set()):
        return ClaimsFile.from_parent(parent, path=module_path)
    return None


class ClaimsFile(pytest.File):
    """A user's file of claims: one item per module-level Claim."""

    def collect(self):
        from attnsvm.claims.isolation import CodeError
        from attnsvm.claims.userfiles import load_claims_file
        from attnsvm.errors import UserError

        try:
            claims = load_claims_file(str(self.path))
        except CodeError as e:
            raise self.CollectError(f"{self.path.name}: {e.line()}") from None
        except UserError as e:
            raise self.CollectError(str(e)) from None
        for name, claim in claims.items():
            item = ClaimItem.from_parent(self, name=name, claim=claim)
            item.extra_keyword_matches.add(claim.name)        # `-k` selects by the Claim's name too
            yield item


class ClaimFailed(Exception):
    """A claim whose verdict is not the expected one (carries the report)."""


class ClaimItem(pytest.Item):
    def __init__(self, *, claim, **kwargs):
        super().__init__(**kwargs)
        self.claim = claim
        self.report = None
        self.witness_file = None

    def runtest(self) -> None:
        from dataclasses import replace

        from attnsvm.claims.search import check

        cfg = self.config
        claim = replace(self.claim, name=f"{self.path.name}:{self.name}")
        self.report = rep = check(claim, cfg.getoption("attnsvm_budget"), cfg.getoption("attnsvm_seed"))
        if rep.witness is not None:
            self.witness_file = self._save(rep.witness)
        self.user_properties.append(("attnsvm_verdict", str(rep.verdict)))
        if not rep.as_expected:
            raise ClaimFailed()

    def _save(self, witness: dict) -> Path:
        from attnsvm.files import write_json_atomic

        where = self.config.getoption("attnsvm_witness_dir")
        if where:
            folder = Path(where)
            folder.mkdir(parents=True, exist_ok=True)
        elif getattr(self.config, "cache", None) is not None:
            folder = self.config.cache.mkdir(WITNESS_CACHE)
        else:
            folder = Path(tempfile.mkdtemp(prefix="attnsvm-witnesses-"))
        path = folder / f"{self.path.stem}--{self.name}.json"
        write_json_atomic(path, dict(witness, source=f"{self.path.name}:{self.name}"))
        return path

    def repr_failure(self, excinfo, style=None):
        if not isinstance(excinfo.value, ClaimFailed) or self.report is None:
            return super().repr_failure(excinfo, style)
        from attnsvm.interfaces.report import summary

        rep = self.report
        expected = (" or ".join(rep.expected) if rep.expected
                    else "PROVED, CERTIFIED or SUPPORTED (no expectation stated)")
        lines = [f"{self.name}: verdict {rep.verdict}, expected {expected}",
                 f"statement: {self.claim.statement}",
                 f"evidence: {summary(rep)}"]
        if rep.error:
            lines.append(f"error in {rep.error.get('where', 'code')}: {rep.error.get('type')}: "
                         f"{rep.error.get('message')}"
                         + (f" at {rep.error['frame']}" if rep.error.get("frame") else ""))
            if rep.error.get("instance") is not None:
                lines.append(f"instance: {_compact(rep.error['instance'])}")
        if rep.witness is not None:
            lines.append(f"counterexample: {_shown(self.witness_file)}")
            lines.append(f"outcome: {rep.witness.get('outcome')}")
            lines.append(f"replay: attnsvm replay {_shown(self.witness_file)} --claims {_shown(self.path)}")
        return "\n".join(lines)

    def reportinfo(self):
        return self.path, None, f"claim {self.name}"


def _compact(obj) -> str:
    """An instance as compact JSON on one line (the form `--json` reports and witnesses hold)."""
    import json

    from attnsvm.files import strict

    try:
        return json.dumps(strict(obj), separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        return repr(obj)


def _shown(path: Path) -> str:
    try:
        return Path(path).resolve().relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)
