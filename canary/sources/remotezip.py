"""A zip archive on a server, read by byte ranges: the central directory first, then only the
members asked for.

For a wheel one tail read sized from the index's `size` usually brings the end records, the
central directory and RECORD (which wheel builders write last, just before the directory).
The parsed listing is checked against RECORD and cached, so a warm run makes no request.
Members are decompressed in memory, capped, and verified against the directory's CRC32 and
RECORD's sha256; only then are they cached, under that sha256, so a file unchanged since another
release (of any project) is fetched once. Verification failures are retried once (a transient
corruption heals); a persistent one is a SourceError.
"""

from __future__ import annotations

import base64
import csv
import functools
import hashlib
import io
import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from canary.sources.cache import Cache
from canary.sources.limits import Limits
from canary.sources.ranges import RangeReader
from canary.sources.tarball import is_safe
from canary.sources.tree import SourceError
from canary.sources.zipformat import (
    EOCD_SEARCH,
    ZIP64_EOCD_SIZE,
    Directory,
    Entry,
    ZipFormatError,
    find_directory,
    member_data,
    parse_directory,
)

_RECORD = re.compile(r"[^/]+\.dist-info/RECORD")
_SIGNATURES = (".jws", ".p7s")
_T = TypeVar("_T")


class CorruptArchive(SourceError):
    """Bytes that fail the archive's own checks twice (as opposed to a network fault)."""


@dataclass(frozen=True)
class Listing:
    """The verified member table of an archive, and RECORD's sha256 per path for wheels.

    `entries` maps a name to its Entry, or to the cached row an Entry is made from on demand:
    a warm run looks at a handful of a wheel's thousands of members.
    """

    entries: dict[str, Entry | list]
    record: dict[str, str] | None

    def entry(self, name: str) -> Entry:
        row = self.entries[name]
        return row if isinstance(row, Entry) else Entry.from_json(row)

    @functools.cached_property
    def names(self) -> frozenset[str]:
        return frozenset(self.entries)

    def to_bytes(self) -> bytes:
        entries = [list(e) for e in self.entries.values()]
        return json.dumps({"entries": entries, "record": self.record}).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> Listing:
        data = json.loads(raw)
        return cls({row[0]: row for row in data["entries"]}, data["record"])


class TailHints:
    """The largest share of a project's archives its listing needed so far (end records,
    central directory, RECORD), so later releases of the project get it in one request."""

    def __init__(self) -> None:
        self._shares: dict[str, float] = {}
        self._lock = threading.Lock()

    def get(self, project: str) -> float | None:
        with self._lock:
            return self._shares.get(project)

    def learn(self, project: str, share: float) -> None:
        with self._lock:
            self._shares[project] = max(share, self._shares.get(project, 0.0))


