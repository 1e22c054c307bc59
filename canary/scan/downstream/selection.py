"""Which downstream files scan reads: a repository's own code, not its tests or scripts.

A repository's tests skip when a text is absent, its scripts and examples run by hand: what
they reach for is no contract of the package. So when PATH is a repository (it holds a
pyproject.toml, setup.py, setup.cfg or .git), folders with those names are left out at any
depth; `--exclude GLOB` (and `exclude` under `[tool.canary]`) add to that, and the matrix
header says what was left out.

A symbolic link is never followed: a folder linked to `.` would make the walk endless, and a link
out of PATH would read what the user did not name. What a link inside PATH points to is read
where it is; a link out of PATH is said (`outside`).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

from canary.safety.untrusted import showable

DEFAULT_EXCLUDED = ("tests", "test", "testing", "scripts", "examples", "docs", "benchmarks")
_REPOSITORY_MARKS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def is_repository(root: Path) -> bool:
    return root.is_dir() and any((root / mark).exists() for mark in _REPOSITORY_MARKS)


def _skipped(folder: Path) -> bool:
    """Hidden folders, caches and virtual environments are never the downstream's code."""
    return (
        folder.name.startswith(".")
        or folder.name in ("__pycache__", "site-packages", "node_modules")
        or (folder / "pyvenv.cfg").exists()
    )


@dataclass
class Selection:
    """The .py files under `root` scan reads, and what it left out (`left_out`: the folder
    or glob -> how many .py files it held)."""

    root: Path
    globs: tuple[str, ...] = ()  # --exclude
    configured: tuple[str, ...] = ()  # `exclude` under [tool.canary], said as such
    left_out: dict[str, int] = field(default_factory=dict)
    outside: list[Path] = field(default_factory=list)  # the links out of PATH, not followed

    def __post_init__(self) -> None:
        self.defaults = DEFAULT_EXCLUDED if is_repository(self.root) else ()

    def files(self) -> list[Path]:
        """The files read, in a stable order (`root` itself when it is a file)."""
        if self.root.is_file():
            return [self.root]
        self.left_out.clear()
        self.outside.clear()
        return self._walk(self.root)

    def _walk(self, folder: Path, select: bool = True) -> list[Path]:
        """The .py files under `folder` in sorted depth-first order; with `select`, those no
        exclusion leaves out. A stack of listings, not recursion: the tree is the
        downstream's, and a chain of a thousand folders must not end in a RecursionError."""
        found = []
        pending = [iter(sorted(folder.iterdir()))]
        while pending:
            path = next(pending[-1], None)
            if path is None:
                pending.pop()
                continue
            if path.is_symlink():
                if select and self._leaves(path):
                    self.outside.append(path)
                continue
            if path.is_dir() and _skipped(path):
                continue
            reason = self._reason(path) if select else None
            if reason is not None:
                count = len(self._walk(path, select=False)) if path.is_dir() else 1
                if count:
                    self.left_out[reason] = self.left_out.get(reason, 0) + count
            elif path.is_dir():
                pending.append(iter(sorted(path.iterdir())))
            elif path.suffix == ".py" and path.is_file():
                found.append(path)
        return found

    def _leaves(self, link: Path) -> bool:
        """Whether `link` is a folder or a .py file out of PATH (what the walk would have read)."""
        if not (link.is_dir() or (link.suffix == ".py" and link.is_file())):
            return False
        return not link.resolve().is_relative_to(self.root.resolve())

    def _reason(self, path: Path) -> str | None:
        """What leaves `path` out (`tests/`, `--exclude GLOB`, `[tool.canary] exclude GLOB`),
        if anything does."""
        if path.is_dir() and path.name in self.defaults:
            return f"{path.name}/"
        if not path.is_dir() and path.suffix != ".py":
            return None
        relative = path.relative_to(self.root).as_posix()
        globs = (*self.globs, *self.configured)
        glob = next((g for g in globs if _matches(relative, path.name, g)), None)
        if glob is None:
            return None
        return f"--exclude {glob}" if glob in self.globs else f"[tool.canary] exclude {glob}"

    def described(self) -> str:
        """`tests/ (72 files), --exclude legacy (3 files)`, or "" when nothing was left out
        (escaped: a glob may come from the scanned repository's pyproject.toml)."""
        return showable(
            ", ".join(
                f"{reason} ({count} file{'s' * (count != 1)})"
                for reason, count in sorted(self.left_out.items())
            )
        )


def _matches(relative: str, name: str, glob: str) -> bool:
    """A glob with a `/` is matched against the path from PATH (`pkg/legacy`, `pkg/*/old.py`),
    one without against each file or folder name (`legacy`, `*_old.py`)."""
    glob = glob.rstrip("/")
    if "/" in glob:
        return fnmatch.fnmatchcase(relative, glob)
    return fnmatch.fnmatchcase(name, glob)
