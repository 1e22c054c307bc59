"""GitHub Actions workflow commands: the findings as annotations on the matrix lines.

Each red check becomes one `::error file=matrices/trl.yaml,line=N::...` at the line where the
check is written, so a pull request shows it beside the contract that broke; `warn` and
`xpass` become warnings and notices. A source that could not be read is one annotation per
cause. GitHub shows 10 per level: the sources first, then the newest breakage, then one notice
counting the rest. The grouped text report
follows in a collapsed log group, then the summary line.
"""

from __future__ import annotations

from canary.engine.outcomes import Result, RunReport, Status
from canary.engine.upcoming import key, upcoming_keys
from canary.reports.faults import split_faults, version_order
from canary.reports.grid import UpstreamGrid, build_grids, grouped, repo_path, spans_text
from canary.reports.standing import mark, standing
from canary.reports.text import QUIET, findings, sectioned, summary_line
from canary.reports.transition import explained, why_lines
from canary.reports.workflow import command, paused

LEVEL = {
    Status.FAIL: "error",
    Status.ERROR: "error",
    Status.WARN: "warning",
    Status.XPASS: "notice",
}


def annotation_lines(report: RunReport) -> list[str]:
    """GitHub shows 10 annotations of each level per step: the most useful ones (a source
    that could not be read, then one per red check, newest breakage first), then one notice
    counting the rest, which the job summary lists."""
    faults, rest = split_faults(report)
    order = version_order(report)
    errors = [
        command("error", fault.line(order), title="canary: a source was not read")
        for fault in faults
    ]
    red: list[tuple[tuple[int, int], str]] = []
    others: dict[str, list[str]] = {"warning": [], "notice": []}
    upcoming = upcoming_keys(report)
    for grid in build_grids(RunReport(rest, report.stats, report.upstreams)):
        for check in grid.checks:
            loud = [c for c in grid.row(check) if c.status not in QUIET]
            for early in (False, True):  # the released reds, then the upcoming ones
                broken = [c for c in loud if c.status.is_red and (key(c) in upcoming) is early]
                if broken:  # within the project's pins first, then beyond
                    rank = standing(grid.info, [c.version for c in broken])
                    since = len(grid.versions) - grid.versions.index(broken[0].version)
                    line = _red_check(grid, check, broken, early, mark(grid.info, rank))
                    red.append(((rank, since), line))
            for (status, detail), versions in grouped(
                c for c in loud if not c.status.is_red
            ).items():
                if status in LEVEL:
                    found = [grid.cells[check, v] for v in versions]
                    others[LEVEL[status]].append(_annotation(grid, check, status, detail, found))
    errors += [line for _, line in sorted(red, key=lambda pair: pair[0])]
    shown = errors[:SHOWN] + others["warning"][:SHOWN] + others["notice"][: SHOWN - 1]
    left = len(errors) + sum(map(len, others.values())) - len(shown)
    if left:
        more = f"{left} more finding{'s' * (left != 1)} in the job summary"
        shown.append(command("notice", f"canary: {more}", title="canary: more findings"))
    return shown


#: annotations GitHub shows per level and step
SHOWN = 10


def _where(grid: UpstreamGrid, check: str) -> dict[str, str | int]:
    where: dict[str, str | int] = {"file": repo_path(grid.info.matrix)} if grid.info.matrix else {}
    if check in grid.info.lines:
        where["line"] = grid.info.lines[check]
    return where


#: what an annotation's title starts with: canary's name, and what kind of red it is
TITLE = "canary"
UPCOMING_TITLE = "canary upcoming"


def _annotation(
    grid: UpstreamGrid,
    check: str,
    status: Status,
    detail: str,
    found: list[Result],
    title: str = TITLE,
) -> str:
    title += f" {grid.name}::{check}[{spans_text([r.version for r in found], grid.versions)}]"
    message = f"{status.value}: {detail}" if detail else status.value
    message += "".join(f"\n{line}" for line in why_lines(found[-1].why))
    message += "".join(f"\n{line}" for e in explained(found) for line in e.lines)
    return command(LEVEL[status], message, **_where(grid, check), title=title)


def _red_check(
    grid: UpstreamGrid, check: str, broken: list[Result], upcoming: bool, apart: str = ""
) -> str:
    """One error for the check: its red versions, the newest one's detail (after `apart`,
    its standing's mark), and how many other details the summary lists; an upcoming red
    (only ahead of the releases) says so in its title, `canary upcoming trl::grpo[main]`."""
    newest = broken[-1]
    title = UPCOMING_TITLE if upcoming else TITLE
    detail = f"{apart}: {newest.detail}" if apart else newest.detail
    others = len({(r.status, r.detail) for r in broken}) - 1
    if others:
        detail += f" ({others} other detail{'s' * (others != 1)} in the job summary)"
    return _annotation(grid, check, newest.status, detail, broken, title)


def render_github(report: RunReport) -> str:
    """The annotations, then the findings (text canary did not write: commands stopped)."""
    lines = annotation_lines(report)
    found = sectioned(findings(report), lambda finding: finding.log_lines)
    if found:
        lines += ["::group::canary: findings by check", *paused(found), "::endgroup::"]
    return "\n".join([*lines, summary_line(report)]) + "\n"