class Claims:
    """Members some thread of this process is fetching now, by sha256: releases read in
    parallel that share a file fetch it once; the others wait for it and read the cache."""

    def __init__(self) -> None:
        self._pending: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def claim(self, digests: Iterable[str]) -> tuple[set[str], list[threading.Event]]:
        """(the digests the caller must fetch, the events of those others are fetching)."""
        mine: set[str] = set()
        theirs: list[threading.Event] = []
        with self._lock:
            for digest in set(digests):
                if digest in self._pending:
                    theirs.append(self._pending[digest])
                else:
                    self._pending[digest] = threading.Event()
                    mine.add(digest)
        return mine, theirs

    def done(self, digests: Iterable[str]) -> None:
        with self._lock:
            for digest in digests:
                event = self._pending.pop(digest, None)
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
        hints: TailHints | None = None,
        project: str = "",
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

    def names(self) -> frozenset[str]:
        """Every member name, decided from the (cached) central directory."""
        return self.listing().names

    def listing(self) -> Listing:
        with self._lock:
            if self._listing is None:
                what = f"listing of {self.reader.label}"
                raw = self.cache.get_or_fetch(
                    f"{self.key}#listing", what, lambda: self._retrying(self._fetch_listing)
                )
                self._listing = Listing.from_bytes(raw)
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
        digests = {n: d for n in missing if (d := (listing.record or {}).get(n))}
        mine, theirs = self.claims.claim(digests.values())
        try:
            own = [n for n in missing if n not in digests or digests[n] in mine]
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
        found = {}
        for name in names:
            digest = (listing.record or {}).get(name)
            data = self.cache.get_content(digest) if digest else None
            if data is None and not digest:
                data = self.cache.get(self._member_key(name))
            if data is not None:
                found[name] = data
        return found

    def _store(self, name: str, data: bytes, listing: Listing) -> None:
        """Cache a verified member: by RECORD's sha256 (which it matched), else by name."""
        digest = (listing.record or {}).get(name)
        if digest:
            self.cache.put_content(digest, data)
        else:
            self.cache.put(self._member_key(name), data)

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
                    raise SourceError(
                        f"{self.reader.label}: member {entry.name!r} declares {entry.usize} "
                        f"bytes, over the {self.limits.max_member} byte cap"
                    )
            for group in self._groups(wanted):
                try:
                    fetched = self._retrying(lambda g=group, li=listing: self._fetch_group(g, li))
                except CorruptArchive:
                    fresh = self._relisted(listing)
                    if fresh is None:
                        raise
                    listing = fresh
                    group = [listing.entry(e.name) for e in group]
                    fetched = self._retrying(lambda g=group, li=listing: self._fetch_group(g, li))
                for name, data in fetched.items():
                    self._store(name, data, listing)
                    found[name] = data
                if stored is not None:
                    stored([d for n in fetched if (d := (listing.record or {}).get(n))])
        return found

    def _relisted(self, old: Listing) -> Listing | None:
        """The listing fetched again, when members keep failing against the one we hold.

        A byte flipped in transit in the central directory (a CRC or an offset) verifies as a
        listing and would be cached forever; members then fail on every run. Fetching it once
        more tells a corrupt listing (it changes: replace it) from a corrupt archive (it does
        not: None, and the member's error stands).
        """
        raw = self._retrying(self._fetch_listing)
        fresh = Listing.from_bytes(raw)
        if fresh.entries.keys() != old.entries.keys() or any(
            fresh.entry(n) != old.entry(n) for n in fresh.entries
        ):
            self.cache.put(f"{self.key}#listing", raw)
            with self._lock:
                self._listing = fresh
            return fresh
        return None

    def _member_key(self, name: str) -> str:
        return f"{self.key}/{name}"

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

    def _groups(self, entries: list[Entry]) -> list[list[Entry]]:
        """Members close together share one range request."""
        groups: list[list[Entry]] = []
        for entry in sorted(entries, key=lambda e: e.offset):
            if groups and entry.offset - groups[-1][-1].end <= self.limits.merge_gap:
                groups[-1].append(entry)
            else:
                groups.append([entry])
        return groups

    def _fetch_group(self, group: list[Entry], listing: Listing) -> dict[str, bytes]:
        base = group[0].offset
        data = self.reader.read(base, group[-1].end)
        return {
            e.name: self._verified(e, data[e.offset - base : e.end - base], listing) for e in group
        }

    def _verified(self, entry: Entry, record: bytes, listing: Listing) -> bytes:
        data = member_data(entry, record, self.limits.max_member)
        expected = (listing.record or {}).get(entry.name)
        if expected and _sha256(data) != expected:
            raise ZipFormatError(f"sha256 of {entry.name!r} differs from RECORD")
        return data

    def _fetch_listing(self) -> bytes:
        size = self.reader.size
        want = self.limits.tail_min
        if size is not None:
            learned = self.hints.get(self.project)
            if learned is None:
                guess = int(size * self.limits.tail_share) + self.limits.tail_extra
                want = max(want, min(guess, self.limits.tail_guess_max))
            else:  # a little over the largest share seen (releases grow), however small
                want = int(size * learned * 1.03) + 4096
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
            buffer.cover(directory.offset - directory.size // 2 - self.limits.tail_extra)
        entries = self._parse(buffer, directory)
        record = self._record(entries, buffer) if self.wheel else None
        needed_from = min(
            [directory.offset] + [e.offset for e in entries.values() if _RECORD.fullmatch(e.name)]
        )
        self.hints.learn(self.project, (total - needed_from) / total)
        return Listing(entries, record).to_bytes()

    def _parse(self, buffer: _Buffer, directory: Directory) -> dict[str, Entry]:
        if directory.offset + directory.size > buffer.start + len(buffer.data):
            raise ZipFormatError("central directory lies beyond the end of the file")
        raw = buffer.slice(directory.offset, directory.offset + directory.size)
        entries: dict[str, Entry] = {}
        for entry in parse_directory(raw, directory):
            if not is_safe(entry.name.removesuffix("/")):
                raise SourceError(f"{self.reader.label}: unsafe member name {entry.name!r}")
            if entry.name in entries:
                raise ZipFormatError(f"member {entry.name!r} appears twice")
            entries[entry.name] = entry
        return entries

    def _record(self, entries: dict[str, Entry], buffer: _Buffer) -> dict[str, str]:
        """RECORD's hashes, after checking it names exactly the archive's files."""
        found = [name for name in entries if _RECORD.fullmatch(name)]
        if len(found) != 1:
            raise ZipFormatError(f"wheel has {len(found)} .dist-info/RECORD files, not one")
        entry = entries[found[0]]
        text = member_data(entry, buffer.slice(entry.offset, entry.end), self.limits.max_member)
        hashes, listed = _parse_record(text)
        files = {n for n in entries if not n.endswith("/")} - {entry.name}
        files -= {entry.name + s for s in _SIGNATURES}
        if files != listed - {entry.name}:
            odd = sorted(files ^ (listed - {entry.name}))[:3]
            raise ZipFormatError(f"central directory and RECORD disagree about {odd}")
        return hashes


def _parse_record(text: bytes) -> tuple[dict[str, str], set[str]]:
    """(sha256 hex per path, every path) from a RECORD file."""
    try:
        rows = list(csv.reader(io.StringIO(text.decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ZipFormatError(f"RECORD is unreadable: {exc}") from exc
    hashes: dict[str, str] = {}
    listed: set[str] = set()
    for row in rows:
        if not row:
            continue
        listed.add(row[0])
        algorithm, _, digest = (row[1] if len(row) > 1 else "").partition("=")
        if algorithm == "sha256" and digest:
            try:
                hashes[row[0]] = base64.urlsafe_b64decode(digest + "=" * (-len(digest) % 4)).hex()
            except ValueError as exc:
                raise ZipFormatError(f"RECORD hash of {row[0]!r} is malformed") from exc
    return hashes, listed


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
