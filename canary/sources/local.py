"""A folder on disk standing in for a version: a checkout, an unpacked wheel, a site-packages.

The folder is upstream's, so untrusted as a wheel is: a link in it may point anywhere (a
checkout's `trl/x.py -> ~/.git-credentials`) and a file may be of any size. A file is read only
where its resolved path stays inside the folder, and only up to the cap a wheel's member has.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from canary.safety.reads import Refused, read_regular
from canary.sources.limits import Limits
from canary.sources.tree import MemberRefused, SourceError

#: A checkout holds a few thousand modules; a folder past this is listed no further.
MAX_LISTED = 100_000


class LocalTree:
    """Finds the package at the top of the folder, or under the matrix's `src` (or `src/`)."""

    kind = "local"

    def __init__(
        self, folder: Path | str, package: str, src: str = "", limits: Limits | None = None
    ):
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise SourceError(f"{self.folder}: not a folder")
        self._inside = self.folder.resolve()
        self.limits = limits or Limits()
        self.package = package
        top = package.split(".")[0]
        candidates = [self.folder, self.folder / src, self.folder / "src"]
        self.root = next(
            (c for c in candidates if (c / top).is_dir() or (c / f"{top}.py").is_file()),
            self.folder,
        )

    def _read(self, base: Path, path: str) -> bytes | None:
        target = base / path
        if not target.is_file():
            return None
        resolved = target.resolve()
        if not resolved.is_relative_to(self._inside):
            raise MemberRefused(f"{target}: a link out of {self.folder} to {resolved}: not read")
        try:
            return read_regular(resolved, self.limits.max_member)
        except Refused as exc:
            raise MemberRefused(f"{target}: not read: {exc}") from None
        except OSError as exc:
            raise SourceError(f"{target}: cannot read: {exc}") from None

    def read(self, path: str) -> bytes | None:
        return self._read(self.root, path)

    def files(self) -> list[str] | None:
        top = self.root / self.package.split(".")[0]
        found = [top.with_suffix(".py")] if top.with_suffix(".py").is_file() else []
        if top.is_dir():
            found += sorted(p for p in top.rglob("*.py") if p.is_file())
        return [p.relative_to(self.root).as_posix() for p in found[:MAX_LISTED]]

    def prefetch(self, paths: Iterable[str]) -> None:
        """Nothing: a file on disk is read when asked."""

    def read_meta(self, path: str) -> bytes | None:
        found = self._read(self.folder, path)
        if found is None and path == "PKG-INFO":
            return self._dist_info_metadata()
        return found

    def _dist_info_metadata(self) -> bytes | None:
        """An unpacked wheel or a site-packages holds its core metadata in a dist-info."""
        top = self.package.split(".")[0].replace("_", "-").lower()
        for meta in sorted(self.root.glob("*.dist-info/METADATA")):
            name = meta.parent.name.split("-", 1)[0].replace("_", "-").lower()
            if name == top:
                return self._read(meta.parent, "METADATA")
        return None
