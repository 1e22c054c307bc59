"""A zip archive on a server, read by byte ranges: the central directory first, then only the
members asked for.

One tail read, sized from the index's `size` and what earlier releases of the project needed,
usually brings the end records and the central directory; the parsed listing is cached, so a
warm run makes no request. Members are decompressed in memory, capped, and verified against the
directory's CRC-32 and sizes (and their local header's name); only then are they cached, under
what the directory says of them (project, path, CRC-32, sizes), so a file unchanged since another
release of the project is fetched once. Verification failures are retried once (a transient
corruption heals); a persistent one is a SourceError.

No checksum covers the central directory's names: a byte flipped in one could make a module look
absent. Over TLS no byte changes in transit; over plain HTTP a wheel's RECORD (which builders
write just before the directory) is read too, and must name exactly the directory's files.
"""

from __future__ import annotations

import csv
import functools
import io
import re
import struct
import threading
from collections import Counter
from collections.abc import Callable, Iterable, KeysView
from typing import TypeVar

from canary.cache.store import Cache
from canary.sources.daemons import DaemonPool
from canary.sources.limits import Limits
from canary.sources.ranges import RangeReader
from canary.sources.tarball import first_unsafe
from canary.sources.tree import MemberRefused, SourceError
from canary.sources.zipformat import (
    EOCD_SEARCH,
    ZIP64_EOCD_SIZE,
    Directory,
    Member,
    Table,
    ZipFormatError,
    find_directory,
    holds,
    member_data,
    parse_directory,
)

_RECORD = re.compile(r"[^/]+\.dist-info/RECORD")
_SIGNATURES = (".jws", ".p7s")
_T = TypeVar("_T")


class CorruptArchive(SourceError):
    """Bytes that fail the archive's own checks twice (as opposed to a network fault)."""


#: A stored listing's head: where the central directory starts in the archive, its entries.
_STORED_HEAD = struct.Struct("<QQ")


class Listing:
    """The verified member table of an archive.

    The cache keeps the central directory itself (`stored`): storing what was read costs
    nothing, where encoding thousands of entries cost a cold run a second, and parsing it
    again is as fast as decoding any other form of it."""

    def __init__(self, table: Table, index: dict[str, int]) -> None:
        self._table = table
        self._index = index  # each name's place in the table

    def entry(self, name: str) -> Member:
        return self._table.member(self._index[name])

    @property
    def names(self) -> KeysView[str]:
        return self._index.keys()

    def same_as(self, other: Listing) -> bool:
        """The same members, each stated the same (a listing fetched again is compared)."""
        return self.names == other.names and all(
            self.entry(n) == other.entry(n) for n in self.names
        )

    @classmethod
    def parse(cls, raw: bytes, directory: Directory, label: str) -> Listing:
        """The listing of the central directory `raw`; SourceError for an unsafe or doubled
        member name (before any of the archive's bytes are believed)."""
        table = parse_directory(raw, directory)
        index = dict(zip(table.names, range(len(table.names)), strict=True))
        unsafe = first_unsafe(table.names)
        if unsafe is not None:
            raise SourceError(f"{label}: unsafe member name {unsafe!r}")
        if len(index) < len(table.names):
            twice = next(n for n, count in Counter(table.names).items() if count > 1)
            raise ZipFormatError(f"member {twice!r} appears twice")
        return cls(table, index)

    @staticmethod
    def stored(raw: bytes, directory: Directory) -> bytes:
        """What the cache keeps of the central directory `raw` (from_bytes reads it)."""
        return _STORED_HEAD.pack(directory.offset, directory.count) + raw

    @classmethod
    def from_bytes(cls, stored: bytes, label: str) -> Listing:
        offset, count = _STORED_HEAD.unpack_from(stored)
        raw = stored[_STORED_HEAD.size :]
        return cls.parse(raw, Directory(offset, len(raw), count), label)


def listing_key(release: str) -> str:
    """The cache key of a wheel's listing (its central directory) by the release file's key."""
    return f"{release}#directory"


def member_key(project: str, entry: Member) -> str:
    """A member's cache key: what the central directory says of its content, within its project.

    CRC-32 is no cryptographic hash: a release can craft a file with another's path, CRC and
    sizes, so keys never reach across projects (a hostile project poisons only its own)."""
    return f"{project}/{entry.name}@crc32:{entry.crc:08x}:{entry.usize}:{entry.csize}"


