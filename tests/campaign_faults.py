"""Fault injection at random, with a fixed seed, on top of the sources tests' FileServer.

FileServer (tests/servers.py) already injects resets, error statuses, 429 + Retry-After and
truncated bodies from a per-route queue. A FaultServer decides, for every request, whether to
inject one and which, from a FaultPlan; it adds the faults a campaign also needs: a response
stalled past the client's read timeout, Range ignored, a wrong Content-Range, and a byte flipped
inside the central directory or inside a member's data (chosen where the response covers them).

Each decision depends only on the seed, the request's path and Range, and how many times that
same request was made before. Which ranges a run requests can still vary with thread scheduling
(a tail size is learned from the releases read before), so a seed's faults can vary too.
"""

from __future__ import annotations

import io
import random
import socket
import struct
import threading
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler
from typing import Protocol

from servers import _RANGE, FileServer, Logged, Route, _bounds

#: the FileServer queue handles these (see tests/servers.py)
QUEUED = ("reset", "503", "429:1", "truncate")
#: handled here ("hang" is for killing a client mid-download, never drawn at random)
OWN = ("slow", "norange", "badrange", "flip-cd", "flip-member", "hang")
FLIPS = ("flip-cd", "flip-member")
ALL = QUEUED + OWN[:-1]


class Plan(Protocol):
    def choose(self, path: str, range_header: str | None, attempt: int) -> str: ...


@dataclass(frozen=True)
class FaultPlan:
    """Which faults a server injects.

    Random mode (`burst` None): each request is faulted with probability `rate`, so a fault can
    repeat on every retry and end in `error`. Transient mode: each distinct request (path and
    Range) fails its first 0..`burst` tries, at most one of them with a flipped byte, then
    succeeds: what the retry rules promise to ride out.
    """

    seed: int
    kinds: tuple[str, ...] = ALL
    rate: float = 0.3
    burst: int | None = None

    def choose(self, path: str, range_header: str | None, attempt: int) -> str:
        """The fault for the `attempt`-th (0-based) try of this request, or ""."""
        key = f"{self.seed}|{path}|{range_header}"
        if self.burst is None:
            rng = random.Random(f"{key}|{attempt}")
            return rng.choice(self.kinds) if rng.random() < self.rate else ""
        rng = random.Random(key)
        schedule = [rng.choice(self.kinds) for _ in range(rng.randint(0, self.burst))]
        transport = [k for k in self.kinds if k not in FLIPS] or ["503"]
        for i, kind in enumerate(schedule):
            if kind in FLIPS and any(k in FLIPS for k in schedule[:i]):
                schedule[i] = rng.choice(transport)
        return schedule[attempt] if attempt < len(schedule) else ""


@dataclass
class HangPlan:
    """Hang the `nth` (0-based) request to `path`: half its body is sent, then nothing."""

    path: str
    nth: int
    _seen: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def choose(self, path: str, range_header: str | None, attempt: int) -> str:
        if path != self.path:
            return ""
        with self._lock:
            self._seen += 1
            return "hang" if self._seen - 1 == self.nth else ""


def zip_regions(body: bytes) -> dict[str, list[tuple[int, int]]]:
    """Byte ranges [start, stop) of the central directory and of each member's data."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
    except zipfile.BadZipFile:
        return {}
    members = []
    for info in archive.infolist():
        at = info.header_offset
        name_len, extra_len = struct.unpack("<HH", body[at + 26 : at + 30])
        start = at + 30 + name_len + extra_len
        members.append((start, start + info.compress_size))
    size, offset = struct.unpack("<II", body[-10:-2])  # the end record (no comment, no Zip64)
    return {"flip-cd": [(offset, offset + size)], "flip-member": members}


def directory_entry(archive: bytes, name: str) -> int:
    """Offset of `name`'s entry in the central directory."""
    ((at, end),) = zip_regions(archive)["flip-cd"]
    while at < end:
        name_len, extra_len, comment_len = struct.unpack("<HHH", archive[at + 28 : at + 34])
        if archive[at + 46 : at + 46 + name_len] == name.encode():
            return at
        at += 46 + name_len + extra_len + comment_len
    raise LookupError(name)


