"""A Tree over one release file on the package index: a wheel, or an sdist when there is none.

Paths are relative to the folder holding the package, as the Tree protocol wants: a wheel's
members already are; an sdist's lose their top folder and, for a `src/` layout, `src/`.
Existence is decided from the archive's listing, so asking for an absent module costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from canary.cache.store import Cache
from canary.sources.index_file import IndexFile, canonical_name, release_key
from canary.sources.limits import Limits
from canary.sources.ranges import RangeReader
from canary.sources.redact import redact
from canary.sources.remotezip import Claims, RemoteZip, TailHints
from canary.sources.tarball import RemoteTar, is_safe
from canary.sources.tree import SourceError, SourceKind

if TYPE_CHECKING:
    from canary.sources.http import Http


class ReleaseTree:
    """Tree protocol over a wheel or sdist, read with range requests and the shared cache."""

    kind = SourceKind.INDEX

    def __init__(
        self,
        project: str,
        file: IndexFile,
        http: Callable[[], Http],
        cache: Cache,
        limits: Limits | None = None,
        hints: TailHints | None = None,
        locate: Callable[[], str] | None = None,
        claims: Claims | None = None,
    ) -> None:
        self.file = file
        self._prefetched: dict[str, bytes] = {}
        limits = limits or Limits()
        url = file.url or locate
        if not url:
            raise SourceError(f"{file.filename}: no URL and no index to ask for one")
        reader = RangeReader(http, url, file.size, file.sha256, limits, file.filename)
        name = file.filename.lower()
        self._sdist = not name.endswith(".whl")
        if name.endswith((".whl", ".zip")):
            self._archive: RemoteZip | RemoteTar = RemoteZip(
                reader,
                cache,
                release_key(project, file),
                limits,
                wheel=not self._sdist,
                hints=hints,
                project=canonical_name(project),
                claims=claims,
            )
        elif name.endswith((".tar.gz", ".tgz", ".tar")):
            self._archive = RemoteTar(reader, cache, release_key(project, file), limits)
        else:
            raise SourceError(f"{file.filename}: not a wheel or sdist canary can read")

    def read(self, path: str) -> bytes | None:
        return self._read_one(self._candidates(path))

    def files(self) -> list[str] | None:
        names = sorted(self._archive.names())
        if not self._sdist:
            return names
        top = self._top()
        prefixes = (f"{top}/src/", f"{top}/")
        return [
            n.removeprefix(next(p for p in prefixes if n.startswith(p)))
            for n in names
            if n.startswith(f"{top}/")
        ]

    def read_meta(self, path: str) -> bytes | None:
        """Root files of an sdist (pyproject.toml, setup.py, PKG-INFO); None for a wheel."""
        if not self._sdist:
            _check(path)
            return None
        return self._read_one([f"{self._top()}/{_check(path)}"])

    def prefetch(self, paths: Iterable[str]) -> None:
        """Fetch these paths together (fewer requests); absent ones are simply skipped.

        The bytes are kept for the reads that follow, so a warm run loads and verifies each
        cached member once, not once here and again on read."""
        names = self._archive.names()
        wanted = [m for p in paths for m in self._candidates(p) if m in names]
        self._prefetched.update(self._archive.read_many(list(dict.fromkeys(wanted))))

    def _read_one(self, candidates: list[str]) -> bytes | None:
        names = self._archive.names()
        for member in candidates:
            if member in self._prefetched:
                return self._prefetched.pop(member)
            if member in names:
                return self._archive.read_many([member])[member]
        return None

    def _candidates(self, path: str) -> list[str]:
        """Member names that may hold `path`, in order of preference."""
        _check(path)
        if not self._sdist:
            return [path]
        top = self._top()
        return [f"{top}/{path}", f"{top}/src/{path}"]

    def _top(self) -> str:
        """The sdist's single top folder (`name-version`)."""
        tops = {name.split("/", 1)[0] for name in self._archive.names()}
        if len(tops) != 1:
            where = redact(self.file.url) if self.file.url else self.file.filename
            raise SourceError(f"{where}: sdist has {len(tops)} top folders, not one")
        return tops.pop()


def _check(path: str) -> str:
    """Refuse paths that could escape the archive's tree."""
    if not is_safe(path):
        raise SourceError(f"unsafe path {path!r}: must be relative, without '..'")
    return path
