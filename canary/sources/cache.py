"""The on-disk cache shared by every run and every pytest-xdist worker.

Two kinds of entries: immutable ones (release members, keyed by the index's file hash, kept
forever) and fresh ones (branch files and index pages, kept for `max_age` seconds, then
revalidated with If-None-Match). Each entry file carries its content's sha256 and is verified on
every read; a corrupt entry is deleted and fetched again, never believed. Writes go to a temp file
in the same folder and are published with os.replace; a file lock per key makes concurrent
processes fetch a key once.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import filelock
import platformdirs

from canary.sources.http import Reply
from canary.sources.stats import Stats
from canary.sources.tree import SourceError

_MAGIC = b"canary-cache 1\n"
_LAYOUT = "v2"  # v2: zip listings store members as rows
_KINDS = ("release", "fresh")
DEFAULT_MAX_AGE = 3600.0
_held = threading.local()  # the cache lock paths the current thread holds


def default_cache_dir() -> Path:
    """CANARY_CACHE_DIR, else the platform's user cache folder for canary."""
    configured = os.environ.get("CANARY_CACHE_DIR")
    return Path(configured) if configured else Path(platformdirs.user_cache_dir("canary"))


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

    def get_or_fetch(self, key: str, what: str, fetch: Callable[[], bytes]) -> bytes:
        """The entry for `key`, fetching it under the key's lock when missing."""
        data = self.get(key)
        if data is not None:
            return data
        self.require_online(what)
        with self.lock(key):
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
        path = self.root / _LAYOUT / "locks" / f"{_digest(key)}.lock"
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
        return self.root / _LAYOUT / kind / digest[:2] / digest

    def _load(self, kind: str, key: str) -> Entry | None:
        path = self._path(kind, key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SourceError(f"cache entry {path} unreadable: {exc}") from exc
        entry = _decode(raw, key)
        if entry is None:
            path.unlink(missing_ok=True)
        return entry

    def _store(self, kind: str, key: str, entry: Entry) -> None:
        path = self._path(kind, key)
        meta = {**entry.meta, "key": key, "sha256": hashlib.sha256(entry.data).hexdigest()}
        blob = _MAGIC + json.dumps(meta, sort_keys=True).encode() + b"\n" + entry.data
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        except OSError as exc:  # a read-only or full cache folder: an error, not a crash
            raise SourceError(f"cache folder {self.root}: cannot write: {_why(exc)}") from None
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(blob)
            os.replace(tmp, path)
        except BaseException as exc:
            Path(tmp).unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise SourceError(f"cache folder {self.root}: cannot write: {_why(exc)}") from None
            raise


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _decode(raw: bytes, key: str) -> Entry | None:
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
    if meta.get("sha256") != hashlib.sha256(data).hexdigest():
        return None
    return Entry(data, meta)


def _usage(root: Path) -> dict[str, tuple[int, int]]:
    """(entries, bytes) per kind under a cache root."""
    usage = {}
    for kind in _KINDS:
        files = [p for p in (root / _LAYOUT / kind).rglob("*") if p.is_file()]
        usage[kind] = (len(files), sum(p.stat().st_size for p in files))
    return usage


def cache_info(root: Path | None = None) -> str:
    """Human summary for `canary cache info`: where the cache is and what it holds."""
    root = root or default_cache_dir()
    usage = _usage(root)
    lines = [f"cache folder: {root}"]
    labels = {"release": "release files (kept forever)", "fresh": "branch files and index pages"}
    for kind, (count, size) in usage.items():
        lines.append(f"{labels[kind]}: {count} entries, {_human(size)}")
    return "\n".join(lines)


def cache_clear(root: Path | None = None) -> str:
    """Delete every entry for `canary cache clear`; says what was freed."""
    root = root or default_cache_dir()
    usage = _usage(root).values()
    count, size = sum(n for n, _ in usage), sum(b for _, b in usage)
    shutil.rmtree(root / _LAYOUT, ignore_errors=True)
    return f"cleared {count} entries ({_human(size)}) from {root}"


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