class FaultServer(FileServer):
    """A FileServer whose every request consults `plan` (None: no faults); counts injections."""

    def __init__(self, plan: Plan | None = None, stall: float = 0.6) -> None:
        super().__init__()
        self.plan = plan
        self.stall = stall
        self.injected: Counter[str] = Counter()
        #: set while a "hang" response is stuck; `release` lets it end
        self.hanging = threading.Event()
        self.release = threading.Event()
        self._tries: Counter[tuple[str, str | None]] = Counter()
        self._regions: dict[str, dict[str, list[tuple[int, int]]]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._httpd.RequestHandlerClass = _faulty_handler(self, self._httpd.RequestHandlerClass)
        # clients abandoning stalled responses and killed clients are the point, not news
        self._httpd.handle_error = lambda request, client_address: None

    def arm(self, plan: Plan | None) -> None:
        """Start a new campaign run: this plan, every request counted from its first try."""
        with self._guard:
            self.plan = plan
            self._tries.clear()

    def decide(self, path: str, range_header: str | None, route: Route) -> tuple[str, Route]:
        """The fault for this request and the route variant that carries it."""
        with self._guard:
            attempt = self._tries[(path, range_header)]
            self._tries[(path, range_header)] = attempt + 1
            if path not in self._regions:
                self._regions[path] = zip_regions(route.body)
        fault = self.plan.choose(path, range_header, attempt) if self.plan else ""
        variant = route
        if fault in FLIPS:
            variant = self._flipped(path, range_header, route, fault, attempt)
            fault = fault if variant is not None else ""
        elif fault == "norange":
            variant = replace(route, ranges=False)
        elif fault == "badrange":
            fault = fault if range_header else ""
            variant = replace(route, bad_content_range=True)
        if fault:
            with self._guard:
                self.injected[fault] += 1
        return fault, variant or route

    def _flipped(
        self, path: str, range_header: str | None, route: Route, kind: str, attempt: int
    ) -> Route | None:
        """The route with one byte flipped where this response covers `kind`'s region."""
        asked = _RANGE.fullmatch(range_header or "")
        first, last = _bounds(asked, len(route.body)) if asked else (0, len(route.body) - 1)
        spots = [
            (max(a, first), min(b, last + 1))
            for a, b in self._regions[path].get(kind, [])
            if max(a, first) < min(b, last + 1)
        ]
        if not spots:
            return None
        rng = random.Random(f"{self.plan}|{path}|{range_header}|{attempt}")
        start, stop = rng.choice(spots)
        at = rng.randrange(start, stop)
        body = bytearray(route.body)
        body[at] ^= 1 << rng.randrange(8)
        return replace(route, body=bytes(body))

    def lock_for(self, path: str) -> threading.Lock:
        """Serializes queued faults with the requests of one path, so none is stolen."""
        with self._guard:
            return self._locks.setdefault(path, threading.Lock())

    def tally(self) -> int:
        return sum(self.injected.values())


def _faulty_handler(
    server: FaultServer, base: type[BaseHTTPRequestHandler]
) -> type[BaseHTTPRequestHandler]:
    class Handler(base):  # type: ignore[misc, valid-type]
        def setup(self) -> None:
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            route = server.routes.get(path)
            if route is None:
                super().do_GET()
                return
            fault, variant = server.decide(path, self.headers.get("Range"), route)
            if fault in OWN:
                server.log.append(Logged(path, dict(self.headers.items())))
                if fault == "slow":
                    time.sleep(server.stall)
                    self.close_connection = True
                    return
                if fault == "hang":
                    self._hang(variant)
                    return
                self._serve(variant, "")
                return
            with server.lock_for(path):
                if fault:
                    route.faults.append(fault)
                super().do_GET()

        def _hang(self, route: Route) -> None:
            """Headers and half the body, then stall until the server is told to release."""
            self.send_response(200)
            self.send_header("Content-Length", str(len(route.body)))
            self.end_headers()
            self.wfile.write(route.body[: len(route.body) // 2])
            self.wfile.flush()
            server.hanging.set()
            server.release.wait(timeout=60)
            self.close_connection = True

    return Handler