class TailHints:
    """What the listings of a project's archives needed so far (end records, central directory,
    and RECORD where it is read), so later releases of the project get it in one request.

    Both the largest share of an archive and the largest byte count are learned, and the
    smaller prediction is used: a pure-Python wheel's directory grows with the wheel, but a
    platform wheel (vLLM, bitsandbytes) is mostly compiled libraries whose size says nothing
    about its directory. A prediction that falls short costs one more request, never a byte."""

    def __init__(self) -> None:
        self._learned: dict[str, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def predict(self, project: str, size: int) -> int | None:
        """Bytes to read from the end of a `size`-byte archive, or None before any was read."""
        with self._lock:
            learned = self._learned.get(project)
        if learned is None:
            return None
        share, most = learned
        return int(min(size * share, most) * 1.03) + 4096  # a little over: releases grow

    def learn(self, project: str, size: int, needed: int) -> None:
        with self._lock:
            share, most = self._learned.get(project, (0.0, 0))
            self._learned[project] = (max(share, needed / size), max(most, needed))


class Claims:
    """Members some thread of this process is fetching now, by member key: releases read in
    parallel that share a file fetch it once; the others wait for it and read the cache."""

    def __init__(self) -> None:
        self._pending: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def claim(self, keys: Iterable[str]) -> tuple[set[str], list[threading.Event]]:
        """(the keys the caller must fetch, the events of those others are fetching)."""
        mine: set[str] = set()
        theirs: list[threading.Event] = []
        with self._lock:
            for key in set(keys):
                if key in self._pending:
                    theirs.append(self._pending[key])
                else:
                    self._pending[key] = threading.Event()
                    mine.add(key)
        return mine, theirs

    def done(self, keys: Iterable[str]) -> None:
        with self._lock:
            for key in keys:
                event = self._pending.pop(key, None)
                if event is not None:
                    event.set()


class _Buffer:
    """Contiguous bytes [start, start + len(data)) of the remote file, grown leftwards."""

    def __init__(self, reader: RangeReader, start: int, data: bytes) -> None:
        self.reader = reader
        self.start = start
        self.data = data

    def cover(self, start: int) -> None:
        """Make sure bytes from `start` on are held, with one range request if needed."""
        start = max(0, start)
        if start < self.start:
            self.data = self.reader.read(start, self.start) + self.data
            self.start = start

    def slice(self, start: int, stop: int) -> bytes:
        self.cover(start)
        return self.data[start - self.start : stop - self.start]


class RemoteZip:
    """Members of one remote zip (a wheel, or an sdist in .zip form), cached under `key`."""

    def __init__(
        self,
        reader: RangeReader,
        cache: Cache,
        key: str,
        limits: Limits,
        *,
        wheel: bool,
        project: str,
        hints: TailHints | None = None,
        claims: Claims | None = None,
    ) -> None:
        self.reader = reader
        self.cache = cache
        self.key = key
        self.limits = limits
        self.wheel = wheel
        self.hints = hints or TailHints()
        self.project = project
        self.claims = claims or Claims()
        self._listing: Listing | None = None
        self._lock = threading.Lock()

    def names(self) -> KeysView[str]:
        """Every member name, decided from the (cached) central directory."""
        return self.listing().names

    def listing(self) -> Listing:
        with self._lock:
            if self._listing is None:
                built: list[Listing] = []

                def fetch() -> bytes:
                    listing, stored = self._fetched_listing()
                    built.append(listing)
                    return stored

                what = f"listing of {self.reader.label}"
                # under the archive's own lock, which its members are fetched under (never
                # while the listing is: _fetch takes the listing it is given)
                raw = self.cache.get_or_fetch(listing_key(self.key), what, fetch, self.key)
                # a listing just fetched is used as built, not parsed again
                self._listing = built[-1] if built else Listing.from_bytes(raw, self.reader.label)
            return self._listing

    def read_many(self, names: Iterable[str]) -> dict[str, bytes]:
        """The verified bytes of each named member (all must be in the listing)."""
        names = list(names)
        listing = self.listing()
        found = self._cached(names, listing)
        missing = [n for n in names if n not in found]
        if not missing:
            return found
        self.cache.require_online(f"{missing[0]} of {self.reader.label}")
        keys = {n: self._key(listing.entry(n)) for n in missing}
        mine, theirs = self.claims.claim(keys.values())
        try:
            own = [n for n in missing if keys[n] in mine]
            found.update(self._fetch(own, listing, self.claims.done))
        finally:
            self.claims.done(mine)
        for event in theirs:  # another release of this run is fetching the same file
            event.wait(self.cache.lock_timeout)
        rest = [n for n in missing if n not in found]
        found.update(self._cached(rest, listing))
        # what another thread failed to fetch is fetched here, and its fault reported here
        found.update(self._fetch([n for n in rest if n not in found], listing))
        return found

    def _cached(self, names: list[str], listing: Listing) -> dict[str, bytes]:
        """Members the cache holds, each checked against the CRC-32 and size its key names."""
        found = {}
        for name in names:
            entry = listing.entry(name)
            data = self.cache.get_member(self._key(entry), functools.partial(holds, entry))
            if data is not None:
                found[name] = data
        return found

    def _key(self, entry: Member) -> str:
        return member_key(self.project, entry)

    def _fetch(
        self,
        names: list[str],
        listing: Listing,
        stored: Callable[[list[str]], None] | None = None,
    ) -> dict[str, bytes]:
        """Fetch members with range requests, under the archive's lock (one fetch across
        processes); neighbouring members share a request. `stored` hears the sha256 of each
        group's members as soon as they are cached (threads waiting for them go on)."""
        if not names:
            return {}
        with self.cache.lock(self.key):
            found = self._cached(names, listing)
            wanted = [listing.entry(n) for n in dict.fromkeys(names) if n not in found]
            for entry in wanted:  # what the directory declares decides: no fetch, no retry
                if entry.usize > self.limits.max_member:
                    raise MemberRefused(
                        f"{self.reader.label}: member {entry.name!r} declares {entry.usize} "
                        f"bytes, over the {self.limits.max_member} byte cap"
                    )
            groups = self._groups(wanted)
            for group, outcome in zip(
                groups, _concurrently(self._fetch_checked, groups), strict=True
            ):
                try:
                    fetched = outcome()
                except CorruptArchive:
                    fresh = self._relisted(listing)
                    if fresh is None:
                        raise
                    listing = fresh
                    group = [listing.entry(e.name) for e in group]
                    fetched = self._fetch_checked(group)
                for name, data in fetched.items():
                    self.cache.put_member(self._key(listing.entry(name)), data)
                    found[name] = data
                if stored is not None:
                    stored([self._key(listing.entry(n)) for n in fetched])
        return found

    def _relisted(self, old: Listing) -> Listing | None:
        """The listing fetched again, when members keep failing against the one we hold.

        A byte flipped in transit in the central directory (a CRC or an offset) verifies as a
        listing and would be cached forever; members then fail on every run. Fetching it once
        more tells a corrupt listing (it changes: replace it) from a corrupt archive (it does
        not: None, and the member's error stands).
        """
        fresh, stored = self._fetched_listing()
        if not fresh.same_as(old):
            self.cache.put(listing_key(self.key), stored)
            with self._lock:
                self._listing = fresh
            return fresh
        return None

    def _retrying(self, fetch: Callable[[], _T]) -> _T:
        """Run `fetch` again once when the bytes were inconsistent; then give up clearly."""
        try:
            return fetch()
        except ZipFormatError:
            pass
        try:
            return fetch()
        except ZipFormatError as exc:
            raise CorruptArchive(f"{self.reader.label}: {exc}") from None

    def _groups(self, entries: list[Member]) -> list[list[Member]]:
        """Members close together share one range request."""
        groups: list[list[Member]] = []
        for entry in sorted(entries, key=lambda e: e.offset):
            if groups and entry.offset - groups[-1][-1].end <= self.limits.merge_gap:
                groups[-1].append(entry)
            else:
                groups.append([entry])
        return groups

    def _fetch_checked(self, group: list[Member]) -> dict[str, bytes]:
        return self._retrying(lambda: self._fetch_group(group))

    def _fetch_group(self, group: list[Member]) -> dict[str, bytes]:
        base = group[0].offset
        data = self.reader.read(base, group[-1].end)
        limit = self.limits.max_member
        return {e.name: member_data(e, data[e.offset - base : e.end - base], limit) for e in group}

    def _fetched_listing(self) -> tuple[Listing, bytes]:
        """The listing, fetched once more when its bytes were inconsistent: the same request
        again, whatever other releases of the project taught the hints meanwhile (a retry that
        moved with them asked for other bytes, depending on the threads' timing)."""
        want = self._tail_wanted()
        return self._retrying(lambda: self._fetch_listing(want))

    def _tail_wanted(self) -> int:
        """How many bytes from the archive's end the first request for the listing asks."""
        size = self.reader.size
        if size is None:
            return self.limits.tail_min  # a suffix range
        return self.hints.predict(self.project, size) or min(
            int(size * self.limits.tail_share) + self.limits.tail_extra,
            self.limits.tail_guess_max,
        )

    def _fetch_listing(self, want: int) -> tuple[Listing, bytes]:
        """The listing, and its stored form (not kept with it: a run holds every listing)."""
        start, tail = self.reader.tail(want)
        buffer = _Buffer(self.reader, start, tail)
        total = start + len(tail)
        try:
            directory = find_directory(buffer.data, buffer.start, total)
        except ZipFormatError:
            if buffer.start == 0:
                raise
            buffer.cover(total - EOCD_SEARCH - ZIP64_EOCD_SIZE)
            directory = find_directory(buffer.data, buffer.start, total)
        if directory.count > self.limits.max_members:
            raise SourceError(f"{self.reader.label}: over {self.limits.max_members} members")
        if directory.size > self.limits.max_directory:
            raise SourceError(f"{self.reader.label}: central directory over the byte cap")
        if directory.offset < buffer.start:
            # RECORD usually precedes the directory and is about half its size: one request
            spare = directory.size // 2 + self.limits.tail_extra if self._needs_record() else 0
            buffer.cover(directory.offset - spare)
        listing, stored = self._parse(buffer, directory)
        needed_from = directory.offset
        if self._needs_record():  # asked again: the directory's own request may have been plain
            needed_from = min(needed_from, self._check_record(listing, buffer))
        self.hints.learn(self.project, total, total - needed_from)
        return listing, stored

    def _needs_record(self) -> bool:
        """Whether some byte of the listing came where it could change unseen (the module's
        docstring): a wheel's RECORD then checks the directory's names."""
        return self.wheel and not self.reader.secure

    def _parse(self, buffer: _Buffer, directory: Directory) -> tuple[Listing, bytes]:
        if directory.offset + directory.size > buffer.start + len(buffer.data):
            raise ZipFormatError("central directory lies beyond the end of the file")
        raw = buffer.slice(directory.offset, directory.offset + directory.size)
        return Listing.parse(raw, directory, self.reader.label), Listing.stored(raw, directory)

    def _check_record(self, listing: Listing, buffer: _Buffer) -> int:
        """Check that RECORD names exactly the archive's files; where RECORD starts."""
        found = [name for name in listing.names if _RECORD.fullmatch(name)]
        if len(found) != 1:
            raise ZipFormatError(f"wheel has {len(found)} .dist-info/RECORD files, not one")
        entry = listing.entry(found[0])
        text = member_data(entry, buffer.slice(entry.offset, entry.end), self.limits.max_member)
        listed = _record_paths(text) - {entry.name}
        files = {n for n in listing.names if not n.endswith("/")} - {entry.name}
        files -= {entry.name + s for s in _SIGNATURES}
        if files != listed:
            odd = sorted(files ^ listed)[:3]
            raise ZipFormatError(f"central directory and RECORD disagree about {odd}")
        return entry.offset


#: Range requests one archive's members may have in flight at once. Large platform wheels sit
#: on hosts that answer a range in 100-200 ms: one request after another, their member groups
#: made a cold run wait on latency, not on bytes.
_GROUPS_AT_ONCE = 16
_group_pool = None
_group_pool_lock = threading.Lock()


def _concurrently(
    fetch: Callable[[list[Member]], _T], groups: list[list[Member]]
) -> list[Callable[[], _T]]:
    """Start fetching every group; each returned call gives its group's result (or raises its
    error), in order. One group is fetched when its result is asked for."""
    if len(groups) < 2:
        return [functools.partial(fetch, group) for group in groups]
    global _group_pool
    with _group_pool_lock:
        if _group_pool is None:  # a warm run never needs it; daemons, so Ctrl-C never waits
            _group_pool = DaemonPool(_GROUPS_AT_ONCE, "canary-range")
    return [_group_pool.submit(fetch, group).result for group in groups]


def _record_paths(text: bytes) -> set[str]:
    """Every path a RECORD file lists."""
    try:
        rows = list(csv.reader(io.StringIO(text.decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ZipFormatError(f"RECORD is unreadable: {exc}") from exc
    return {row[0] for row in rows if row}
