"""Terminal output: grouped lines in logs, the grid squeezed to the width on a TTY.

A log gets one line per check and detail with its versions as ranges (`FAIL  trl::grpo[0.20.0
to 1.16.0] ... (matrices/trl.yaml:41)`, written with an en dash), at most LINE_MAX characters,
where it broke and what its subject became on the indented lines after it (as short), a source
that could not be read once per cause, and the summary; `verbose` gives one line per
check x version instead, with the check's `why` and where it broke under a failure. A terminal
gets the grid, the same grouped lines wrapped (never cut) to its width with where each check
broke, and the legend; when the grid is taller than the terminal, the findings come first (red,
then warnings) and the grid after them shows the red checks' rows only, as pytest puts its
failures where the eye lands.
"""

from __future__ import annotations

import itertools
import os
import shutil
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TextIO

from canary.engine.outcomes import Result, RunReport, Status, summarize
from canary.engine.upcoming import key, upcoming_keys
from canary.reports.faults import split_faults, version_order
from canary.reports.fitting import LINE_MAX, in_words, shortened
from canary.reports.grid import (
    UpstreamGrid,
    build_grids,
    first_failing,
    grouped,
    last_passing,
    plural,
    spans_text,
)
from canary.reports.jsonio import stats_of
from canary.reports.standing import mark, standing
from canary.reports.transition import Explained, explained, why_lines

GLYPH = {
    Status.PASS: ".",
    Status.FAIL: "F",
    Status.SKIP: "s",
    Status.XFAIL: "x",
    Status.XPASS: "X",
    Status.WARN: "W",
    Status.ERROR: "E",
}
ANSI = {
    Status.PASS: "32",
    Status.FAIL: "31;1",
    Status.SKIP: "2",
    Status.XFAIL: "33",
    Status.XPASS: "33;1",
    Status.WARN: "33",
    Status.ERROR: "35;1",
}
#: what a squeezed column shows when it covers several versions: the most alarming status
WORST_FIRST = (
    Status.ERROR,
    Status.FAIL,
    Status.WARN,
    Status.XPASS,
    Status.XFAIL,
    Status.PASS,
    Status.SKIP,
)
#: listed with their detail; pass and skip are only counted
QUIET = frozenset({Status.PASS, Status.SKIP})
LABEL_MAX = 32
#: the command the summary names for trimming the cache (canary/cli/cache.py)
PRUNE = "canary cache prune --older-than DAYS"
#: the lines under a finding (its transition, what it became) and its continuation lines
NOTE_INDENT = " " * 6
#: the most of a log line a finding's status, id and versions take (cut in the middle beyond)
HEAD_MAX = 100
#: the order of a tall grid's findings: red first, then warnings, then known breaks
#: what a grid cut to its red rows says under them
TALL_GRID = (
    "the red rows only: the whole grid is taller than the screen (`-v` lists every check x "
    "version, `--format html --output FILE` draws every row)"
)
LOUDEST_FIRST = {Status.FAIL: 0, Status.ERROR: 0, Status.WARN: 1, Status.XPASS: 2, Status.XFAIL: 2}


def terminal_style(stream: TextIO) -> tuple[int | None, bool]:
    """(width, color) for `render`: the grid on a terminal, plain lines elsewhere; NO_COLOR wins."""
    if not stream.isatty():
        return None, False
    return shutil.get_terminal_size().columns, "NO_COLOR" not in os.environ


def terminal_height(stream: TextIO) -> int | None:
    """The terminal's height in lines (how much grid a screen holds), None off a terminal."""
    return shutil.get_terminal_size().lines if stream.isatty() else None


def summary_line(report: RunReport) -> str:
    """The counts a run ends with, in every format: the red checks and their results said
    apart, then the check x version results by status ("2 checks red (5 check x version
    results); 30 pass, 4 fail, 1 error"; "3 pass" when nothing is red)."""
    counts = summarize(report.results)
    statuses = ", ".join(f"{n} {status}" for status, n in counts.items() if n) or "no results"
    return "; ".join(filter(None, [red_line(report), upcoming_line(report), statuses]))


def checks_line(results: Iterable[Result], state: str = "") -> str | None:
    """Checks and results said apart: "37 checks red (450 check x version results)" (a run
    of one check over many versions is one check); None when there are none."""
    counted = list(results)
    if not counted:
        return None
    checks = " ".join(
        filter(None, [plural(len({(r.upstream, r.check) for r in counted}), "check"), state])
    )
    return f"{checks} ({plural(len(counted), 'check x version result')})"


