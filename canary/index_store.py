"""Module indexes persisted on disk, keyed by content hash, so no upstream file is parsed twice
across runs: a warm run reads a few kilobytes of JSON per file instead of re-running `ast`."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from canary.analysis import (
    Binding,
    ClassInfo,
    FunctionInfo,
    LazyExports,
    ModuleInfo,
    Param,
    Rename,
    Span,
)

#: Bump when the index layout or the indexing rules change: old entries are then ignored.
FORMAT = 2


def _fn(fn: FunctionInfo) -> list[Any]:
    params = [[p.name, p.kind, p.default, p.annotation] for p in fn.params]
    renames = [[r.old, r.new, r.version, r.raises] for r in fn.renames]
    return [params, fn.span.start, fn.span.end, renames, fn.returns]


def _unfn(name: str, data: list[Any]) -> FunctionInfo:
    params, start, end, renames, returns = data
    return FunctionInfo(
        name,
        tuple(Param(*p) for p in params),
        Span(start, end),
        tuple(Rename(*r) for r in renames),
        returns,
    )


def _lazy(lazy: LazyExports | None) -> list[Any] | None:
    if lazy is None:
        return None
    names = {k: list(v) for k, v in lazy.names.items()}
    return [names, list(lazy.folders), list(lazy.extra), lazy.replaces, lazy.complete]


def _unlazy(data: list[Any] | None) -> LazyExports | None:
    if data is None:
        return None
    names, folders, extra, replaces, complete = data
    names = {k: tuple(v) for k, v in names.items()}
    return LazyExports(names, tuple(folders), tuple(extra), replaces, complete)


def dump(info: ModuleInfo) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "bindings": {
            name: [[b.kind, b.span.start, b.span.end, b.origin, b.typing_only] for b in bindings]
            for name, bindings in info.bindings.items()
        },
        "functions": {name: [_fn(f) for f in fns] for name, fns in info.functions.items()},
        "classes": {
            name: [
                [
                    list(c.bases),
                    {m: [_fn(f) for f in fs] for m, fs in c.methods.items()},
                    c.span.start,
                    c.span.end,
                ]
                for c in classes
            ]
            for name, classes in info.classes.items()
        },
        "star_imports": info.star_imports,
        "typing_star_imports": info.typing_star_imports,
        "all": None if info.all_names is None else list(info.all_names),
        "lazy": _lazy(info.lazy),
        "aliases": info.aliases,
    }


def load(data: dict[str, Any], name: str, path: str, text: str) -> ModuleInfo:
    """Rebuild a ModuleInfo; raises KeyError/TypeError/ValueError on a malformed entry."""
    if data["format"] != FORMAT:
        raise ValueError("old index format")
    return ModuleInfo(
        name=name,
        path=path,
        text=text,
        bindings={
            n: [Binding(k, Span(s, e), o, t) for k, s, e, o, t in bs]
            for n, bs in data["bindings"].items()
        },
        functions={n: [_unfn(n, f) for f in fs] for n, fs in data["functions"].items()},
        classes={
            n: [
                ClassInfo(
                    n,
                    tuple(bases),
                    {m: [_unfn(m, f) for f in fs] for m, fs in methods.items()},
                    Span(s, e),
                )
                for bases, methods, s, e in cs
            ]
            for n, cs in data["classes"].items()
        },
        star_imports=list(data["star_imports"]),
        typing_star_imports=list(data["typing_star_imports"]),
        all_names=None if data["all"] is None else tuple(data["all"]),
        lazy=_unlazy(data["lazy"]),
        aliases=dict(data["aliases"]),
    )


class IndexStore:
    """A folder of JSON indexes; a missing, stale or corrupt entry is simply rebuilt."""

    def __init__(self, folder: Path):
        self.folder = folder

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str, name: str, path: str, text: str) -> ModuleInfo | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            return load(data, name, path, text)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, info: ModuleInfo) -> None:
        target = self._path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(dump(info), handle, separators=(",", ":"))
            os.replace(tmp, target)
        except OSError:
            return  # a read-only or full cache costs a re-parse next time, nothing more
