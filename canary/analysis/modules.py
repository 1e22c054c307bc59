"""Module indexes keyed by content: identical files across releases are parsed once."""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict

from canary.analysis.indexer import decode, index_module
from canary.analysis.model import ModuleInfo


def parse_here(data: bytes, name: str, path: str, *, is_package: bool) -> tuple[ModuleInfo, None]:
    """A parser for ModuleCache: the index, and no stored form (the store makes it)."""
    return index_module(data, name, path, is_package=is_package), None


class ModuleCache:
    """Indexes keyed by (content hash, module name): identical files across releases parse once,
    and with a `store` (an IndexStore) once across runs too."""

    def __init__(self, capacity: int = 64, store=None, parse=parse_here):
        self.capacity = capacity
        self.store = store
        # (data, name, path, is_package=) -> (index, its stored form or None); a
        # canary.analysis.pool.ParsePool parses and encodes in worker processes
        self.parse = parse
        self._items: OrderedDict[str, ModuleInfo] = OrderedDict()
        # evicted indexes a run still holds (a release kept open) are found without a load
        self._held: weakref.WeakValueDictionary[str, ModuleInfo] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()
        self.parses = 0

    def get(self, data: bytes, name: str, path: str, *, is_package: bool) -> ModuleInfo:
        digest = hashlib.sha256(data).hexdigest()
        key = hashlib.sha256(f"{digest}:{name}:{is_package}".encode()).hexdigest()
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            info = self._held.get(key)
        if info is None:
            info = self.store.get(key, name, path, decode(data, path)) if self.store else None
        if info is None:
            info, encoded = self.parse(data, name, path, is_package=is_package)
            with self._lock:
                self.parses += 1
            if self.store:
                self.store.put(key, info, encoded)
        with self._lock:
            self._items[key] = self._held[key] = info
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return info
