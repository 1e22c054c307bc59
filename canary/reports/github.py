"""GitHub Actions workflow commands: the findings as annotations on the matrix lines.

Each red finding (a check's status and detail over a range of versions) becomes one
`::error file=matrices/trl.yaml,line=N::...` at the line where the check is written, so a
pull request shows it beside the contract that broke; `warn` and `xpass` become warnings and
notices. A source that could not be read is one annotation per cause. The grouped text report
follows in a collapsed log group, then the summary line.
"""

from __future__ import annotations

from pathlib import Path

from canary.engine.outcomes import RunReport, Status
from canary.reports.faults import split_faults, version_order
from canary.reports.grid import build_grids, grouped, spans_text
from canary.reports.text import QUIET, finding_lines, summary_line
from canary.reports.transition import explained
from canary.reports.workflow import command, paused

LEVEL = {
    Status.FAIL: "error",
    Status.ERROR: "error",
    Status.WARN: "warning",
    Status.XPASS: "notice",
}


def repo_path(matrix: str) -> str:
    """The matrix path as GitHub expects it: relative to the workspace (the current folder)."""
    path = Path(matrix)
    if path.is_absolute() and path.is_relative_to(Path.cwd()):
        path = path.relative_to(Path.cwd())
    return path.as_posix()


def annotations(report: RunReport) -> list[str]:
    faults, rest = split_faults(report)
    lines = []
    for grid in build_grids(RunReport(rest, report.stats, report.upstreams)):
        info = grid.info
        for check in grid.checks:
            loud = [c for c in grid.row(check) if c.status not in QUIET]
            for (status, detail), versions in grouped(loud).items():
                if status not in LEVEL:
                    continue
                where = {"file": repo_path(info.matrix)} if info.matrix else {}
                if check in info.lines:
                    where["line"] = info.lines[check]
                title = f"canary {grid.name}::{check}[{spans_text(versions, grid.versions)}]"
                message = f"{status.value}: {detail}" if detail else status.value
                found = explained(grid.cells[check, v] for v in versions)
                message += "".join(f"\n{line}" for e in found for line in e.lines)
                lines.append(command(LEVEL[status], message, **where, title=title))
    order = version_order(report)
    for fault in faults:
        lines.append(command("error", fault.line(order), title="canary: a source was not read"))
    return lines


def render_github(report: RunReport) -> str:
    """The annotations, then the findings (text canary did not write: commands stopped)."""
    lines = annotations(report)
    findings = [text for _, text in finding_lines(report)]
    if findings:
        lines += ["::group::canary: findings by check", *paused(findings), "::endgroup::"]
    return "\n".join([*lines, summary_line(report)]) + "\n"
