"""Counters of what fetching cost, for the JSON output and the bytes-per-release targets."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class Stats:
    """Thread-safe tallies shared by every source of one run."""

    requests: int = 0
    bytes_downloaded: int = 0
    cache_hits: int = 0
    whole_downloads: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(
        self,
        *,
        requests: int = 0,
        bytes_downloaded: int = 0,
        cache_hits: int = 0,
        whole_downloads: int = 0,
    ) -> None:
        with self._lock:
            self.requests += requests
            self.bytes_downloaded += bytes_downloaded
            self.cache_hits += cache_hits
            self.whole_downloads += whole_downloads

    def as_dict(self) -> dict[str, int]:
        """A consistent copy, e.g. for the `stats` object of the JSON report."""
        with self._lock:
            return {
                "requests": self.requests,
                "bytes_downloaded": self.bytes_downloaded,
                "cache_hits": self.cache_hits,
                "whole_downloads": self.whole_downloads,
            }
