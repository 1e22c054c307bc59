"""Fingerprints of canary's own code: a cached index or verdict is only valid for the code that
made it, so both are keyed by one and a changed engine (an upgrade, an edited checkout) never
believes what an older one concluded."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent

#: What a verdict (and the story of a transition) depends on: the layers up to the engine
#: (tests/unit/test_layers.py: none of them imports a front end) and the modules any layer
#: imports. Reports, the command line, scan, init, the Action and the pytest plugin only show
#: or ask for verdicts: a change there (a renderer fixed, a checkout updated) keeps them.
JUDGING_CODE = (
    "cache",
    "sources",
    "analysis",
    "matrix",
    "engine",
    "compat",
    "safety",
    "_version.py",
    "errors.py",
    "settings.py",
)
#: What a module index depends on: the analysis package and the index's on-disk form. An
#: upgrade that leaves them alone keeps the indexes (parsing is the costly part of a run).
INDEX_CODE = ("analysis",)


@functools.cache
def code_fingerprint(parts: tuple[str, ...] = (".",)) -> str:
    """sha256 over the path and bytes of every Python file under `parts` of the package (files
    or folders, relative to it; the whole package by default)."""
    files: set[Path] = set()
    for part in parts:
        where = _PACKAGE / part
        files.update(where.rglob("*.py") if where.is_dir() else [where])
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]
