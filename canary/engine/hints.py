"""Hints that read one check across every version checked, to save a maintainer's time.

A check that fails everywhere is more likely a mistake in the matrix than an upstream break;
one whose failures are exactly the oldest releases most likely wants a `since`. A keyword
`accepts` finds named (or renamed by a decorator) on one release and only absorbed by
`**kwargs` on a later one still passes, but the value is most likely ignored there now
(transformers 4.52.0's `num_logits_to_keep` on `LlamaForCausalLM.forward`): those passes
become warnings.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping, Sequence

from packaging.version import InvalidVersion, Version

from canary.engine.calls import ABSORBED, note_on
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
    return _version(result.version)


def with_absorption_warnings(
    results: list[Result],
    accepts: Mapping[tuple[str, str], Sequence[str]],
    order: Mapping[str, Sequence[str]],
) -> list[Result]:
    """The results, each pass of a check whose `accepts` (by (upstream, check id)) finds a
    name only absorbed by **kwargs, after a pass (in check order) that found it named or
    renamed, turned into a warning that says since when and what it was before. Releases are
    read in version order, whatever order `--versions` listed them in."""
    rows: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for at, result in enumerate(results):
        if (result.upstream, result.check) in accepts:
            rows[result.upstream, result.check][result.version] = at
    warned: dict[int, str] = {}
    for (upstream, check), cells in rows.items():
        versions = _in_version_order([v for v in order.get(upstream, ()) if v in cells], cells)
        for name in accepts[upstream, check]:
            named = ""  # the last pass that found `name` named, and how
            for version in versions:
                at = cells[version]
                if results[at].status is not Status.PASS:
                    continue  # skips, known breaks, errors and failures say nothing of it
                note = note_on(results[at].detail, name)
                if not note.startswith(f"{name} {ABSORBED}"):
                    named = f"{note or f'{name} was a parameter'} on {version}"
                elif named:
                    said = warned.get(at, results[at].detail)
                    warned[at] = f"{said}; {named}: a value passed for it is likely ignored now"
    return [
        dataclasses.replace(r, status=Status.WARN, detail=warned[at]) if at in warned else r
        for at, r in enumerate(results)
    ]


def _in_version_order(listed: list[str], cells: Mapping[str, int]) -> list[str]:
    """The labels of `cells`, releases oldest first, then branches in the order `listed`
    (check order) gives them: a branch's place among the releases is not its label."""
    labels = [*listed, *(v for v in cells if v not in set(listed))]
    releases = sorted(
        ((version, label) for label in labels if (version := _version(label)) is not None),
        key=lambda pair: pair[0],
    )
    return [label for _, label in releases] + [v for v in labels if _version(v) is None]


def _version(label: str) -> Version | None:
    """A release's version; None for a branch, whose place among the releases is not its label."""
    try:
        return Version(label)
    except InvalidVersion:
        return None
