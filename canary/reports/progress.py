"""Progress of a run on stderr, for a person watching a terminal.

A cold run reads every release from the package index, which takes tens of seconds: without a
sign of life that looks like a hang. On a terminal one status line counts the versions read and
the bytes downloaded, rewritten in place and erased at the end, so the report below it is all
that stays. In a log (stderr not a terminal) nothing is written: CI output stays the report.
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
    """Counts versions as the runner finishes them; thread-safe, drawn at most every INTERVAL."""

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
        self.total = 0
        self.done = 0
        self.last = ""
        self._drawn_at = -INTERVAL
        self._width = 0
        self._lock = threading.Lock()

    def begin(self, what: str) -> None:
        """A status line before the plan is known (scan reads the client's files first, for
        seconds): `canary: WHAT`, replaced by the counting line once `start` is called."""
        with self._lock:
            self._write(f"canary: {what}")

    def start(self, total: int, releases: int, upstreams: Sequence[str] = ()) -> None:
        """Called once the plan is known; says what a first run is about to do (and of which
        `upstreams`, when given)."""
        self.total = total
        self._erase()  # the line `begin` drew
        if self.cold_cache is not None and releases:
            of = f" of {', '.join(upstreams)}" if upstreams else ""
            self.stream.write(
                f"canary: first {self.command}: reading {plural(releases, 'release')}{of} from"
                f" the package index; cached afterwards in {self.cold_cache}\n"
            )
        self._draw(force=True)

    def grow(self, more: int = 1) -> None:
        """More versions to read than the plan said (scan's bisections find them as it goes)."""
        with self._lock:
            self.total += more

    def advance(self, upstream: str) -> None:
        with self._lock:
            self.done += 1
            self.last = upstream
            self._draw(force=self.done == self.total)

    def _draw(self, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self._drawn_at < INTERVAL:
            return
        self._drawn_at = now
        where = f"{self.last}: " if self.last else ""
        self._write(
            f"canary: {where}{self.done}/{self.total} versions read, "
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
