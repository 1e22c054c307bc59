"""Upcoming breaks: red ahead of the releases (on a branch such as main, or on the newest
pre-release), while the newest release still holds.

Maintainers of patching libraries fix a break before it is released when they see it early, so
a failure only `main` or the release candidate shows is a warning of what the next release will
break, not a red users already meet. Every report tells the two apart, and `--fail-on` lets a
run fail on either (a result that is upcoming stays a `fail`: its status never changes).

A failure on a version ahead of the releases is upcoming when the check's newest release
judged (skips and errors stepped over: they say nothing of the contract) does not fail; a
check broken on the newest release and still broken on main is a released red on both.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from canary.engine.outcomes import Result, RunReport, Status, UpstreamInfo

Key = tuple[str, str, str]
#: results that say nothing of whether the newest release holds
_SILENT = frozenset({Status.SKIP, Status.ERROR})
#: `--fail-on` kinds: what makes a run exit 1
FAIL_ON = ("released", "upcoming", "error")


def ahead(info: UpstreamInfo) -> frozenset[str]:
    """The versions of an upstream that are ahead of its releases: branches and `next`."""
    return frozenset((*info.branches, *info.next))


def upcoming_keys(report: RunReport) -> frozenset[Key]:
    """(upstream, check, version) of every upcoming failure of the run."""
    rows: dict[tuple[str, str], list[Result]] = {}
    for result in report.results:
        rows.setdefault((result.upstream, result.check), []).append(result)
    found: set[Key] = set()
    for (upstream, check), row in rows.items():
        early = ahead(report.upstreams.get(upstream, UpstreamInfo()))
        failing = [r for r in row if r.version in early and r.status is Status.FAIL]
        if not failing:
            continue
        released = [r for r in row if r.version not in early and r.status not in _SILENT]
        if released and released[-1].status is Status.FAIL:
            continue  # already broken on the newest release: not ahead of it
        found.update((upstream, check, r.version) for r in failing)
    return frozenset(found)


def key(result: Result) -> Key:
    return result.upstream, result.check, result.version


def released_red(results: Iterable[Result], upcoming: frozenset[Key]) -> list[Result]:
    """The red results (fail, error) that are not upcoming."""
    return [r for r in results if r.status.is_red and key(r) not in upcoming]


def parse_fail_on(value: str) -> frozenset[str]:
    """`released,upcoming,error` (any of them, comma-separated); ValueError naming a stray."""
    kinds = [part.strip() for part in value.split(",") if part.strip()]
    wrong = [kind for kind in kinds if kind not in FAIL_ON]
    if wrong or not kinds:
        raise ValueError(
            f"{', '.join(wrong) or repr(value)}: expected a comma-separated list of "
            f"{', '.join(FAIL_ON)}"
        )
    return frozenset(kinds)


def failing(report: RunReport, fail_on: Iterable[str] = FAIL_ON) -> list[Result]:
    """The results that make the run exit 1 under `--fail-on`: a released `fail`, an
    upcoming `fail`, an `error`, as the kinds named ask."""
    kinds = frozenset(fail_on)
    upcoming = upcoming_keys(report)
    chosen = []
    for result in report.results:
        if result.status is Status.ERROR:
            kind = "error"
        elif result.status is Status.FAIL:
            kind = "upcoming" if key(result) in upcoming else "released"
        else:
            continue
        if kind in kinds:
            chosen.append(result)
    return chosen


def upcoming_json(report: RunReport) -> list[dict[str, Any]]:
    """The JSON field `upcoming`: per check red only ahead of the releases, its `versions`
    (in check order), the newest `detail` and `since`, the date it was first seen red (the
    run's own date unless carried from an earlier night)."""
    upcoming = upcoming_keys(report)
    today = report.run.get("date", "")[:10]
    rows: dict[tuple[str, str], list[Result]] = {}
    for result in report.results:
        if key(result) in upcoming:
            rows.setdefault((result.upstream, result.check), []).append(result)
    return [
        {
            "upstream": upstream,
            "check": check,
            "versions": [r.version for r in row],
            "detail": row[-1].detail,
            "since": report.since.get((upstream, check), today),
        }
        for (upstream, check), row in rows.items()
    ]


def carry_since(now: RunReport, before: RunReport) -> None:
    """Date each upcoming red of `now` from `before` (the previous night): a check already
    upcoming there keeps the date it was first seen (its own `since`, else that run's date)."""
    then = {(u, c) for u, c, _ in upcoming_keys(before)}
    earlier = before.run.get("date", "")[:10]
    for upstream, check, _ in upcoming_keys(now):
        if (upstream, check) in then:
            now.since[upstream, check] = before.since.get((upstream, check), earlier)