def red_line(report: RunReport) -> str | None:
    """The red checks and their results: "37 checks red (450 check x version results)";
    upcoming failures (canary.engine.upcoming) are counted apart, by `upcoming_line`."""
    upcoming = upcoming_keys(report)
    return checks_line(
        (r for r in report.results if r.status.is_red and key(r) not in upcoming), "red"
    )


def upcoming_line(report: RunReport) -> str | None:
    """The checks red only ahead of the releases: "1 check upcoming (2 check x version
    results)"."""
    upcoming = upcoming_keys(report)
    return checks_line((r for r in report.results if key(r) in upcoming), "upcoming")


def human_size(count: float) -> str:
    """Bytes as a person reads them: 950 B, 12.3 kB, 84.5 MB (powers of 1000, like pip)."""
    if count < 1000:
        return f"{count:.0f} B"
    for unit in ("kB", "MB", "GB"):
        count /= 1000
        if count < 1000 or unit == "GB":
            break
    return f"{count:.1f} {unit}"


def stats_line(report: RunReport) -> str:
    """Time and network, then the cache as something to act on: where it is and the command
    that trims it (a count of cache hits says nothing on a warm run, answered from verdicts)."""
    stats = stats_of(report)
    line = (
        f"{stats['seconds']:.1f}s, {stats['requests']} requests, "
        f"{human_size(stats['bytes_downloaded'])} downloaded"
    )
    if cache := report.run.get("cache"):
        line += f"; cache: {cache} (`canary cache info` sizes it, `{PRUNE}` trims it)"
    return line


def label(status: Status) -> str:
    """FAIL, ERROR...: padded so the upstream::check ids line up."""
    return f"{status.value.upper():5}"


def result_line(result: Result) -> str:
    line = f"{label(result.status)} {result.upstream}::{result.check}[{result.version}]"
    return f"{line} {result.detail}" if result.detail else line


@dataclass(frozen=True)
class Finding:
    """A check's versions that share a status and detail, or one source that was not read."""

    status: Status
    head: str  # `FAIL  trl::grpo[0.20.0-1.16.0]` (with an en dash)
    detail: str = ""
    place: str = ""  # where the check is written: `matrices/trl.yaml:41`
    why: str = ""  # the check's `why`, on a failure
    breaks: tuple[Explained, ...] = ()
    upcoming: bool = False  # failing only ahead of the releases (canary.engine.upcoming)

    @property
    def text(self) -> str:
        """The whole finding on one line (a terminal wraps it, the HTML report shows it)."""
        where = f"({self.place})" if self.place else ""
        return " ".join(part for part in (self.head, self.detail, where) if part)

    @property
    def line(self) -> str:
        """The finding in at most LINE_MAX characters, for a log: status, id, versions (cut in
        the middle beyond HEAD_MAX), the detail in whole words, and the matrix's file:line."""
        head = shortened(self.head, HEAD_MAX)
        where = f"({self.place})" if self.place else ""
        room = LINE_MAX - len(head) - len(where) - 2
        detail = in_words(self.detail, room) if self.detail else ""
        return " ".join(part for part in (head, detail, where) if part)

    @property
    def notes(self) -> list[str]:
        """What is said under it: where the check broke and what its subject became."""
        return [note for e in self.breaks for note in e.lines]

    @property
    def log_lines(self) -> list[str]:
        """`line`, then its notes indented, each cut (in whole words) to LINE_MAX too."""
        room = LINE_MAX - len(NOTE_INDENT)
        return [self.line, *(NOTE_INDENT + in_words(note, room) for note in self.notes)]


#: the head of an upcoming finding, in place of its status (`UPCOMING trl::grpo[main]`)
UPCOMING = "UPCOMING"
#: the line that opens the upcoming findings of a text report
UPCOMING_HEAD = "upcoming: red only ahead of the releases (a branch, the next pre-release)"


