"""A fingerprint of canary's own code: a cached index or verdict is only valid for the code that
made it, so both are keyed by it and a changed engine (an upgrade, an edited checkout) never
believes what an older one concluded."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path


@functools.cache
def code_fingerprint() -> str:
    """sha256 over the path and bytes of every Python file of the installed package."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]
