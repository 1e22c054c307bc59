"""A run's memories of what it made lately, bounded by weight: parsed statements by their text,
members by their key, digests by their bytes. Releases of a project repeat most of what the
previous one held, a few reads later, so the newest entries are the ones kept."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memo(Generic[K, V]):
    """The newest values by key, up to `capacity` in their `weight` (characters of a text,
    bytes of a member), the oldest dropped first; safe across threads."""

    def __init__(self, capacity: int, weight: Callable[[K, V], int]) -> None:
        self.capacity = capacity
        self._weight = weight
        self._held = 0
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def made(self, key: K, make: Callable[[], V]) -> V:
        """The value held for `key`, else what `make` makes of it, then held (two threads
        asking at once may both make it: the first one held stays)."""
        found = self.get(key)
        if found is None:
            found = make()
            self.put(key, found)
        return found

    def put(self, key: K, value: V) -> None:
        with self._lock:
            if key in self._items:
                return
            self._items[key] = value
            self._held += self._weight(key, value)
            while self._held > self.capacity and self._items:
                old, dropped = self._items.popitem(last=False)
                self._held -= self._weight(old, dropped)
