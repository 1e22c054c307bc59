"""Tar archives (sdists, GitHub tarballs), read whole and in memory, never extracted to disk.

Tar has no index, so the archive is downloaded whole (capped). Only regular files are kept;
links are remembered so that asking for one is an error rather than a silent follow; members
with absolute or `..` paths are dropped; the total unpacked size is capped (tar/gzip bombs).
"""

from __future__ import annotations

import io
import json
import tarfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from canary.sources.cache import Cache
from canary.sources.limits import Limits
from canary.sources.ranges import RangeReader
from canary.sources.tree import SourceError


class TarFormatError(Exception):
    """The archive is damaged or exceeds the caps."""


@dataclass
class Unpacked:
    """The regular files of a tar archive by normalized name, and the names that are links."""

    files: dict[str, bytes] = field(default_factory=dict)
    links: set[str] = field(default_factory=set)


def is_safe(name: str) -> bool:
    """A relative POSIX path without `..`, empty or `.` parts and without backslashes."""
    if not name or name.startswith("/") or "\\" in name or "\x00" in name:
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def unpack_tar(data: bytes, limits: Limits) -> Unpacked:
    """Read every member of a (possibly compressed) tar held in memory."""
    unpacked = Unpacked()
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            for member in archive:
                name = member.name.removeprefix("./")
                total += max(member.size, 0)
                if total > limits.max_unpacked:
                    raise TarFormatError(f"unpacks to over {limits.max_unpacked} bytes")
                if not is_safe(name):
                    continue
                if member.issym() or member.islnk():
                    unpacked.links.add(name)
                elif member.isfile():
                    handle = archive.extractfile(member)
                    content = handle.read() if handle else b""
                    if len(content) != member.size:
                        raise TarFormatError(f"member {name!r} is truncated")
                    unpacked.files[name] = content
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise TarFormatError(f"not a readable tar archive: {exc}") from exc
    return unpacked


class RemoteTar:
    """Members of one remote tar sdist: downloaded whole once, listing and members cached."""

    def __init__(self, reader: RangeReader, cache: Cache, key: str, limits: Limits) -> None:
        self.reader = reader
        self.cache = cache
        self.key = key
        self.limits = limits
        self._unpacked: Unpacked | None = None
        self._names: tuple[set[str], set[str]] | None = None
        self._lock = threading.Lock()

    def names(self) -> set[str]:
        """Every file and link name (links are refused by read_many)."""
        files, links = self._listing()
        return files | links

    def read_many(self, names: Iterable[str]) -> dict[str, bytes]:
        """The bytes of each named regular file; a link is a SourceError."""
        _files, links = self._listing()
        found: dict[str, bytes] = {}
        for name in names:
            if name in links:
                raise SourceError(f"{self.reader.label}: {name} is a link, not read")
            cached = self.cache.get(f"{self.key}/{name}")
            if cached is None:
                self.cache.require_online(f"{name} of {self.reader.label}")
                cached = self._unpack().files[name]
                self.cache.put(f"{self.key}/{name}", cached)
            found[name] = cached
        return found

    def _listing(self) -> tuple[set[str], set[str]]:
        with self._lock:
            if self._names is None:
                what = f"listing of {self.reader.label}"
                raw = self.cache.get_or_fetch(f"{self.key}#listing", what, self._fetch_listing)
                data = json.loads(raw)
                self._names = set(data["files"]), set(data["links"])
            return self._names

    def _fetch_listing(self) -> bytes:
        unpacked = self._unpack_locked()
        return json.dumps(
            {"files": sorted(unpacked.files), "links": sorted(unpacked.links)}
        ).encode()

    def _unpack(self) -> Unpacked:
        with self._lock:
            return self._unpack_locked()

    def _unpack_locked(self) -> Unpacked:
        if self._unpacked is None:
            try:
                self._unpacked = unpack_tar(self.reader.whole(), self.limits)
            except TarFormatError as exc:
                raise SourceError(f"{self.reader.label}: {exc}") from None
        return self._unpacked
