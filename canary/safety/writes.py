"""Every file canary writes: never through a symbolic link, never outside the folder named,
never left half-written.

The trees canary writes into (a downstream repository, a matrices folder) are not canary's:
they may carry links. A link at the file's place or at any folder between the folder named
and the file is refused, and so is a path that leaves the folder. A new file is created with
`O_CREAT | O_EXCL | O_NOFOLLOW` (a dangling link at its place is refused, not followed); an
existing one is replaced by a temporary file beside it, flushed to disk, then `os.replace`d
over it, so a process killed mid-write leaves the old file or the new one, never a truncated
one (the cache's entries are written the same way, without the flush: they carry a digest).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from canary.errors import CanaryError
from canary.safety.reads import Refused


class WriteError(CanaryError):
    """A file was not written: it would go through a link or out of its folder, or the system
    refused. Exit 2, naming the file; `reason` alone is for a caller that words its own line."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: not written: {reason}")
        self.path, self.reason = path, reason


def inside(folder: Path, path: Path) -> Path:
    """`path` (absolute), when it is inside `folder` (or is it) and nothing from `folder` down
    to it, itself included, is a link: what a reader of the tree checks before opening it.
    Nothing is created; a refusal is `Refused`, saying why."""
    base, target = Path(os.path.abspath(folder)), Path(os.path.abspath(path))
    if target != base and not target.is_relative_to(base):
        raise Refused(f"outside {folder}")
    if reason := _refusal(base, target, create=False):
        raise Refused(reason)
    return target


def _checked(folder: Path, path: Path) -> Path:
    """`path` (inside `folder`), after making sure no folder from `folder` down to it is a link
    and that it stays inside; its missing parent folders are created (never through a link)."""
    base, target = Path(os.path.abspath(folder)), Path(os.path.abspath(path))
    if target == base or not target.is_relative_to(base):
        raise WriteError(path, f"outside {folder}")
    if reason := _refusal(base, target, create=True):
        raise WriteError(path, reason)
    return target


def _refusal(base: Path, target: Path, create: bool) -> str | None:
    """Why the way from `base` down to `target` may not be taken: a link or a file where a
    folder must be. A writer (`create`) walks the folders above `target`, making the missing
    ones; a reader walks `target` too, and stops at the first missing part."""
    relative = target.relative_to(base)
    current = base
    for part in (relative.parent if create else relative).parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            if not create:
                return None
            try:
                os.mkdir(current)
            except OSError as exc:
                return f"{current}: {_why(exc)}"
            continue
        last = current == target
        if stat.S_ISLNK(mode):
            return "it is a symbolic link" if last else f"{current} is a symbolic link"
        if not stat.S_ISDIR(mode) and not last:
            return f"{current} is not a folder"
    return None


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _is_link(path: Path) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def write_new(folder: Path, path: Path, data: str | bytes) -> None:
    """Create `path` inside `folder`; refused when anything (a link too) is already there."""
    target = _checked(folder, path)
    blob = data.encode("utf-8") if isinstance(data, str) else data
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(target, flags, 0o666)
    except FileExistsError:
        what = "a symbolic link" if _is_link(target) else "already there"
        raise WriteError(path, what) from None
    except OSError as exc:
        raise WriteError(path, _why(exc)) from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(blob)
    except OSError as exc:
        raise WriteError(path, _why(exc)) from None


def replace_file(folder: Path, path: Path, data: str | bytes) -> None:
    """Write `path` inside `folder` whole, new or not: a link at its place is refused, an
    existing file is replaced atomically and keeps its permissions."""
    target = _checked(folder, path)
    if _is_link(target):
        raise WriteError(path, "it is a symbolic link")
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    try:
        atomic_replace(target, data.encode("utf-8") if isinstance(data, str) else data, mode)
    except OSError as exc:
        raise WriteError(path, _why(exc)) from None


def atomic_replace(path: Path, data: bytes, mode: int | None = None, durable: bool = True) -> None:
    """`data` in a temporary file beside `path` (flushed to disk when `durable`), renamed over
    it: readers see the old file or the new one. OSError is the caller's to word."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
