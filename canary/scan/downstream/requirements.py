"""The release range a downstream declares for an upstream: the natural `versions.releases`.

Scanning a package folder inside a repository is the normal case, so the declaration is looked
for in PATH's folder and every folder above it up to the repository's root (the nearest one
holding pyproject.toml, setup.py, setup.cfg or .git; outside any repository, PATH's folder and
the one holding it, where an unpacked wheel's metadata sits), nearest first: pyproject.toml,
setup.py, setup.cfg, requirements*.txt, requirements/*.txt, and the core metadata of an
unpacked wheel (*.dist-info/METADATA). The tree is the downstream's: a symbolic link (a file
or a folder) is never followed, a file that is not a regular one (a FIFO would block) is not
opened, and one over the source budget is not read.

The range looks ahead: it keeps the client's lower bound and exclusions but not its upper pins
(`<`, `<=`, the ceiling of `~=`, an `==` pin's ceiling), since the release after the pin is the
one a canary exists to see; the comment says which pins were dropped.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from canary.analysis import MAX_SOURCE_BYTES
from canary.safety.reads import read_regular
from canary.scan.downstream.selection import is_repository
from canary.scan.writing.emit import Releases

# Files whose quoted strings or lines are requirement specifiers, in order of authority.
_QUOTED = ("pyproject.toml", "setup.py")
_STRING = re.compile(r"\"([^\"\n]+)\"|'([^'\n]+)'")
_REQUIRES_DIST = "Requires-Dist:"


def _read(path: Path) -> str | None:
    """The text of a regular file of at most MAX_SOURCE_BYTES, read without following a link."""
    try:
        return read_regular(path, MAX_SOURCE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None


def _real_folders(found: list[Path]) -> list[Path]:
    return [path for path in found if not path.is_symlink() and path.is_dir()]


def _lines(text: str) -> list[str]:
    return [line.strip().split(" #")[0] for line in text.splitlines()]


def _candidates(folder: Path) -> list[tuple[str, str]]:
    """(file, requirement text) pairs declared in one folder, in order of authority."""
    found = []
    for name in _QUOTED:
        text = _read(folder / name)
        if text is not None:
            found += [(name, a or b) for a, b in _STRING.findall(text)]
    text = _read(folder / "setup.cfg")
    if text is not None:
        found += [("setup.cfg", line) for line in _lines(text)]
    listed = [*sorted(folder.glob("requirements*.txt"))]
    for sub in _real_folders([folder / "requirements"]):
        listed += sorted(sub.glob("*.txt"))
    for path in listed:
        found += [(path.name, line) for line in _lines(_read(path) or "")]
    for info in _real_folders(sorted(folder.glob("*.dist-info"))):
        meta = info / "METADATA"
        for line in (_read(meta) or "").splitlines():
            if line.startswith(_REQUIRES_DIST):
                where = f"{meta.parent.name}/METADATA"
                found.append((where, line[len(_REQUIRES_DIST) :].split(";")[0].strip()))
    return found


def declared_in(folder: Path, distribution: str) -> Releases | None:
    """The first version range the files of `folder` require of `distribution`, if any."""
    wanted = canonicalize_name(distribution)
    for file, text in _candidates(folder):
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if canonicalize_name(requirement.name) == wanted and requirement.specifier:
            kept, dropped = _looking_ahead(requirement.specifier)
            comment = f"what {file} requires"
            if dropped:
                pins = ", ".join(dropped)
                comment += f"; upper pin {pins} dropped: the releases after it are what to watch"
            declared = str(requirement.specifier) if dropped else ""
            return Releases(",".join(sorted(kept)) or ">=0", comment, declared)
    return None


def _looking_ahead(specifier: SpecifierSet) -> tuple[list[str], list[str]]:
    """(the clauses kept, the upper pins dropped): `~=1.4` and `==1.4` keep `>=1.4`."""
    kept, dropped = [], []
    for clause in specifier:
        if clause.operator in ("<", "<="):
            dropped.append(str(clause))
        elif clause.operator in ("~=", "==") and "*" not in clause.version:
            kept.append(f">={clause.version}")
            dropped.append(str(clause))
        else:
            kept.append(str(clause))
    return kept, dropped


def searched_folders(path: Path) -> list[Path]:
    """PATH's folder, then each folder above it up to the repository's root; with no
    repository above, PATH's folder and its parent. Parents are taken as written, not through
    the links `path` may have come by: a parent that is a symbolic link is not read, nor one
    below it (its files would be read through the link), and a link is no repository's root."""
    start = Path(os.path.abspath(path))
    folder = start if start.is_dir() else start.parent
    chain = [folder, *folder.parents]
    linked = [i > 0 and candidate.is_symlink() for i, candidate in enumerate(chain)]
    root = next(
        (i for i, candidate in enumerate(chain) if not linked[i] and is_repository(candidate)),
        None,
    )
    chain = chain[: root + 1] if root is not None else chain[:2]
    below_a_link = [any(linked[i : len(chain)]) for i in range(len(chain))]
    return [folder] + [c for i, c in enumerate(chain) if i and not below_a_link[i]]


def declared_releases(path: Path, distribution: str) -> Releases | None:
    """The range declared nearest to `path`: its folder first, then each folder above it in
    its repository."""
    candidates = searched_folders(path)
    for candidate in candidates:
        found = declared_in(candidate, distribution)
        if found is not None:
            if candidate != candidates[0]:
                found = Releases(found.spec, f"{found.comment} ({candidate.name}/)", found.declared)
            return found
    return None
