"""The on-disk cache shared by every run and every pytest-xdist worker.

Immutable entries are kept until pruned: release listings (keyed by project, file name and the
index's file hash), release members (by project, path, CRC-32 and sizes: a file unchanged
since another release of the project is stored and fetched once), parsed module indexes and
verdicts (keyed by canary's code fingerprint too). Fresh entries (branch files and index pages)
are kept for `max_age` seconds, then revalidated with If-None-Match. Each entry file carries its
key and its content's sha256 and is verified on every read (a release member by the CRC-32
and size its key names); a corrupt entry is deleted and rebuilt, never believed. Writes go
to a temp file in the same folder and are published with os.replace; a file lock per key
makes concurrent processes fetch a key once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from canary.cache.memo import Memo
from canary.safety.writes import atomic_replace
from canary.sources.stats import Stats
from canary.sources.tree import SourceError

if TYPE_CHECKING:
    from canary.sources.http import Reply

_MAGIC = b"canary-cache 1\n"
LAYOUT = "v3"  # v3: members by content, listings by project and file, indexes and verdicts
#: What each kind of entry holds, as `canary cache info` names it.
KINDS = {
    "member": "release members, by content (kept until pruned)",
    "release": "release listings (kept until pruned)",
    "index": "parsed module indexes",
    "verdict": "remembered verdicts per release",
    "scan": "downstream files scanned by `canary scan`",
    "fresh": "branch files and index pages",
}
DEFAULT_MAX_AGE = 3600.0
#: A read refreshes an entry's date (for `cache prune`) at most this often.
_TOUCH_EVERY = 86400.0
#: Bytes of the members read last kept in memory: a release's unchanged files are read again
#: by the next release of its project (a re-judge of the shipped matrices reads 6,199 members,
#: 3,495 of them again, each within the last hundred members read, 4 MB at most).
_RECENT_BYTES = 8 << 20
_held = threading.local()  # the cache lock paths the current thread holds


@dataclass(frozen=True)
class Entry:
    """A verified cache entry: its bytes and the metadata stored with them."""

    data: bytes
    meta: dict[str, object] = field(default_factory=dict)

    @property
    def absent(self) -> bool:
        """True for a remembered 404: the file does not exist at that ref."""
        return bool(self.meta.get("absent"))


class Cache:
    """Content-verified, process-safe store under one root folder."""

    def __init__(
        self,
        root: Path,
        stats: Stats,
        *,
        offline: bool = False,
        max_age: float = DEFAULT_MAX_AGE,
        lock_timeout: float = 900.0,
    ) -> None:
        self.root = Path(root)
        self.stats = stats
        self.offline = offline
        self.max_age = max_age
        self.lock_timeout = lock_timeout
        self._folder = os.path.join(self.root, LAYOUT)
        self._recent: Memo[str, bytes] = Memo(_RECENT_BYTES, lambda _key, data: len(data))

    # -- immutable entries ------------------------------------------------------------------

    def get(self, key: str) -> bytes | None:
        """The verified bytes of an immutable entry, or None."""
        entry = self._load("release", key)
        if entry is None:
            return None
        self.stats.add(cache_hits=1)
        return entry.data

    def put(self, key: str, data: bytes) -> None:
        """Store an immutable entry (atomically)."""
        self._store("release", key, Entry(data))

    def get_member(self, key: str, holds: Callable[[bytes], bool]) -> bytes | None:
        """A release member stored by content (remotezip.member_key), or None. `holds` checks
        the bytes against the CRC-32 and size its key names, in place of the entry's sha256:
        the module's content key is its own sha256, so one digest per member read, not two.
        An entry that fails it is deleted (and fetched again). A member read lately is answered
        from memory, checked when it was read: its key names what `holds` checks."""
        data = self._recent.get(key)
        if data is None:
            entry = self._load("member", key, verify=holds)
            if entry is None:
                return None
            data = entry.data
            self._recent.put(key, data)
        self.stats.add(cache_hits=1)
        return data

    def put_member(self, key: str, data: bytes) -> None:
        """Store a member already verified against what its key names."""
        self._store("member", key, Entry(data))

    def load(self, kind: str, key: str) -> bytes | None:
        """A verified derived entry (an index, verdicts); not counted as a fetch saved."""
        entry = self._load(kind, key)
        return None if entry is None else entry.data

    def load_json(self, kind: str, key: str) -> object:
        """A derived entry stored as JSON; None when absent, unreadable or not JSON (the caller
        rebuilds it)."""
        try:
            raw = self.load(kind, key)
            return None if raw is None else json.loads(raw)
        except (SourceError, ValueError, RecursionError):
            return None

    def store(self, kind: str, key: str, data: bytes) -> None:
        """Store a derived entry; a full or read-only disk only costs rebuilding it later."""
        try:
            self._store(kind, key, Entry(data))
        except SourceError:
            return

    def get_or_fetch(
        self, key: str, what: str, fetch: Callable[[], bytes], lock: str | None = None
    ) -> bytes:
        """The entry for `key`, fetching it under the lock of `lock` (default: `key`) when
        missing. A cold run creates a file per lock: entries fetched at one place share one."""
        data = self.get(key)
        if data is not None:
            return data
        self.require_online(what)
        with self.lock(lock or key):
            data = self.get(key)
            if data is None:
                data = fetch()
                self.put(key, data)
            return data

    # -- fresh entries ----------------------------------------------------------------------

    def revalidate(
        self, key: str, what: str, fetch: Callable[[str | None], Reply], *, refresh: bool = False
    ) -> Entry:
        """A fresh entry for `key`; when stale, `fetch(etag)` revalidates or replaces it.

        `fetch` gets the stored ETag (or None) and returns a Reply: 304 keeps the entry, 404 is
        remembered as absent, anything else with a body replaces it. Offline, a stale entry is
        used as is.
        """
        entry = self._load("fresh", key)
        if entry is not None and (self.offline or (not refresh and self._is_fresh(entry))):
            self.stats.add(cache_hits=1)
            return entry
        self.require_online(what)
        with self.lock(key):
            entry = self._load("fresh", key)
            if entry is not None and not refresh and self._is_fresh(entry):
                self.stats.add(cache_hits=1)
                return entry
            reply = fetch(str(entry.meta["etag"]) if entry and entry.meta.get("etag") else None)
            if reply.status == 304:
                if entry is None:
                    raise SourceError(f"{what}: 304 Not Modified without a cached copy")
                fresh = Entry(entry.data, {**entry.meta, "fetched": time.time()})
            elif reply.status == 404:
                fresh = Entry(b"", {"absent": True, "fetched": time.time()})
            else:
                meta: dict[str, object] = {"fetched": time.time(), "url": reply.url}
                if reply.headers.get("ETag"):
                    meta["etag"] = reply.headers["ETag"]
                if reply.headers.get("Content-Type"):
                    meta["content_type"] = reply.headers["Content-Type"]
                fresh = Entry(reply.content, meta)
            self._store("fresh", key, fresh)
            return fresh

    def put_fresh(self, key: str, data: bytes | None) -> None:
        """Record a fresh entry learned another way (a tarball); None records absence."""
        meta: dict[str, object] = {"fetched": time.time()}
        if data is None:
            meta["absent"] = True
        self._store("fresh", key, Entry(data or b"", meta))

    def has_fresh(self, key: str) -> bool:
        """Whether `key` would be served without a request (offline counts any entry)."""
        entry = self._load("fresh", key)
        return entry is not None and (self.offline or self._is_fresh(entry))

    def _is_fresh(self, entry: Entry) -> bool:
        fetched = entry.meta.get("fetched")
        return isinstance(fetched, (int, float)) and time.time() - fetched < self.max_age

    # -- shared plumbing --------------------------------------------------------------------

    def require_online(self, what: str) -> None:
        """Raise the offline miss error when the network may not be used."""
        if self.offline:
            raise SourceError(f"offline: {what} not in cache")

    @contextmanager
    def lock(self, key: str) -> Iterator[None]:
        """Exclusive across threads and processes for one key.

        A thread asking again for a key it holds would wait on itself for `lock_timeout`
        (another file descriptor on the same file): that is refused at once instead."""
        import filelock  # here: reading never locks, and a warm run only reads

        path = self.root / LAYOUT / "locks" / f"{_digest(key)}.lock"
        held = _held.__dict__.setdefault("keys", set())
        if path in held:
            raise SourceError(f"cache lock {path} taken twice by one thread (a canary bug)")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            lock = filelock.FileLock(str(path), timeout=self.lock_timeout)
            lock.acquire()
        except filelock.Timeout as exc:
            raise SourceError(f"cache lock {path} held for over {self.lock_timeout} s") from exc
        except OSError as exc:  # a read-only or full cache folder: an error, not a crash
            raise SourceError(f"cache folder {self.root}: cannot lock: {_why(exc)}") from None
        held.add(path)
        try:
            yield
        finally:
            held.discard(path)
            lock.release()

    def _path(self, kind: str, key: str) -> Path:
        digest = _digest(key)
        return self.root.joinpath(LAYOUT, kind, digest[:2], digest)  # one join, not four

    def _load(
        self, kind: str, key: str, verify: Callable[[bytes], bool] | None = None
    ) -> Entry | None:
        """The entry under `key`, checked by `verify` when given, else by its sha256."""
        digest = _digest(key)
        path = os.path.join(self._folder, kind, digest[:2], digest)  # a run reads thousands
        try:
            raw, modified = _read(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SourceError(f"cache entry {path} unreadable: {exc}") from exc
        entry = _decode(raw, key, verify)
        if entry is None:
            with suppress(FileNotFoundError):
                os.unlink(path)
        elif time.time() - modified > _TOUCH_EVERY:
            with suppress(OSError):  # in use: `cache prune` keeps it
                os.utime(path)
        return entry

    def _store(self, kind: str, key: str, entry: Entry) -> None:
        path = self._path(kind, key)
        meta = {**entry.meta, "key": key, "sha256": hashlib.sha256(entry.data).hexdigest()}
        blob = _MAGIC + json.dumps(meta, sort_keys=True).encode() + b"\n" + entry.data
        try:  # no flush to disk: a torn entry fails its digest and is fetched again
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_replace(path, blob, durable=False)
        except OSError as exc:  # a read-only or full cache folder: an error, not a crash
            raise SourceError(f"cache folder {self.root}: cannot write: {_why(exc)}") from None


def _read(path: str) -> tuple[bytes, float]:
    """A file's bytes and modification time: one open, one stat, one read (no buffering)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        status = os.fstat(fd)
        raw = os.read(fd, status.st_size + 1)
        if len(raw) != status.st_size:  # changed while read (a published entry never is)
            raw += b"".join(iter(functools.partial(os.read, fd, 1 << 20), b""))
        return raw, status.st_mtime
    finally:
        os.close(fd)


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _decode(raw: bytes, key: str, verify: Callable[[bytes], bool] | None) -> Entry | None:
    """Parse and verify an entry file; None when it is damaged or belongs to another key."""
    if not raw.startswith(_MAGIC):
        return None
    header_end = raw.find(b"\n", len(_MAGIC))
    if header_end < 0:
        return None
    try:
        meta = json.loads(raw[len(_MAGIC) : header_end])
    except ValueError:
        return None
    data = raw[header_end + 1 :]
    if not isinstance(meta, dict) or meta.get("key") != key:
        return None
    if verify is not None:
        return Entry(data, meta) if verify(data) else None
    if meta.get("sha256") != hashlib.sha256(data).hexdigest():
        return None
    return Entry(data, meta)
