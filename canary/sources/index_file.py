"""A release file as the index lists it and a lock records it: the record locks, targets and
sources share, kept apart from the index client so reading a lock needs no HTTP client."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IndexFile:
    """One distribution file of a release, as the index lists it (and as a lock records it)."""

    filename: str
    url: str
    size: int | None = None
    sha256: str | None = None
    yanked: bool = False
    requires_python: str | None = None
