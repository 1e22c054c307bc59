"""A version to check: a release (maybe with the index file a lock recorded) or a branch, and
the `--versions` values that name versions directly rather than by keyword or specifier."""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from canary.sources.index_file import IndexFile


@dataclass(frozen=True)
class Target:
    label: str  # "1.0.0" or "main"
    branch: bool = False
    file: IndexFile | None = None  # known from the lock; else asked of the index
    next: bool = False  # the pre-release ahead of every final release (`--versions all`)

    @classmethod
    def parse(cls, label: str) -> Target:
        """An exact version is a release; anything else names a branch."""
        try:
            Version(label)
        except InvalidVersion:
            return cls(label, branch=True)
        return cls(label)

    @property
    def version(self) -> Version | None:
        return None if self.branch else Version(self.label)


#: `--versions` keywords; anything else is a PEP 440 specifier or a list of exact labels
SELECTIONS = ("releases", "all", "anchors", "latest")


def is_explicit(selection: str) -> bool:
    """A comma-separated list of exact versions or branch names (not a keyword or specifier)."""
    return selection not in SELECTIONS and not any(c in selection for c in "<>=!~*")


def explicit_targets(selection: str) -> list[Target]:
    return [Target.parse(label.strip()) for label in selection.split(",") if label.strip()]
