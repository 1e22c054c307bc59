"""What was told of a transition (what the subject became, and its diff), remembered per pair of
release files, so a warm run with red checks reopens no release to tell it again.

Like a verdict, it depends only on the check's contract, the two release files (each pinned by
the index's sha256) and canary's judging code: the key holds all four. Only releases read from
the index with a hash qualify; branches, GitHub and local sources are told afresh every run.
"""

from __future__ import annotations

import json

from canary.cache.fingerprint import JUDGING_CODE, code_fingerprint
from canary.cache.store import Cache
from canary.engine.outcomes import Became
from canary.engine.remembered import check_key
from canary.matrix.model import Check
from canary.matrix.targets import Target
from canary.sources.index_file import release_key

_KIND = "verdict"  # shown by `canary cache info` with the verdicts it belongs with

#: what a transition's teller returns: what the subject became, and the diff
Told = tuple[Became | None, str]


def story_key(project: str, check: Check, old: Target, new: Target) -> str | None:
    """The cache key of one transition's story; None when a side is not a hashed index file."""
    files = (old.file, new.file)
    if old.branch or new.branch or any(f is None or not f.sha256 for f in files):
        return None
    sides = "|".join(release_key(project, f) for f in files if f is not None)
    return f"story:{sides}:{check_key(check)}@{code_fingerprint(JUDGING_CODE)}"


def recalled(cache: Cache, key: str) -> Told | None:
    data = cache.load_json(_KIND, key)
    if not isinstance(data, dict) or not isinstance(data.get("diff"), str):
        return None
    try:
        became = Became.from_json(data["became"]) if data.get("became") else None
    except (ValueError, TypeError, AttributeError):
        return None
    return became, data["diff"]


def remember(cache: Cache, key: str, told: Told) -> None:
    became, diff = told
    data = {"became": became.to_json() if became else None, "diff": diff}
    cache.store(_KIND, key, json.dumps(data).encode())
