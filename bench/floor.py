"""What the cold run's bytes are compared against: the locked wheels whole, and the floor.

The floor of one wheel is what any range reader must fetch to answer the checks: the central
directory with the end records (the bytes after the last member: the file size, from the lock,
less the directory's offset) plus the compressed size of each member canary actually read, each
distinct content once (canary's own member key: project, path, CRC-32 and sizes; over the
shipped locks that counts exactly the members RECORD's sha256 would). Both come from canary's
own cache after the cold run: the listing (parsed from the wheel's real directory) and the
member entries present, so the floor counts exactly the members the run used. RECORD is not in
the floor; canary reads it only for wheels fetched over plain HTTP, to check the directory's
names, and its compressed size is reported beside the floor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from packaging.utils import canonicalize_name

from canary.cache.stats import Stats
from canary.cache.store import Cache
from canary.matrix.lock import read_lock
from canary.matrix.model import load_matrix
from canary.sources.index_file import IndexFile, release_key
from canary.sources.remotezip import Listing, listing_key, member_key
from canary.sources.zipformat import holds


@dataclass
class Floor:
    wheels: int = 0  # locked release files counted
    whole: int = 0  # their sizes summed: downloading them whole
    directories: int = 0  # central directories + end records
    members: int = 0  # compressed sizes of the members read
    members_read: int = 0
    shared: int = 0  # members read whose content an earlier wheel already brought
    shared_bytes: int = 0  # their compressed sizes: what reading them again would cost
    record: int = 0  # compressed size of RECORD (read over plain HTTP only)
    missing: list[str] = field(default_factory=list)  # locked files with no cached listing

    @property
    def floor(self) -> int:
        return self.directories + self.members


def locked_files(matrix_paths: list[Path]) -> list[tuple[str, IndexFile]]:
    """(project, release file) the default `--versions releases` run reads, from the locks."""
    files = []
    for path in matrix_paths:
        lock = read_lock(path.with_suffix(".lock"))
        if lock is not None:
            project = load_matrix(path).pypi
            files += [(project, f) for _label, f in lock.resolution.releases if f is not None]
    return files


def measure_floor(files: list[tuple[str, IndexFile]], cache_root: Path) -> Floor:
    """Whole-wheel bytes and the floor of `files`, from a cache filled by a cold run."""
    cache = Cache(cache_root, Stats(), offline=True)
    result = Floor()
    seen: set[str] = set()
    for project, file in files:
        result.wheels += 1
        result.whole += file.size or 0
        key = release_key(project, file)
        raw = cache.get(listing_key(key))
        if raw is None or file.size is None:
            result.missing.append(file.filename)
            continue
        listing = Listing.from_bytes(raw, file.filename)
        entries = [listing.entry(name) for name in listing.names]
        result.directories += file.size - max(e.end for e in entries)
        for entry in entries:
            content = member_key(canonicalize_name(project), entry)
            if entry.name.endswith(".dist-info/RECORD"):
                result.record += entry.csize
            elif entry.name.endswith("/"):
                continue
            elif content in seen:
                result.shared += 1
                result.shared_bytes += entry.csize
            elif cache.get_member(content, partial(holds, entry)):
                result.members += entry.csize
                result.members_read += 1
                seen.add(content)
    return result
