"""Module indexes persisted in the cache, keyed by content hash and canary's code fingerprint,
so no upstream file is parsed twice across runs: a run that needs a module reads a few kilobytes
of JSON instead of re-running `ast`. Entries are verified like every other cache entry, so an
edited field is refused (and the module parsed again), never believed."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from canary.analysis import (
    Binding,
    ClassInfo,
    Field,
    FunctionInfo,
    Generator,
    LazyExports,
    ModuleInfo,
    Param,
    Rename,
    Span,
)
from canary.analysis.compiles import KEY as COMPILES
from canary.analysis.compiles import Uncompiled
from canary.analysis.model import Decoded
from canary.cache.fingerprint import INDEX_CODE, code_fingerprint
from canary.cache.store import Cache
from canary.errors import SourceError


def _fn(fn: FunctionInfo) -> list[Any]:
    params = [[p.name, p.kind, p.default, p.annotation] for p in fn.params]
    renames = [[r.old, r.new, r.version, r.raises, r.exposed] for r in fn.renames]
    return [params, fn.span.start, fn.span.end, renames, fn.returns, list(fn.decorators)]


def _unfn(name: str, data: list[Any]) -> FunctionInfo:
    params, start, end, renames, returns, decorators = data
    return FunctionInfo(
        name,
        tuple(Param(*p) for p in params),
        Span(start, end),
        tuple(Rename(*r) for r in renames),
        returns,
        tuple(decorators),
    )


def _lazy(lazy: LazyExports | None) -> list[Any] | None:
    if lazy is None:
        return None
    names = {k: list(v) for k, v in lazy.names.items()}
    folders, extra, computed = list(lazy.folders), list(lazy.extra), list(lazy.computed)
    return [names, folders, extra, lazy.replaces, lazy.complete, computed, lazy.unread, lazy.shim]


def _unlazy(data: list[Any] | None) -> LazyExports | None:
    if data is None:
        return None
    names, folders, extra, replaces, complete, computed, unread, shim = data
    names = {k: tuple(v) for k, v in names.items()}
    folders, extra, computed = tuple(folders), tuple(extra), tuple(computed)
    return LazyExports(names, folders, extra, replaces, complete, computed, unread, shim)


def dump(info: ModuleInfo) -> dict[str, Any]:
    return {
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
                    [dataclasses.astuple(f) for f in c.fields],
                    dict(c.assigned),
                    list(c.slots),
                    _generator(c.generator),
                    _generator(c.subclass_generator),
                    dict(c.borrowed),
                ]
                for c in classes
            ]
            for name, classes in info.classes.items()
        },
        "star_imports": info.star_imports,
        "star_lines": info.star_lines,
        "typing_star_imports": info.typing_star_imports,
        "all": None if info.all_names is None else list(info.all_names),
        "lazy": _lazy(info.lazy),
        "aliases": info.aliases,
    }


#: The mappings a check reads a few names of; stored as one JSON text per name.
_RECORDS = ("bindings", "functions", "classes")
_COMPACT = (",", ":")


def _unbindings(_name: str, text: str) -> list[Binding]:
    return [Binding(k, Span(s, e), o, t) for k, s, e, o, t in json.loads(text)]


def _unfns(name: str, data: list[Any]) -> list[FunctionInfo]:
    return [_unfn(name, f) for f in data]


def _unfunctions(name: str, text: str) -> list[FunctionInfo]:
    return _unfns(name, json.loads(text))


def _generator(generator: Generator | None) -> list[Any] | None:
    return None if generator is None else list(dataclasses.astuple(generator))


def _ungenerator(data: list[Any] | None) -> Generator | None:
    return None if data is None else Generator(*data)


def _unclasses(name: str, text: str) -> list[ClassInfo]:
    return [
        ClassInfo(
            name,
            tuple(bases),
            Decoded(methods, _unfns),
            Span(s, e),
            tuple(Field(*f) for f in fields),
            assigned,
            tuple(slots),
            _ungenerator(generator),
            _ungenerator(applies),
            borrowed,
        )
        for bases, methods, s, e, fields, assigned, slots, generator, applies, borrowed in (
            json.loads(text)
        )
    ]


def encode(info: ModuleInfo) -> bytes:
    data = dump(info)
    for key in _RECORDS:
        data[key] = {
            name: json.dumps(rows, separators=_COMPACT) for name, rows in data[key].items()
        }
    return json.dumps(data, separators=_COMPACT).encode()


def decode(encoded: bytes, name: str, path: str, text: str) -> ModuleInfo:
    """The index over its stored form; raises ValueError/KeyError/TypeError on a malformed
    entry. Its names, classes and functions are decoded when a check reads them."""
    data = json.loads(encoded)
    return ModuleInfo(
        name=name,
        path=path,
        text=text,
        bindings=Decoded(data["bindings"], _unbindings),
        functions=Decoded(data["functions"], _unfunctions),
        classes=Decoded(data["classes"], _unclasses),
        star_imports=list(data["star_imports"]),
        star_lines=[int(line) for line in data["star_lines"]],
        typing_star_imports=list(data["typing_star_imports"]),
        all_names=None if data["all"] is None else tuple(data["all"]),
        lazy=_unlazy(data["lazy"]),
        aliases=dict(data["aliases"]),
    )


class IndexStore:
    """Indexes as verified "index" entries of the cache; a missing or corrupt one is rebuilt."""

    def __init__(self, cache: Cache):
        self.cache = cache

    @staticmethod
    def _key(key: str) -> str:
        return f"{code_fingerprint(INDEX_CODE)}:{key}"

    def get(self, key: str, name: str, path: str, text: str) -> ModuleInfo | None:
        try:
            raw = self.cache.load("index", self._key(key))
            return None if raw is None else decode(raw, name, path, text)
        except (SourceError, ValueError, KeyError, TypeError):
            return None

    def compiled(self, digest: str) -> tuple[Uncompiled | None] | None:
        """The remembered answer of whether the file of sha256 hex `digest` compiles (in a
        tuple: (None,) when it does), None when none is (or it is malformed)."""
        raw = self.cache.load_json("index", f"{COMPILES}:{digest}")
        if raw == []:
            return (None,)
        if isinstance(raw, list) and len(raw) == 2:
            line, message = raw
            if isinstance(line, int) and isinstance(message, str):
                return ((line, message),)
        return None

    def put_compiled(self, digest: str, why: Uncompiled | None) -> None:
        """Remember whether the file of sha256 hex `digest` compiles."""
        data = [] if why is None else list(why)
        self.cache.store("index", f"{COMPILES}:{digest}", json.dumps(data).encode())

    def put(self, key: str, info: ModuleInfo, encoded: bytes | None = None) -> None:
        """Store `info`; `encoded` is its stored form when a parse worker made it already."""
        self.cache.store("index", self._key(key), encoded or encode(info))
