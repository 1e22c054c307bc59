"""Absolute byte ranges of one remote file, with a single whole download when ranges fail.

Only single absolute ranges are sent (multi-range requests are answered with the whole file by
some servers). A server that ignores Range (200), or answers with a Content-Range or length
other than asked, gets one whole download instead, verified against the index's size and sha256
and counted in the stats; later reads are served from it.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from canary.sources.limits import Limits
from canary.sources.redact import redact
from canary.sources.tree import SourceError

if TYPE_CHECKING:
    from canary.sources.http import Http, Reply

_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
_IDENTITY = {"Accept-Encoding": "identity"}


class RangeReader:
    """Reads [start, stop) slices of the file at `url`, whose size and sha256 the index gave.

    `url` may be a callable: a lock records no URL (file hosts change, and their names stay out
    of the repo), so the index is asked for it only when a byte is actually needed. `http`
    gives the run's client when a byte is fetched: a run over the cache never builds one.
    """

    def __init__(
        self,
        http: Callable[[], Http],
        url: str | Callable[[], str],
        size: int | None,
        sha256: str | None,
        limits: Limits,
        label: str = "",
    ) -> None:
        self._http = http
        self._url = url
        self._label = label
        self.size = size
        self.sha256 = sha256
        self.limits = limits
        self._whole: bytes | None = None
        self._plain = False  # some answer came over plain HTTP
        self._lock = threading.Lock()
        # its own lock: the URL is resolved while `_lock` is held (a locked sdist's download)
        self._url_lock = threading.Lock()

    @property
    def label(self) -> str:
        """How messages name the file: its URL once known, without asking the index for it."""
        if callable(self._url):
            return self._label or "a locked file"
        return redact(self._url)

    @property
    def secure(self) -> bool:
        """Whether every answer so far came over TLS (after redirects), which no byte flipped
        in transit survives, or the whole file was checked against the index's sha256."""
        return not self._plain or (self._whole is not None and bool(self.sha256))

    @property
    def url(self) -> str:
        if callable(self._url):
            with self._url_lock:
                if callable(self._url):
                    self._url = self._url()
        return self._url

    def read(self, start: int, stop: int) -> bytes:
        """Bytes [start, stop) of the file; stop is clipped to the file's size."""
        if self.size is not None:
            stop = min(stop, self.size)
        if start >= stop:
            return b""
        if self._whole is None:
            reply = self._range(f"bytes={start}-{stop - 1}")
            if reply is not None and self._range_matches(reply, start, stop):
                return reply.content
        return self.whole()[start:stop]

    def tail(self, length: int) -> tuple[int, bytes]:
        """The last `length` bytes and where they start; learns the size when it was unknown."""
        if self.size is not None:
            start = max(0, self.size - length)
            return start, self.read(start, self.size)
        if self._whole is None:
            reply = self._range(f"bytes=-{length}")
            header = reply.headers.get("Content-Range", "") if reply is not None else ""
            found = _CONTENT_RANGE.fullmatch(header.strip())
            if reply is not None and found and found.group(3) != "*":
                first, last, total = (int(g) for g in found.groups())
                if last == total - 1 and len(reply.content) == last - first + 1:
                    self.size = total
                    return first, reply.content
        whole = self.whole()
        start = max(0, len(whole) - length)
        return start, whole[start:]

    def whole(self) -> bytes:
        """The whole file, downloaded at most once per reader, verified when the index allows."""
        with self._lock:
            if self._whole is None:
                self._whole = self._download()
            return self._whole

    def forget_whole(self) -> None:
        """Drop the downloaded file (a tar reader keeps only the members it needs)."""
        with self._lock:
            self._whole = None

    def _range(self, spec: str) -> Reply | None:
        """A range reply, or None when the server sent the whole file (kept, not re-fetched)."""
        reply = self._heard(
            self._http().get(
                self.url,
                {"Range": spec, **_IDENTITY},
                allow=(416,),
                max_bytes=self.limits.max_download,
            )
        )
        if reply.status == 206:
            return reply
        if reply.status == 200:
            with self._lock:
                if self._whole is None and self._verified(reply.content) is None:
                    self._http().stats.add(whole_downloads=1)
                    self._whole = reply.content
        return None

    def _heard(self, reply: Reply) -> Reply:
        if urlsplit(reply.url).scheme.lower() != "https":
            self._plain = True
        return reply

    def _range_matches(self, reply: Reply, start: int, stop: int) -> bool:
        found = _CONTENT_RANGE.fullmatch(reply.headers.get("Content-Range", "").strip())
        if not found:
            return False
        first, last, total = found.groups()
        total_ok = total == "*" or self.size is None or int(total) == self.size
        return (
            int(first) == start
            and int(last) == stop - 1
            and total_ok
            and len(reply.content) == stop - start
        )

    def _download(self) -> bytes:
        """One whole download (a second one if the first fails verification)."""
        problem = ""
        for _ in range(2):
            reply = self._heard(
                self._http().get(self.url, _IDENTITY, allow=(), max_bytes=self.limits.max_download)
            )
            self._http().stats.add(whole_downloads=1)
            problem = self._verified(reply.content) or ""
            if not problem:
                self.size = len(reply.content)
                return reply.content
        raise SourceError(f"{redact(self.url)}: {problem}")

    def _verified(self, data: bytes) -> str | None:
        """Why `data` is not the file the index describes, or None when it is."""
        if self.size is not None and len(data) != self.size:
            return f"downloaded {len(data)} bytes, the index says {self.size}"
        if self.sha256 and hashlib.sha256(data).hexdigest() != self.sha256.lower():
            return "sha256 of the download differs from the index"
        return None
