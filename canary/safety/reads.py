"""Reading a file of a tree canary does not own: never through a symbolic link, never blocked,
never more than a budget.

A scanned downstream tree (or the repository `init` adopts canary in) may carry a link out of
it, a FIFO where a file is expected (opening it for reading waits for a writer that never
comes) or a file far larger than any real one. The file is opened with `O_NOFOLLOW |
O_NONBLOCK` and judged by `fstat` on what was opened, so a link or a FIFO put in its place
between a check and the read is still refused.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from canary.errors import CanaryError

_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


class Refused(CanaryError, OSError):
    """The file was not read; its text says why ("it is a symbolic link", ...). An OSError too,
    so a caller catching the system's refusals catches it."""


class TooLarge(Refused):
    """A regular file over the budget: `size` bytes, more than `limit`."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size} bytes, over {limit}")
        self.size, self.limit = size, limit


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them. Refused: a link at
    `path` (the folders above it are the caller's to check), anything but a regular file, one
    over `limit`; FileNotFoundError when nothing is there; another OSError as the system says."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.ENXIO and os.path.islink(path)):
            raise Refused("it is a symbolic link") from None
        raise
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise Refused("it is not a regular file")
        if info.st_size > limit:
            raise TooLarge(info.st_size, limit)
        data = file.read(limit + 1)
    if len(data) > limit:  # grew since fstat
        raise TooLarge(len(data), limit)
    return data