def findings(report: RunReport) -> list[Finding]:
    """Per check, one finding per (status, detail) with its versions as ranges and the
    transitions that start among those versions, those on releases the project's requirement
    allows first, then those beyond its pins (standing.py, each marked); then one per source
    that could not be read; then the upcoming failures (`upcoming` set: canary.engine.upcoming),
    each check's apart from its released ones."""
    faults, rest = split_faults(report)
    order = version_order(report)
    upcoming = upcoming_keys(report)
    found: list[tuple[int, Finding]] = []
    ahead: list[Finding] = []
    for grid in build_grids(RunReport(rest, report.stats, report.upstreams)):
        for check in grid.checks:
            loud = [c for c in grid.row(check) if c.status not in QUIET]
            for early in (False, True):
                part = [c for c in loud if (key(c) in upcoming) is early]
                for (status, detail), versions in grouped(part).items():
                    rank = standing(grid.info, versions)  # within the project's pins first
                    where = spans_text(versions, grid.versions)
                    cells = [grid.cells[check, v] for v in versions]
                    named = UPCOMING if early else label(status)
                    head = f"{named} {grid.name}::{check}[{where}]"
                    said = f"{apart}: {detail}" if (apart := mark(grid.info, rank)) else detail
                    finding = Finding(
                        status,
                        head,
                        said,
                        grid.place(check),
                        cells[0].why,
                        tuple(explained(cells)),
                        upcoming=early,
                    )
                    if early:
                        ahead.append(finding)
                    else:
                        found.append((rank, finding))
    found.sort(key=lambda pair: pair[0])  # stable: each standing in the grid's order
    head = label(Status.ERROR)
    room = LINE_MAX - len(head) - 2
    faulty = [Finding(Status.ERROR, head, fault.line(order, room)) for fault in faults]
    return [finding for _, finding in found] + faulty + ahead


def sectioned(found: list[Finding], lines: Callable[[Finding], list[str]]) -> list[str]:
    """Each finding's lines, the upcoming ones after UPCOMING_HEAD."""
    out: list[str] = []
    opened = False
    for finding in found:
        if finding.upcoming and not opened:
            out.append(UPCOMING_HEAD)
            opened = True
        out += lines(finding)
    return out


def render_lines(report: RunReport, verbose: bool = False) -> str:
    """Grouped findings, a line each (or, verbose, one line per check x version, passes and
    skips too, with a failure's `why` and transition under it), then the summary line. A run
    where one unreadable source stopped everything is that line."""
    if verbose:
        lines = [
            line
            for r in report.results
            for line in [
                result_line(r),
                *(NOTE_INDENT + n for n in why_lines(r.why)),
                *(NOTE_INDENT + n for e in explained([r]) for n in e.lines),
            ]
        ]
        return "\n".join([*lines, summary_line(report)]) + "\n"
    lines = sectioned(findings(report), lambda finding: finding.log_lines)
    faults, rest = split_faults(report)
    if len(faults) == 1 and not rest:
        return f"{lines[0]}\n"
    return "\n".join([*lines, summary_line(report)]) + "\n"


def _paint(text: str, status: Status | None, color: bool, underline: bool = False) -> str:
    if not color or status is None:
        return text
    code = ANSI[status] + (";4" if underline else "")
    return f"\x1b[{code}m{text}\x1b[0m"


