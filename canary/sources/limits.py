"""Size bounds that keep untrusted archives from exhausting memory or bandwidth."""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Caps applied to every remote archive; all sizes in bytes."""

    #: largest decompressed size of one member (zip bombs); Python sources are far below it
    max_member: int = 64 * MiB
    #: largest file downloaded whole (a server ignoring Range, an sdist, a GitHub tarball)
    max_download: int = 512 * MiB
    #: largest total decompressed size of a tarball's members
    max_unpacked: int = 1024 * MiB
    #: first tail read of a wheel: this share of its size, plus tail_extra, at least tail_min;
    #: sized so that in typical wheels it brings the EOCD, central directory and RECORD at once
    tail_share: float = 0.02
    tail_extra: int = 16 * 1024
    tail_min: int = 64 * 1024
    #: wanted members closer than this are fetched by one range request (fewer round trips)
    merge_gap: int = 16 * 1024
