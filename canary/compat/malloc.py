"""Fewer malloc arenas for a run that fetches on many threads: glibc gives each thread an
arena of its own (up to eight per core), and what a fetch thread freed stays in its arena, so
the first scan of unsloth-zoo held about 60 MB more than the same scan with one (353 against
294 MiB at its peak, at the same CPU). Linux's glibc only; elsewhere the allocator's own
default stays."""

from __future__ import annotations

import ctypes
import sys

#: glibc's mallopt parameter for the most arenas (malloc.h)
M_ARENA_MAX = -8
#: one arena for every thread: the fetch threads mostly wait on the network
ARENAS = 1


def fewer_arenas(count: int = ARENAS) -> bool:
    """Cap the process's malloc arenas at `count`, before its threads start; True when the
    C library took it (only glibc has mallopt's arena cap)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols, the C library's among them
    except OSError:  # none to load: nothing to cap
        return False
    if not hasattr(libc, "gnu_get_libc_version"):  # musl and others: no arena cap
        return False
    return bool(libc.mallopt(M_ARENA_MAX, count))
