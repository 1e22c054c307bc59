"""What a red means to the maintainer: it lands on releases the project's own requirements
allow, or only on releases beyond its upper pins.

`canary init` records the requirement the project declares (`versions.declared`, from its
pyproject.toml or requirements files) while the matrix checks past its upper pins on purpose,
since the release after a pin is the one a canary exists to see. A maintainer reads first what
breaks the releases they support, then what their next upgrade meets, then what is coming;
every report lists the reds within first, and marks the others (`beyond your pin <=0.24.0`).
A branch (`main`) or a pre-release is judged with the releases: its red is within.
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from canary.engine.outcomes import RunReport, UpstreamInfo

#: the standings, in the order a report lists them
WITHIN, BEYOND = 0, 1
#: the clauses of a requirement that cap it (what "your pin" names)
_CEILINGS = ("<", "<=", "==", "~=", "===")


def standing(info: UpstreamInfo, versions: Iterable[str]) -> int:
    """The most pressing standing among the versions a check is red on."""
    return min((_of(info, version) for version in versions), default=WITHIN)


def _of(info: UpstreamInfo, label: str) -> int:
    if label in info.branches or label in info.next:
        return WITHIN
    try:
        version = Version(label)
    except InvalidVersion:
        return WITHIN  # a branch the report was not told of
    if version.is_prerelease:
        return WITHIN
    declared = _declared(info)
    if declared is not None and not declared.contains(version, prereleases=True):
        return BEYOND
    return WITHIN


def _declared(info: UpstreamInfo) -> SpecifierSet | None:
    try:
        return SpecifierSet(info.declared) if info.declared else None
    except InvalidSpecifier:
        return None


def mark(info: UpstreamInfo, rank: int) -> str:
    """How a red of this standing is marked: "" within the project's requirement."""
    if rank == BEYOND:
        declared = _declared(info)
        pins = [str(s) for s in declared or () if s.operator in _CEILINGS]
        return f"beyond your pin {','.join(sorted(pins)) or info.declared}"
    return ""


#: how a standing is named in the JSON report
NAMES = ("within", "beyond")


def red_checks(report: RunReport) -> list[dict[str, object]]:
    """The checks red somewhere, those red on releases the project allows first (the JSON
    report's `red`): upstream, check, standing and the versions it is red on, in run order."""
    red: dict[tuple[str, str], list[str]] = {}
    for result in report.results:
        if result.status.is_red:
            red.setdefault((result.upstream, result.check), []).append(result.version)
    rows: list[tuple[int, dict[str, object]]] = []
    for (upstream, check), versions in red.items():
        rank = standing(report.upstreams.get(upstream, UpstreamInfo()), versions)
        row = {"upstream": upstream, "check": check, "standing": NAMES[rank]}
        rows.append((rank, {**row, "versions": versions}))
    return [row for _, row in sorted(rows, key=lambda pair: pair[0])]
