"""The check x version grid every report format draws, and its compression into runs.

A row is one check of one upstream over that upstream's versions, in check order (releases by
PEP 440, then branches). Formats never walk results themselves: they ask this module for rows,
runs of equal statuses, the first failing and the last passing version, and version ranges.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from canary.engine.outcomes import Result, RunReport, Status, UpstreamInfo
from canary.safety.untrusted import showable

EN_DASH = "\u2013"
#: the contract does not hold and nothing excuses it (xfail is excused, error is unknown)
FAILING = frozenset({Status.FAIL, Status.WARN})
#: the contract holds (xpass: it holds on a release known to be broken)
HOLDING = frozenset({Status.PASS, Status.XPASS})


def is_release(label: str) -> bool:
    """A PEP 440 version, as opposed to a branch such as main."""
    try:
        Version(label)
    except InvalidVersion:
        return False
    return True


def order_versions(labels: Iterable[str]) -> list[str]:
    """Distinct labels by PEP 440; labels that are no version (branches like main) last, as met."""
    unique = list(dict.fromkeys(labels))
    releases = sorted((label for label in unique if is_release(label)), key=Version)
    return releases + [label for label in unique if not is_release(label)]


@dataclass(frozen=True)
class Run:
    """Consecutive cells of one row sharing a status."""

    status: Status
    versions: tuple[str, ...]

    @property
    def first(self) -> str:
        return self.versions[0]

    @property
    def last(self) -> str:
        return self.versions[-1]

    @property
    def span(self) -> tuple[str, str]:
        return self.first, self.last


def runs(cells: Sequence[Result]) -> list[Run]:
    """Compress a row (already in version order) into maximal runs of one status."""
    out: list[Run] = []
    for cell in cells:
        if out and out[-1].status is cell.status:
            out[-1] = Run(cell.status, (*out[-1].versions, cell.version))
        else:
            out.append(Run(cell.status, (cell.version,)))
    return out


def first_failing(cells: Sequence[Result]) -> str | None:
    """The earliest version where the contract does not hold (fail or warn), if any."""
    return next((c.version for c in cells if c.status in FAILING), None)


def last_passing(cells: Sequence[Result]) -> str | None:
    """The latest version where the contract holds (pass or xpass), if any."""
    return next((c.version for c in reversed(cells) if c.status in HOLDING), None)


def spans(subset: Iterable[str], order: Sequence[str]) -> list[tuple[str, str]]:
    """Group `subset` into (first, last) spans that are contiguous in `order`.

    Labels missing from `order` come last, each its own span.
    """
    wanted = list(dict.fromkeys(subset))
    members = set(wanted)
    out: list[tuple[str, str]] = []
    open_span = False
    for label in order:
        if label in members:
            if open_span:
                out[-1] = (out[-1][0], label)
            else:
                out.append((label, label))
            open_span = True
        else:
            open_span = False
    known = set(order)
    out.extend((label, label) for label in order_versions(v for v in wanted if v not in known))
    return out


@dataclass
class UpstreamGrid:
    """One upstream's cells, addressable by (check, version)."""

    name: str
    info: UpstreamInfo
    versions: list[str]
    checks: list[str]
    cells: dict[tuple[str, str], Result] = field(default_factory=dict)

    def row(self, check: str) -> list[Result]:
        """The check's results in version order; versions it has no result for are left out."""
        return [self.cells[check, v] for v in self.versions if (check, v) in self.cells]

    def results(self) -> list[Result]:
        return [cell for check in self.checks for cell in self.row(check)]

    def place(self, check: str) -> str:
        """Where `check` is written: `matrices/trl.yaml:41` (shown escaped), or ""."""
        if not self.info.matrix:
            return ""
        line = self.info.lines.get(check)
        path = repo_path(self.info.matrix)
        return showable(f"{path}:{line}" if line else path)


def repo_path(matrix: str) -> str:
    """The matrix path as GitHub expects it: relative to the workspace (the current folder)."""
    path = Path(matrix)
    if path.is_absolute() and path.is_relative_to(Path.cwd()):
        path = path.relative_to(Path.cwd())
    return path.as_posix()


def build_grids(report: RunReport) -> list[UpstreamGrid]:
    """Grids in report order: upstreams as listed in `report.upstreams`, then as first met."""
    names = list(dict.fromkeys([*report.upstreams, *(r.upstream for r in report.results)]))
    grids = {
        name: UpstreamGrid(name, report.upstreams.get(name, UpstreamInfo()), [], [])
        for name in names
    }
    checks: dict[str, dict[str, None]] = {name: {} for name in names}  # ordered sets
    for result in report.results:
        grid = grids[result.upstream]
        checks[result.upstream].setdefault(result.check)
        grid.cells[result.check, result.version] = result
    for grid in grids.values():
        grid.checks = list(checks[grid.name])
        listed = list(grid.info.versions)
        known = set(listed)
        extra = [version for _, version in grid.cells if version not in known]
        grid.versions = listed + order_versions(extra)
    return [grid for grid in grids.values() if grid.cells or grid.versions]


def span_text(span: tuple[str, str], mark: Callable[[str], str] = str) -> str:
    """ "0.18.2-0.22.2" with an en dash (or one version), each end through `mark` (bold...)."""
    first, last = span
    return mark(first) if first == last else f"{mark(first)}{EN_DASH}{mark(last)}"


def spans_text(
    subset: Iterable[str], order: Sequence[str], mark: Callable[[str], str] = str
) -> str:
    """Comma-separated compressed spans of `subset` in `order`."""
    return ", ".join(span_text(span, mark) for span in spans(subset, order))


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def grouped(cells: Iterable[Result]) -> dict[tuple[Status, str], list[str]]:
    """Versions per (status, detail): details repeat over many versions, say them once."""
    groups: dict[tuple[Status, str], list[str]] = {}
    for cell in cells:
        groups.setdefault((cell.status, cell.detail), []).append(cell.version)
    return groups
