"""Size bounds that keep untrusted archives from exhausting memory or bandwidth."""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Caps applied to every remote archive; all sizes in bytes."""

    #: largest decompressed size of one member, and of one file from GitHub: the largest
    #: source file the analysis parses (canary.analysis.MAX_SOURCE_BYTES), so nothing larger
    #: is ever decompressed or cached (a 300 KiB zip bomb must not become 300 MiB of cache)
    max_member: int = 8 * MiB
    #: most members one archive may have (a million tiny members cost far more than bytes)
    max_members: int = 100_000
    #: largest central directory read from a zip
    max_directory: int = 64 * MiB
    #: largest project page from the index (the largest real ones are a few MiB)
    max_index_page: int = 64 * MiB
    #: largest small answer from the GitHub API (does a ref exist)
    max_answer: int = 1 * MiB
    #: largest file downloaded whole (a server ignoring Range, an sdist, a GitHub tarball)
    max_download: int = 512 * MiB
    #: largest total decompressed size of a tarball's members (they are streamed, not held)
    max_unpacked: int = 1024 * MiB
    #: largest total size of the source and metadata members a tarball's reading keeps
    max_kept: int = 256 * MiB
    #: first tail read of a project's first archives (no release taught its share yet): this
    #: share of the size plus tail_extra, at most tail_guess_max. A short read costs one exact
    #: request more; an over-read costs bytes (2% of a 300 MB vLLM wheel is 6 MB for a 1 MB
    #: directory, and the releases read first in parallel each paid it)
    tail_share: float = 0.02
    tail_extra: int = 4 * 1024
    tail_guess_max: int = 64 * 1024
    #: the tail read when the index gives no size (a suffix range)
    tail_min: int = 64 * 1024
    #: wanted members closer than this are fetched by one range request (fewer round trips;
    #: over the three oldest shipped matrices 8 KiB took 1,105 requests and 43.3 MB cold,
    #: 16 KiB 977 and 44.9 MB, 32 KiB 862 and 47.7 MB: too near 5% of the wheels)
    merge_gap: int = 16 * 1024