def _columns(count: int, width: int) -> list[range]:
    """Split `count` versions into at most `width` consecutive, near-equal groups."""
    width = max(1, min(count, width))
    return [range(j * count // width, (j + 1) * count // width) for j in range(width)]


def _tail(cells: list[Result]) -> str:
    parts = []
    if (fail := first_failing(cells)) is not None:
        parts.append(f"first fail {fail}")
    if (ok := last_passing(cells)) is not None:
        parts.append(f"last pass {ok}")
    return ", ".join(parts)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def label_width(checks: list[str], width: int) -> int:
    """The width of the check ids' column: at most LABEL_MAX (and a third of the terminal),
    wider when that is what it takes for no two shortened ids to read the same."""
    longest = max(len(c) for c in checks)
    label_w = min(longest, LABEL_MAX, max(8, width // 3))
    while label_w < min(longest, width - 4) and len({shortened(c, label_w) for c in checks}) < len(
        set(checks)
    ):
        label_w += 1
    return label_w


def _labels(check: str, label_w: int, width: int) -> list[str]:
    """The check id's column, shortened in the middle to `label_w`; with no column (0), the
    whole id wrapped at its hyphens on lines of its own above its row, an empty column last."""
    if label_w:
        return [shortened(check, label_w)]
    return [*textwrap.wrap(check, max(8, width - 2), break_on_hyphens=True), ""]


def _grid_block(grid: UpstreamGrid, width: int, color: bool, red_only: bool = False) -> list[str]:
    """The upstream's head line and its rows (`red_only`: the rows of its red checks alone)."""
    rows = [c for c in grid.checks if not red_only or any(r.status.is_red for r in grid.row(c))]
    if not rows:
        return [_clip(f"{grid.name}: no red check of {plural(len(grid.checks), 'check')}", width)]
    label_w = label_width(rows, width)
    if len({shortened(c, label_w) for c in rows}) < len(set(rows)):
        label_w = 0  # they differ only in a middle no width shows: each id whole, above its row
    tails = {check: _tail(grid.row(check)) for check in rows}
    tail_w = max(len(t) for t in tails.values())
    n = len(grid.versions)
    strip_w = min(n, width - label_w - 4 - tail_w)
    if strip_w < min(n, 12):
        tail_w, strip_w = 0, min(n, width - label_w - 3)
    columns = _columns(n, strip_w)
    anchors = set(grid.info.anchors)
    per_col = "" if len(columns) == n else f", up to {-(-n // len(columns))} per column"
    span = f"{grid.versions[0]} … {grid.versions[-1]}"
    checks = plural(len(grid.checks), "check")
    checks = f"the {len(rows)} red of {checks}" if red_only else checks
    head = f"{checks} x {plural(n, 'version')}{per_col} ({span})"
    head += "".join(f"; next {v} (a pre-release)" for v in grid.info.next)
    lines = [_clip(f"{grid.name}: {head}", width)]
    for check in rows:
        cells = []
        for col in columns:
            versions = [grid.versions[i] for i in col]
            found = {grid.cells[check, v].status for v in versions if (check, v) in grid.cells}
            worst = next((s for s in WORST_FIRST if s in found), None)
            cells.append((worst, bool(anchors.intersection(versions))))
        strip = "".join(
            _paint(GLYPH[worst] * len(list(same)) if worst else " ", worst, color, anchor)
            for (worst, anchor), same in itertools.groupby(cells)
        )
        tail = f" {tails[check]}" if tail_w else ""
        *above, label = _labels(check, label_w, width)
        lines += [f"  {part}" for part in above]
        lines.append(f"  {label:<{label_w}} {strip}{tail}")
    return lines


def _detail_lines(report: RunReport, width: int, color: bool, loudest: bool = False) -> list[str]:
    """The grouped findings wrapped to the width, continuation lines indented (`loudest`: the
    red ones first, then the warnings, each in check order; the upcoming ones after them)."""
    found = findings(report)
    if loudest:
        found.sort(key=lambda finding: (finding.upcoming, LOUDEST_FIRST[finding.status]))

    def wrapped(finding: Finding) -> list[str]:
        return [
            _paint(part, finding.status, color)
            for text in [finding.text, *(NOTE_INDENT + note for note in finding.notes)]
            for part in textwrap.wrap(
                text, max(20, width), subsequent_indent=NOTE_INDENT, break_on_hyphens=False
            )
        ]

    return sectioned(found, wrapped)


def _wrap(parts: list[tuple[str, Status]], width: int, color: bool) -> list[str]:
    """Space-separated painted parts, broken into lines of at most `width` visible characters."""
    lines: list[list[tuple[str, Status]]] = [[]]
    used = 0
    for text, status in parts:
        if lines[-1] and used + 1 + len(text) > width:
            lines.append([])
            used = 0
        used += len(text) + (1 if lines[-1] else 0)
        lines[-1].append((text, status))
    return [" ".join(_paint(text, status, color) for text, status in line) for line in lines]


def _grid_lines(grids: list[UpstreamGrid], width: int, color: bool, red_only: bool) -> list[str]:
    return [line for grid in grids for line in [*_grid_block(grid, width, color, red_only), ""]]


def render_grid(report: RunReport, width: int, color: bool, height: int | None = None) -> str:
    """Per upstream: one row per check, one glyph per version (or per group of versions),
    then the findings. A grid taller than `height` lines would push the findings off the
    screen: they come first then, red before warnings, and the grid shows the red rows only."""
    legend = _wrap([(f"{GLYPH[s]} {s.value}", s) for s in Status], width, color)
    grids = [grid for grid in build_grids(report) if grid.checks]
    lines = _grid_lines(grids, width, color, red_only=False)
    if height is not None and len(lines) > height:
        found = _detail_lines(report, width, color, loudest=True)
        red = _grid_lines(grids, width, color, red_only=True)
        lines = [*found, *([""] if found else []), *red, textwrap.fill(TALL_GRID, max(20, width))]
    else:
        lines += _detail_lines(report, width, color)
    summary = textwrap.wrap(f"{summary_line(report)} ({stats_line(report)})", max(20, width))
    return "\n".join([*lines, *legend, *summary]) + "\n"


def render_text(
    report: RunReport,
    width: int | None = None,
    color: bool = False,
    verbose: bool = False,
    height: int | None = None,
) -> str:
    """The grid when a terminal width is known (findings first when it is taller than
    `height`), grep-friendly lines otherwise (and whenever `verbose` asks for every check x
    version)."""
    if width is None or verbose:
        return render_lines(report, verbose)
    return render_grid(report, width, color, height)
