"""Hints that read one check across every version checked, to save a maintainer's time.

A check that fails everywhere is more likely a mistake in the matrix than an upstream break;
one whose failures are exactly the oldest releases most likely wants a `since`.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict

from packaging.version import InvalidVersion, Version

from canary.engine.outcomes import Result, Status

NEVER_PASSES = "never passes on any version checked: likely a mistake in the matrix"

_FAILING = (Status.FAIL, Status.WARN)
_JUDGED = (Status.PASS, *_FAILING)


def with_hints(results: list[Result]) -> list[Result]:
    """The results, each failure of a check that calls for a hint carrying it."""
    by_check: dict[tuple[str, str], list[Result]] = defaultdict(list)
    for result in results:
        by_check[result.upstream, result.check].append(result)
    hints = {key: _hint(group) for key, group in by_check.items()}
    return [
        dataclasses.replace(r, detail=f"{r.detail}; {hint}")
        if r.status in _FAILING and (hint := hints[r.upstream, r.check])
        else r
        for r in results
    ]


def _hint(results: list[Result]) -> str:
    if any(r.status is Status.ERROR for r in results):
        return ""  # what an unreadable version would say is unknown
    judged = [r for r in results if r.status in _JUDGED]
    if len(judged) >= 2 and all(r.status in _FAILING for r in judged):
        return NEVER_PASSES
    releases = sorted(
        ((version, r) for r in judged if (version := _release(r)) is not None),
        key=lambda pair: pair[0],
    )
    statuses = [r.status in _FAILING for _, r in releases]
    first_pass = statuses.index(False) if False in statuses else 0
    if first_pass and not any(statuses[first_pass:]):
        since = releases[first_pass][1].version
        return f'passes from {since} on: add since: "{since}"?'
    return ""


def _release(result: Result) -> Version | None:
    try:
        return Version(result.version)
    except InvalidVersion:
        return None  # a branch: its place among the releases is not its label
