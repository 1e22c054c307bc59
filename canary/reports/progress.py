"""Progress of a run on stderr, for a person watching a terminal.

A cold run reads every release from the package index, which takes tens of seconds: without a
sign of life that looks like a hang. On a terminal one status line says the phase the run is in
and counts its steps to a total that does not move (the versions read; scan's checks placed by
bisection), with the bytes downloaded, rewritten in place and erased at the end, so the report
below it is all that stays. In a log (stderr not a terminal) nothing is written: CI output
stays the report.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from canary.reports.grid import plural
from canary.reports.text import human_size

#: seconds between two redraws; a warm run of 143 versions must not spend its time drawing
INTERVAL = 0.1


def is_cold(cache_root: Path) -> bool:
    """True when the cache holds nothing yet: the run reads everything from the network."""
    return not cache_root.is_dir() or next(cache_root.iterdir(), None) is None


class Progress:
    """The phase a run is in and a count that ends: `canary: reading releases: 37/143, 12.3 MB
    downloaded`, then for scan `canary: bisecting 12 checks: 5/12 placed, 9 more releases
    read, ...`. Thread-safe, drawn at most every INTERVAL."""

    def __init__(
        self,
        stream: TextIO,
        downloaded: Callable[[], float],
        *,
        cold_cache: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
        command: str = "run",
    ) -> None:
        self.stream = stream
        self.downloaded = downloaded
        self.cold_cache = cold_cache
        self.clock = clock
        self.command = command  # "run", or "scan" (its first line says "first scan")
        self.phase_name = ""
        self.unit = ""  # what `done` counts beside the count: "placed"
        self.total = 0
        self.done = 0
        self.read = 0  # releases read beside the phase's count (those bisections open)
        self._drawn_at = -INTERVAL
        self._width = 0
        self._lock = threading.Lock()

    def begin(self, what: str) -> None:
        """A status line before the plan is known (scan reads the client's files first, for
        seconds): `canary: WHAT`, replaced by the counting line once `start` is called."""
        with self._lock:
            self._write(f"canary: {what}")

    def start(self, total: int, releases: int, upstreams: Sequence[str] = ()) -> None:
        """Called once the plan is known: the phase of reading its `total` versions (`releases`
        of them from the package index); says what a first run is about to do (and of which
        `upstreams`, when given)."""
        self._erase()  # the line `begin` drew
        if self.cold_cache is not None and releases:
            of = f" of {', '.join(upstreams)}" if upstreams else ""
            self.stream.write(
                f"canary: first {self.command}: reading {plural(releases, 'release')}{of} from"
                f" the package index; cached afterwards in {self.cold_cache}\n"
            )
        what = "releases" if releases == total else "versions"
        self.phase(f"reading {what}", total)

    def phase(self, name: str, total: int, unit: str = "") -> None:
        """A new phase of `total` steps (`unit`: what a step is, said after the count)."""
        with self._lock:
            self.phase_name, self.total, self.unit, self.done = name, total, unit, 0
            self._draw(force=True)

    def advance(self) -> None:
        """One step of the phase done."""
        with self._lock:
            self.done += 1
            self._draw(force=self.done == self.total)

    def read_one(self) -> None:
        """A release read beside the phase's steps (a bisection opening one more)."""
        with self._lock:
            self.read += 1
            self._draw()

    def _draw(self, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self._drawn_at < INTERVAL:
            return
        self._drawn_at = now
        unit = f" {self.unit}" if self.unit else ""
        more = f", {plural(self.read, 'more release')} read" if self.read else ""
        self._write(
            f"canary: {self.phase_name}: {self.done}/{self.total}{unit}{more}, "
            f"{human_size(self.downloaded())} downloaded"
        )

    def _write(self, line: str) -> None:
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def _erase(self) -> None:
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0

    def close(self) -> None:
        """Erases the status line, leaving the cursor where the report starts."""
        with self._lock:
            self._erase()
