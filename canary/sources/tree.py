"""The one interface every source implements: the files of one upstream version."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from canary.errors import CanaryError, ExitCode


class SourceError(CanaryError):
    """The source could not be obtained (network, corrupt archive, offline miss).

    Always surfaces as the `error` outcome with this message; never as pass or fail.
    The message names the URL (or path) and the cause.
    """

    exit_code = ExitCode.FAILED


class MemberRefused(SourceError):
    """A file of the version that canary will not read (a link, a device, a member over the
    size cap): a fact of the release, not a fault of fetching it. A check that reads it is an
    `error`; a search over every file (what a missing name became) passes it by."""


class Tree(Protocol):
    """Read-only view of one version of one upstream package.

    Paths are POSIX, relative to the folder that *contains* the top-level package
    (so `trl/models/utils.py`), whatever the source's own layout (`src/` in a checkout).
    """

    #: short label for reports: "index", "github", "local", "cache"
    kind: str

    def read(self, path: str) -> bytes | None:
        """The file's bytes, or None when the file does not exist in this version.

        Raises SourceError when existence cannot be decided (fetch failed, corrupt data).
        """
        ...

    def files(self) -> list[str] | None:
        """Every file path of the package tree when the source knows them for free (a wheel's
        directory, a folder, an unpacked tarball), else None. Used for hints and listings,
        never to decide that a file exists (`read` does that)."""
        ...

    def read_meta(self, path: str) -> bytes | None:
        """A file at the repository root (VERSION, pyproject.toml, setup.py) or None.

        Only checkouts and GitHub have one; wheels return None.
        """
        ...

    def prefetch(self, paths: Iterable[str]) -> None:
        """Fetch these files together where the source can (a wheel merges neighbouring
        members into one request), so the reads that follow are answered from memory; a
        source whose reads are cheap does nothing. Raises SourceError like `read`."""
        ...
