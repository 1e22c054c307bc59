"""Module indexes keyed by content: identical files across releases are parsed once, and most
of them only in the statements a check reads (canary.analysis.sparse)."""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from canary.analysis.compiles import Uncompiled, compile_error
from canary.analysis.flight import Flights
from canary.analysis.indexer import decode, index_module
from canary.analysis.model import MAX_SOURCE_BYTES, Exports, ModuleInfo
from canary.analysis.sparse import sparse_module

if TYPE_CHECKING:
    from canary.analysis.store import IndexStore


#: a parser for ModuleCache: (data, name, path, is_package=) -> (index, its stored form or None)
Parse = Callable[..., tuple[ModuleInfo, Any]]


def parse_here(data: bytes, name: str, path: str, *, is_package: bool) -> tuple[ModuleInfo, None]:
    """A parser for ModuleCache: the index, and no stored form (the store makes it)."""
    return index_module(data, name, path, is_package=is_package), None


class ModuleCache:
    """Indexes keyed by (content hash, module name): identical files across releases parse once,
    and with a `store` (an IndexStore) once across runs too."""

    def __init__(
        self,
        capacity: int = 64,
        store: IndexStore | None = None,
        parse: Parse = parse_here,
        sparse: bool = True,
    ):
        self.capacity = capacity
        self.store = store
        self.sparse = sparse  # index name by name where it can (else always whole, and stored)
        # (data, name, path, is_package=) -> (index, its stored form or None); a
        # canary.analysis.pool.ParsePool parses and encodes in worker processes
        self.parse = parse
        self._items: OrderedDict[str, ModuleInfo] = OrderedDict()
        # what folder walks read of a module, by the same key: a few names per file, kept for
        # the run (an index of each of transformers' 1,500 model files is not)
        self._exports: dict[str, Exports] = {}
        # evicted indexes a run still holds (a release kept open) are found without a load
        self._held: weakref.WeakValueDictionary[str, ModuleInfo] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()
        self._flights = Flights(self._lock)
        self.parses = 0
        self._compiled: dict[str, Uncompiled | None] = {}  # file digest -> why not, or None

    def compile_error(self, digest: str, text: str) -> Uncompiled | None:
        """Why the text (its file's sha256 hex `digest`) does not compile, None when it does:
        compiled once per content, and with a store once across runs (a whole compile costs
        what a whole parse does, which reading by statements saves)."""
        with self._lock:
            if digest in self._compiled:
                return self._compiled[digest]
        known = self.store.compiled(digest) if self.store else None
        if known is None:
            why = compile_error(text)
            if self.store:
                self.store.put_compiled(digest, why)
        else:
            why = known[0]
        with self._lock:
            self._compiled[digest] = why
        return why

    def exports(self, data: bytes, name: str, path: str, *, is_package: bool) -> Exports:
        """The module's exports (Exports.of its index), its index made once per content."""
        digest = hashlib.sha256(data).hexdigest()
        key = _key(digest, name, is_package)
        with self._lock:
            found = self._exports.get(key)
        if found is None:
            info = self.get(data, name, path, is_package=is_package, digest=digest)
            found = Exports.of(info)
            with self._lock:
                self._exports[key] = found
        return found

    def get(
        self, data: bytes, name: str, path: str, *, is_package: bool, digest: str | None = None
    ) -> ModuleInfo:
        """The index of `data` (whose sha256 hex `digest` the caller may have computed)."""
        key = _key(digest or hashlib.sha256(data).hexdigest(), name, is_package)

        def find() -> ModuleInfo | None:  # under the lock
            info = self._items.get(key)
            if info is not None:
                self._items.move_to_end(key)
                return info
            info = self._held.get(key)
            if info is not None:
                self._keep(key, info)
            return info

        # threads judging neighbouring releases ask for the same file at once: one parses it
        return self._flights.once(key, find, lambda: self._make(key, data, name, path, is_package))

    def _make(self, key: str, data: bytes, name: str, path: str, is_package: bool) -> ModuleInfo:
        text = decode(data, path)
        info = self.store.get(key, name, path, text) if self.store else None
        if info is None and self.sparse and len(data) <= MAX_SOURCE_BYTES:
            # raises ParseError for a file too costly to parse, as the whole parse would
            info = sparse_module(text, name, path, is_package=is_package)
            if info is not None:
                with self._lock:
                    self.parses += 1  # parsed name by name as checks read it; not stored
        if info is None:
            info, encoded = self.parse(data, name, path, is_package=is_package)
            with self._lock:
                self.parses += 1
            if self.store:
                self.store.put(key, info, encoded)
        with self._lock:
            self._keep(key, info)
        return info

    def _keep(self, key: str, info: ModuleInfo) -> None:
        """Hold `info` as the newest entry (under the lock), evicting the oldest past capacity."""
        self._items[key] = self._held[key] = info
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)


def _key(digest: str, name: str, is_package: bool) -> str:
    """An index's key: the file's content (its sha256 hex `digest`), and the module it is
    read as."""
    return hashlib.sha256(f"{digest}:{name}:{is_package}".encode()).hexdigest()
