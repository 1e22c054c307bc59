"""A total deadline per HTTP request, enforced by closing its socket when time is up.

Socket timeouts bound each read, not the request: a server dripping one byte every second
never trips a 60 s read timeout and holds a run for as long as it likes. A watchdog thread
shuts down the sockets of a request whose deadline passed, so the blocked read returns at
once and the request fails like a dropped connection. The sockets are learned from the
connection pools (headers and body alike), so the deadline covers the whole exchange.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool

from canary.compat.urllib3 import BeforeRequest, SharedTlsContext

_current = threading.local()


class Deadline:
    """The end time of one request and the connections it uses."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.expired = False
        self._connections: list[Any] = []
        self._lock = threading.Lock()

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def watch(self, connection: Any) -> None:
        """Remember a connection this request uses; cut it at once when already expired."""
        with self._lock:
            self._connections.append(connection)
            expired = self.expired
        if expired:
            _cut(connection)

    def expire(self) -> None:
        with self._lock:
            self.expired = True
            connections = list(self._connections)
        for connection in connections:
            _cut(connection)

    def release(self) -> None:
        with self._lock:
            self._connections.clear()


def _cut(connection: Any) -> None:
    """Shut the connection's socket down: a read blocked on it returns end-of-stream."""
    sock = getattr(connection, "sock", None)
    if sock is None:
        return
    # the plain socket's shutdown, even under TLS: the reader owns the TLS object
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Watchdog:
    """One daemon thread expiring deadlines in time order."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def add(self, deadline: Deadline) -> None:
        with self._wake:
            heapq.heappush(self._heap, (deadline.at, next(self._order), deadline))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="canary-deadlines", daemon=True
                )
                self._thread.start()
            if self._heap[0][2] is deadline:  # else the watchdog wakes for an earlier one first
                self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap:
                    self._wake.wait()
                at, _, deadline = self._heap[0]
                wait = at - time.monotonic()
                if wait > 0:
                    self._wake.wait(wait)
                    continue
                heapq.heappop(self._heap)
            deadline.expire()


_watchdog = _Watchdog()


@contextmanager
def bounded(deadline: Deadline) -> Iterator[Deadline]:
    """Within the block, every connection the thread's requests use obeys `deadline`."""
    _current.deadline = deadline
    _watchdog.add(deadline)
    try:
        yield deadline
    finally:
        _current.deadline = None
        deadline.release()


class _Watched(BeforeRequest):
    """Pool mixin: hand each connection to the calling thread's deadline before using it."""

    def before_request(self, conn: Any) -> None:
        deadline = getattr(_current, "deadline", None)
        if deadline is not None:
            deadline.watch(conn)


class _HTTPPool(_Watched, HTTPConnectionPool):
    pass


class _HTTPSPool(SharedTlsContext, _Watched, HTTPSConnectionPool):
    pass


_POOLS = {"http": _HTTPPool, "https": _HTTPSPool}


class DeadlineAdapter(HTTPAdapter):
    """requests' adapter with pools whose connections the deadlines can cut."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if proxy.lower().startswith(("http:", "https:")):  # SOCKS managers bring their own
            manager.pool_classes_by_scheme = _POOLS
        return manager
