"""A release file as the index lists it and a lock records it, and its cache key: what locks,
targets, sources and remembered verdicts share, kept apart from the index client and the wheel
reader so that a warm run, which reads a lock and the cache, imports neither."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

_SEPARATORS = re.compile(r"[-_.]+")


@dataclass(frozen=True)
class IndexFile:
    """One distribution file of a release, as the index lists it (and as a lock records it)."""

    filename: str
    url: str
    size: int | None = None
    sha256: str | None = None
    yanked: bool = False
    requires_python: str | None = None


def canonical_name(project: str) -> str:
    """A project's normalized name (PEP 503): what packaging's canonicalize_name returns,
    without importing packaging.utils (and with it packaging.tags: more than a warm run's
    judging costs)."""
    return _SEPARATORS.sub("-", project).lower()


def release_key(project: str, file: IndexFile) -> str:
    """Cache key of a release file: the project, the file name and the index's sha256 (its URL
    and size when there is none).

    A range read cannot check the whole file's hash, so a file is never trusted under a hash
    alone: a hostile index claiming another project's hash only poisons its own entries."""
    if file.sha256:
        return f"{canonical_name(project)}/{file.filename}/sha256:{file.sha256.lower()}"
    where = file.url or file.filename  # a locked file has no URL
    digest = hashlib.sha256(f"{where}#{file.size}".encode()).hexdigest()
    return f"{canonical_name(project)}/{file.filename}/url:{digest}"
