"""Tar archives (sdists, GitHub tarballs), streamed from memory, never extracted to disk.

Tar has no index, so the archive is downloaded whole (capped) and read once, member by member,
decompressing as it goes: only the files a check may read (sources and small metadata) are
kept, each capped at the source limit, and the number of members is capped too. Links, devices
and FIFOs are remembered so that asking for one is an error rather than a silent follow or a
silent absence; members with absolute or `..` paths are dropped; the total unpacked size is
capped (tar/gzip bombs), and so is any single read the tar reader makes (a "long name" header
declaring a gigabyte).
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import re
import tarfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from canary.cache.store import Cache
from canary.errors import CanaryError, ExitCode
from canary.sources.limits import Limits
from canary.sources.ranges import RangeReader
from canary.sources.tree import MemberRefused, SourceError

#: files a check may ask for: Python sources and the small text files versions come from
_KEPT_SUFFIXES = (".py", ".pyi", ".toml", ".cfg", ".txt")
#: whole archives unpacked at once in a process: each holds its download and kept members
_UNPACKING = threading.BoundedSemaphore(2)


class TarFormatError(CanaryError):
    """The archive is damaged or exceeds the caps."""

    exit_code = ExitCode.FAILED


@dataclass
class Unpacked:
    """The kept regular files of a tar archive by normalized name, the names that are links,
    and the names that cannot be read with the reason (a device, a FIFO, over the cap)."""

    files: dict[str, bytes] = field(default_factory=dict)
    links: set[str] = field(default_factory=set)
    refused: dict[str, str] = field(default_factory=dict)

    def names(self) -> set[str]:
        return set(self.files) | self.links | set(self.refused)


#: an empty, `.` or `..` part (a leading `/` or an empty name included), a backslash, a NUL
_UNSAFE = re.compile(r"(?:\A|/)\.{0,2}(?:/|\Z)|[\\\x00]")


def is_safe(name: str) -> bool:
    """A relative POSIX path without `..`, empty or `.` parts and without backslashes."""
    return _UNSAFE.search(name) is None


#: What _UNSAFE finds, as text between slashes: an empty, `.` or `..` part, a backslash or a NUL.
_UNSAFE_PARTS = ("//", "/./", "/../", "\\", "\x00")


def first_unsafe(names: list[str]) -> str | None:
    """The first of `names` that is_safe refuses (a directory's trailing `/` aside), or None.
    An archive lists thousands of names and nearly always none is unsafe: a few substring
    searches over all of them joined by `/` cost a fraction of one regex search per name. The
    parts of that text are exactly the names' parts, so a search finds what is_safe finds, and
    a directory's `/` only (then the names are joined again without it)."""
    if not names:
        return None
    if _all_safe(names):  # no name ends with `/`: else `//` is found
        return None
    if _all_safe([name.removesuffix("/") for name in names]):
        return None
    return next((name for name in names if not is_safe(name.removesuffix("/"))), None)


def _all_safe(names: list[str]) -> bool:
    joined = "/".join(["", *names, ""])
    return not any(part in joined for part in _UNSAFE_PARTS)


def _kept(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return "." not in base or base.endswith(_KEPT_SUFFIXES) or base == "PKG-INFO"


class _Bounded:
    """A decompressed stream that refuses oversized single reads and reading too far.

    tarfile reads a "long name" or pax header whole in one read: the cap on one read keeps a
    header declaring a gigabyte from being decompressed into memory."""

    def __init__(self, inner: io.BufferedIOBase, max_read: int, max_total: int) -> None:
        self.inner, self.max_read, self.max_total = inner, max_read, max_total

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > self.max_read:
            raise TarFormatError(f"a tar header or member asks for over {self.max_read} bytes")
        self._check(self.inner.tell() + size)
        return self.inner.read(size)

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence != 0:
            raise TarFormatError("unexpected seek in a tar stream")
        self._check(offset)
        return self.inner.seek(offset)

    def tell(self) -> int:
        return self.inner.tell()

    def _check(self, position: int) -> None:
        if position > self.max_total:
            raise TarFormatError(f"unpacks to over {self.max_total} bytes")


def _decompressed(data: bytes) -> io.BufferedIOBase:
    """A streaming reader of the tar inside gzip, bzip2 or xz (or none), by magic bytes."""
    raw = io.BytesIO(data)
    if data[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw)
    if data[:3] == b"BZh":
        return bz2.BZ2File(raw)
    if data[:6] == b"\xfd7zXZ\x00":
        return lzma.LZMAFile(raw)
    return raw


def unpack_tar(data: bytes, limits: Limits) -> Unpacked:
    """Stream every member of a (possibly compressed) tar held in memory."""
    unpacked = Unpacked()
    declared = kept = count = 0
    stream = _Bounded(_decompressed(data), limits.max_member + 64 * 1024, limits.max_unpacked)
    try:
        # "r:" rather than a stream: its reads go straight to `stream`, where they are capped
        with tarfile.open(fileobj=stream, mode="r:") as archive:  # type: ignore[call-overload]
            for member in archive:
                count += 1
                if count > limits.max_members:
                    raise TarFormatError(f"has over {limits.max_members} members")
                archive.members.clear()  # read in order once: no memory per member
                name = member.name.removeprefix("./")
                declared += max(member.size, 0)
                if declared > limits.max_unpacked:
                    raise TarFormatError(f"unpacks to over {limits.max_unpacked} bytes")
                if not is_safe(name):
                    continue
                if member.issym() or member.islnk():
                    unpacked.links.add(name)
                elif member.ischr() or member.isblk():
                    unpacked.refused[name] = "is a device, not a regular file"
                elif member.isfifo():
                    unpacked.refused[name] = "is a FIFO, not a regular file"
                elif not member.isfile():
                    continue
                elif member.size > limits.max_member:
                    unpacked.refused[name] = (
                        f"is {member.size} bytes, over the {limits.max_member} byte cap"
                    )
                elif not _kept(name):
                    unpacked.refused[name] = "is not a source or metadata file"
                else:
                    kept += member.size
                    if kept > limits.max_kept:
                        raise TarFormatError(f"holds over {limits.max_kept} bytes of sources")
                    handle = archive.extractfile(member)
                    content = handle.read() if handle else b""
                    if len(content) != member.size:
                        raise TarFormatError(f"member {name!r} is truncated")
                    unpacked.files[name] = content
    except (tarfile.TarError, OSError, EOFError, lzma.LZMAError, ValueError) as exc:
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
        self._listing: Unpacked | None = None
        #: why the archive could not be unpacked: its bytes are verified, so every check that
        #: reads it gets the same answer without unpacking it again (a 100,000-member archive
        #: took ~4 s of CPU a time)
        self._refused: str | None = None
        self._lock = threading.Lock()

    def names(self) -> set[str]:
        """Every member name (links and refused members are errors in read_many)."""
        return self._names().names()

    def read_many(self, names: Iterable[str]) -> dict[str, bytes]:
        """The bytes of each named regular file; a link or refused member is a SourceError."""
        listing = self._names()
        found: dict[str, bytes] = {}
        for name in names:
            if name in listing.links:
                raise MemberRefused(f"{self.reader.label}: {name} is a link, not read")
            if name in listing.refused:
                raise MemberRefused(f"{self.reader.label}: {name} {listing.refused[name]}")
            cached = self.cache.get(f"{self.key}/{name}")
            if cached is None:
                self.cache.require_online(f"{name} of {self.reader.label}")
                cached = self._unpack().files[name]
                self.cache.put(f"{self.key}/{name}", cached)
            found[name] = cached
        return found

    def _names(self) -> Unpacked:
        """The listing: names only (`files` maps each kept name to b"")."""
        with self._lock:
            if self._listing is None:
                what = f"listing of {self.reader.label}"
                key = f"{self.key}#listing"
                raw = self.cache.get_or_fetch(key, what, self._fetch_listing)
                try:
                    self._listing = _listing_from(raw)
                except _Malformed:  # verified bytes of the wrong shape: fetch them again
                    self.cache.require_online(what)
                    raw = self._fetch_listing()
                    self.cache.put(key, raw)
                    self._listing = _listing_from(raw)
            return self._listing

    def _fetch_listing(self) -> bytes:
        unpacked = self._unpack_locked()
        return json.dumps(
            {
                "files": sorted(unpacked.files),
                "links": sorted(unpacked.links),
                "refused": unpacked.refused,
            }
        ).encode()

    def _unpack(self) -> Unpacked:
        with self._lock:
            return self._unpack_locked()

    def _unpack_locked(self) -> Unpacked:
        if self._refused is not None:
            raise SourceError(self._refused)
        if self._unpacked is None:
            with _UNPACKING:
                try:
                    self._unpacked = unpack_tar(self.reader.whole(), self.limits)
                except TarFormatError as exc:
                    self._refused = f"{self.reader.label}: {exc}"
                    raise SourceError(self._refused) from None
                finally:
                    self.reader.forget_whole()  # the kept members are all that is needed now
        return self._unpacked


class _Malformed(SourceError):
    """A cached listing of the wrong shape."""


def _listing_from(raw: bytes) -> Unpacked:
    """A listing, checked for shape: an ill-typed entry is refetched, never a crash."""
    try:
        data = json.loads(raw)
        files, links = data["files"], data["links"]
        refused = data.get("refused", {})
        if not (
            all(isinstance(n, str) for n in [*files, *links, *refused])
            and all(isinstance(r, str) for r in refused.values())
        ):
            raise TypeError("names must be strings")
        return Unpacked(dict.fromkeys(files, b""), set(links), dict(refused))
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise _Malformed(f"malformed tar listing: {type(exc).__name__}") from None
