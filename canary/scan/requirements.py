"""The release range a downstream declares for an upstream: the natural `versions.releases`."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from canary.scan.emit import Releases

# Files whose quoted strings or lines are requirement specifiers, in order of authority.
_QUOTED = ("pyproject.toml", "setup.py")
_LINES = ("setup.cfg", "requirements.txt")
_STRING = re.compile(r"\"([^\"\n]+)\"|'([^'\n]+)'")


def _candidates(root: Path) -> list[tuple[str, str]]:
    found = []
    for name in (*_QUOTED, *_LINES):
        path = root / name
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if name in _QUOTED:
            found += [(name, a or b) for a, b in _STRING.findall(text)]
        else:
            found += [(name, line.strip().split(" #")[0]) for line in text.splitlines()]
    return found


def declared_releases(root: Path, distribution: str) -> Releases | None:
    """The first version range the project at `root` requires of `distribution`, if any."""
    wanted = canonicalize_name(distribution)
    for file, text in _candidates(root):
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if canonicalize_name(requirement.name) == wanted and requirement.specifier:
            spec = str(requirement.specifier)
            return Releases(spec, f"what {file} requires")
    return None
