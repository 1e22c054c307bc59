"""The package index's simple API (PEP 691 JSON, PEP 503 HTML): which files a release has."""

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
