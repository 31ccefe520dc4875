"""Resumable sharded sweeps: a sweep is a list of `Shard`s, each computed by a picklable task
`task(shard) -> dict` and stored as one JSON file (written atomically, `data.write_json_atomic`).

A rerun skips shards whose file exists and was made with the same settings (`fingerprint`),
so an interrupted sweep loses nothing it had finished. Shards fan out over an executor of
`attnsvm.interfaces.executors` (in-process, local processes, or a Dask cluster). Results are
written by the calling process only.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from attnsvm.errors import UserError
from attnsvm.files import read_json, write_json_atomic
from attnsvm.interfaces import executors


@dataclass(frozen=True)
class Shard:
    """One unit of work: `key` names the file, `params` (JSON-ready) say what to compute."""

    key: str
    params: dict

    def to_json(self) -> dict:
        return asdict(self)


class Executor(Protocol):
    def submit(self, fn: Callable[[Shard], dict], shard: Shard) -> Any: ...


def fingerprint(settings: dict) -> str:
    """Stable hash of a sweep's settings (JSON, sorted keys)."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Store:
    """A directory of shard files `<root>/shards/<key>.json`, each {"fingerprint", "shard", "result"}."""

    root: Path
    fingerprint: str

    def path(self, shard: Shard) -> Path:
        return self.root / "shards" / f"{shard.key}.json"

    def load(self, shard: Shard) -> dict | None:
        """The stored result, or None if missing, unreadable or from other settings."""
        try:
            obj = read_json(self.path(shard))
        except UserError:                       # missing, unreadable or malformed: recomputed
            return None
        if obj.get("fingerprint") != self.fingerprint or obj.get("shard") != shard.to_json():
            return None
        return obj["result"]

    def save(self, shard: Shard, result: dict) -> None:
        write_json_atomic(self.path(shard),
                          {"fingerprint": self.fingerprint, "shard": shard.to_json(), "result": result}, indent=None)


def check_out_dir(out: str | os.PathLike, sub: Sequence[str] = ()) -> Path:
    """`out` as an output directory: an existing, writable directory, or a new path whose nearest
    existing ancestor is a writable directory (one-line UserError otherwise, before any work is
    done and without creating anything). `sub` names subdirectories that must not be files."""
    out = Path(out)
    if out.is_symlink() and not out.exists():
        raise UserError(f"{out}: is a dangling symbolic link")
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: exists and is not a directory")
    base = out
    while not base.exists():
        if base.is_symlink():
            raise UserError(f"{out}: {base} is a dangling symbolic link")
        parent = base.parent
        if parent == base:
            break
        base = parent
    if not base.is_dir():
        raise UserError(f"{out}: {base} is not a directory")
    if not os.access(base, os.W_OK | os.X_OK):
        raise UserError(f"{out}: directory {base} is not writable")
    for name in sub:
        p = out / name
        if p.exists() and not p.is_dir():
            raise UserError(f"{out}: {p} exists and is not a directory")
        if p.is_dir() and not os.access(p, os.W_OK | os.X_OK):
            raise UserError(f"{out}: directory {p} is not writable")
    return out


def open_store(root: str | os.PathLike, settings: dict, name: str) -> Store:
    """Create or reopen `root` for a sweep with these settings. Reusing a directory made with
    other settings is a UserError (nothing is overwritten)."""
    root = Path(root)
    fp = fingerprint(settings)
    try:
        (root / "shards").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"{root}: cannot create the output directory ({e.strerror or e.__class__.__name__})") from None
    meta = root / "sweep.json"
    if meta.exists():
        try:
            old = read_json(meta)
        except UserError:
            old = {}
        if old.get("fingerprint") != fp:
            raise UserError(f"{root} holds a {old.get('name', 'different')} sweep with other settings; "
                            f"choose another --out directory")
    else:
        write_json_atomic(meta, {"name": name, "fingerprint": fp, "settings": settings})
    return Store(root, fp)


def run_shards(task: Callable[[Shard], dict], shards: Sequence[Shard], store: Store,
               executor: Executor | None = None, on_done: Callable[[Shard, bool], None] | None = None,
               on_submitted: Callable[[], None] | None = None) -> list[dict]:
    """Results of all shards in order: stored ones are read, the rest computed with `executor`
    and saved as each finishes. `on_done(shard, cached)` is called once per shard (progress);
    `on_submitted()` once all shards are submitted, before waiting for them: the caller's own
    work (an import, say) overlaps the workers' (with an inline executor it just runs first)."""
    executor = executor or executors.Inline()
    results: dict[str, dict] = {}
    todo = []
    for s in shards:
        r = store.load(s)
        if r is None:
            todo.append(s)
        else:
            results[s.key] = r
            if on_done:
                on_done(s, True)
    futures = {k: executor.submit(task, s) for k, s in enumerate(todo)}
    error = None
    try:
        if on_submitted:
            on_submitted()
        for k, fut in executors.completed(futures):
            s = todo[k]
            try:
                results[s.key] = fut.result()
            except Exception as e:              # save the shards that still finish, then raise
                error = error or e
                _cancel(futures)
                continue
            store.save(s, results[s.key])
            if on_done:
                on_done(s, False)
    except BaseException:
        _cancel(futures)
        raise
    if error is not None:
        raise error
    return [results[s.key] for s in shards]


def _cancel(futures: dict) -> None:
    for fut in futures.values():
        fut.cancel()


def run_sweep(name: str, settings, run_shard: Callable, out: str | os.PathLike, executor: Executor | None = None,
              on_done: Callable[[Shard, bool], None] | None = None,
              on_submitted: Callable[[], None] | None = None) -> tuple[list[dict], list[dict]]:
    """Open (or resume) `out` for sweep `name` with `settings` (to_json(), shards()), run
    `run_shard(settings_json, shard)` on every shard (`run_shards`), and return (shard results,
    their records concatenated in shard order)."""
    store = open_store(out, settings.to_json(), name)
    results = run_shards(partial(run_shard, settings.to_json()), settings.shards(), store, executor, on_done,
                         on_submitted)
    return results, [r for res in results for r in res["records"]]
