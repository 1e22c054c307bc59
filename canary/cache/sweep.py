"""`canary cache info`, `clear` and `prune`: the files canary wrote under a cache folder, found
by canary's own layout, never through a link.

The folder is named by a variable (CANARY_CACHE_DIR) that a typo can point at a project, and
what it holds is untrusted (a link planted there leads anywhere). So these commands touch a
file only where and as canary names one: `v3/KIND/XX/DIGEST` (DIGEST a sha256 in hex, XX its
first two characters), `v3/locks/DIGEST.lock`, and `.tmp-*` beside entries (a write cut off);
the same under the `v1/` and `v2/` an older canary kept, and its `module-index/XX/XX....json`.
A symbolic link is never followed, `v3` itself included, nor removed; anything else there is
left as it is and named.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from canary.cache.store import KINDS, LAYOUT
from canary.safety.untrusted import showable
from canary.settings import default_cache_dir

#: Folders earlier canary versions kept under the cache root, laid out as LAYOUT; and where
#: they kept module indexes. `cache clear` removes their entries too.
_OLD_LAYOUTS = ("v1", "v2")
_OLD_INDEXES = "module-index"
_DIGEST = re.compile(r"[0-9a-f]{64}")
_LOCK = re.compile(r"[0-9a-f]{64}\.lock")
_KIND = re.compile(r"[a-z]+")
_FAN = re.compile(r"[0-9a-f]{2}")
_OLD_INDEX = re.compile(r"[0-9a-f]+\.json")
#: how many of the things left alone a command's line names
_NAMED = 3


@dataclass(frozen=True)
class Owned:
    """One file canary wrote: where, its group (a kind of KINDS, "old", "lock" or "temp")
    and its status, read without following a link."""

    path: Path
    group: str
    status: os.stat_result


@dataclass
class Survey:
    """Everything canary wrote under a cache root, and what it did not (left alone)."""

    root: Path
    found: list[Owned] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)  # relative to root, a link marked so
    folders: list[Path] = field(default_factory=list)  # walked, deepest last

    def entries(self, group: str) -> list[Owned]:
        return [f for f in self.found if f.group == group]

    def left(self) -> str:
        """ "" or what a command did not touch, for the end of its line."""
        if not self.foreign:
            return ""
        names = ", ".join(showable(name) for name in self.foreign[:_NAMED])
        more = f" and {len(self.foreign) - _NAMED} more" if len(self.foreign) > _NAMED else ""
        return f"; left {len(self.foreign)} that canary did not write: {names}{more}"


def survey(root: Path) -> Survey:
    """What is under `root` by canary's layout (the root itself is the user's choice and may be
    a link; nothing under it is followed)."""
    found = Survey(root)
    for name in (LAYOUT, *_OLD_LAYOUTS):
        for kind in _subfolders(found, root / name, _KIND):
            if kind.name == "locks":
                _files(found, kind, "lock" if name == LAYOUT else "old", _is_lock)
                continue
            group = kind.name if name == LAYOUT and kind.name in KINDS else "old"
            for fan in _subfolders(found, kind, _FAN):
                _files(found, fan, group, partial(_entry, fan=fan.name))
    for fan in _subfolders(found, root / _OLD_INDEXES, _FAN):
        _files(found, fan, "old", partial(_old_index, fan=fan.name))
    return found


def _is_lock(name: str) -> bool:
    return bool(_LOCK.fullmatch(name))


def _entry(name: str, fan: str) -> bool:
    return bool(_DIGEST.fullmatch(name)) and name.startswith(fan)


def _old_index(name: str, fan: str) -> bool:
    return bool(_OLD_INDEX.fullmatch(name)) and name.startswith(fan)


def _is_temp(name: str) -> bool:
    """A temporary file of a write cut off (`.tmp-*`; an older canary's `tmp*.tmp`)."""
    return name.startswith(".tmp-") or (name.startswith("tmp") and name.endswith(".tmp"))


def _listing(found: Survey, folder: Path) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as listed:
            yield from sorted(listed, key=lambda e: e.name)
    except FileNotFoundError:
        return
    except OSError:
        found.foreign.append(_relative(found, folder) + " (unreadable)")


def _subfolders(found: Survey, folder: Path, named: re.Pattern[str]) -> Iterator[Path]:
    """The real folders in `folder` named as canary names them; `folder` itself must be a real
    folder (not a link) for anything in it to count. Anything else is foreign."""
    if folder.parent == found.root and not _real_folder(found, folder):
        return
    found.folders.append(folder)
    for entry in _listing(found, folder):
        if entry.is_dir(follow_symlinks=False) and named.fullmatch(entry.name):
            yield Path(entry.path)
        else:
            found.foreign.append(_described(found, entry))


def _real_folder(found: Survey, folder: Path) -> bool:
    try:
        mode = os.lstat(folder).st_mode
    except (FileNotFoundError, NotADirectoryError):  # no such folder, or a root that is a file
        return False
    if stat.S_ISDIR(mode):
        return True
    kind = "a symbolic link" if stat.S_ISLNK(mode) else "not a folder"
    found.foreign.append(f"{folder.name} ({kind})")
    return False


def _files(found: Survey, folder: Path, group: str, named: Callable[[str], bool]) -> None:
    """The regular files of `folder` that `named` (a test of the name) says canary wrote."""
    found.folders.append(folder)
    for entry in _listing(found, folder):
        if not entry.is_file(follow_symlinks=False):
            found.foreign.append(_described(found, entry))
        elif _is_temp(entry.name):
            found.found.append(Owned(Path(entry.path), "temp", entry.stat(follow_symlinks=False)))
        elif named(entry.name):
            found.found.append(Owned(Path(entry.path), group, entry.stat(follow_symlinks=False)))
        else:
            found.foreign.append(_described(found, entry))


def _described(found: Survey, entry: os.DirEntry[str]) -> str:
    name = _relative(found, Path(entry.path))
    return f"{name} (a symbolic link)" if entry.is_symlink() else name


def _relative(found: Survey, path: Path) -> str:
    return path.relative_to(found.root).as_posix()


def _size(found: list[Owned]) -> int:
    return sum(f.status.st_size for f in found)


def _removed(found: list[Owned]) -> list[Owned]:
    """Those of `found` deleted now (one gone meanwhile, or refused, is not counted)."""
    gone = []
    for item in found:
        try:
            os.unlink(item.path)
        except OSError:
            continue
        gone.append(item)
    return gone


#: what `cache info` calls each group of entries
_LABELS = {**KINDS, "old": "left by older canary versions (`cache clear` removes them)"}


def cache_info(root: Path | None = None) -> str:
    """Human summary for `canary cache info`: where the cache is and everything it holds."""
    root = root or default_cache_dir()
    found = survey(root)
    lines = [f"cache folder: {showable(str(root))}"]
    total: list[Owned] = []
    for group, label in _LABELS.items():
        entries = found.entries(group)
        total += entries
        if group != "old" or entries:
            lines.append(f"{label}: {len(entries)} entries, {_human(_size(entries))}")
    lines.append(f"total: {len(total)} entries, {_human(_size(total))}{found.left()}")
    return "\n".join(lines)


def cache_clear(root: Path | None = None) -> str:
    """Delete every file canary wrote there (entries, locks, temporary files, what older
    versions left) and the folders that leaves empty, for `canary cache clear`."""
    root = root or default_cache_dir()
    found = survey(root)
    gone = _removed(found.found)
    for folder in reversed(found.folders):  # deepest first; one still holding a file stays
        try:
            os.rmdir(folder)
        except OSError:
            continue
    entries = [f for f in gone if f.group not in ("lock", "temp")]
    return (
        f"cleared {len(entries)} entries ({_human(_size(entries))}) "
        f"from {showable(str(root))}{found.left()}"
    )


def cache_prune(days: float, root: Path | None = None) -> str:
    """Delete entries neither written nor read for `days` days (`canary cache prune`)."""
    root = root or default_cache_dir()
    cutoff = time.time() - days * 86400
    found = survey(root)
    old = [f for f in found.found if f.group != "lock" and f.status.st_mtime < cutoff]
    gone = [f for f in _removed(old) if f.group != "temp"]
    return (
        f"pruned {len(gone)} entries ({_human(_size(gone))}) unused for {days:g} days "
        f"from {showable(str(root))}{found.left()}"
    )


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
