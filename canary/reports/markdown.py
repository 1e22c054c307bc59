"""Markdown for GitHub job summaries and PR comments: one table row per check, runs not cells.

A row compresses a check's statuses over all versions into runs ("✅ 0.27.1-1.16.0"), so 150
versions stay one readable line. Details sit below the tables, one collapsed block per check,
each detail said once for the versions that share it. GitHub rejects a job summary above 1 MiB:
the output is cut at whole rows or blocks under `limit` bytes and says so, never silently.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from canary.engine.outcomes import RunReport, Status, summarize
from canary.engine.upcoming import Key, key, upcoming_keys
from canary.reports.faults import split_faults, version_order
from canary.reports.fitting import in_words
from canary.reports.grid import (
    UpstreamGrid,
    build_grids,
    first_failing,
    grouped,
    last_passing,
    plural,
    runs,
    span_text,
    spans_text,
)
from canary.reports.standing import mark as apart_mark
from canary.reports.standing import standing
from canary.reports.text import QUIET, UPCOMING_HEAD, red_line, stats_line, upcoming_line
from canary.reports.transition import fence, markdown_notes, why_lines

EMOJI = {
    Status.PASS: "✅",
    Status.FAIL: "❌",
    Status.SKIP: "\u2796",  # heavy minus sign
    Status.XFAIL: "🚧",
    Status.XPASS: "🎉",
    Status.WARN: "⚠️",
    Status.ERROR: "💥",
}
NONE = "\u2013"
RED = frozenset({Status.FAIL, Status.ERROR})
WARNED = frozenset({Status.WARN, Status.XPASS})
#: GitHub's limit on one step's job summary
SUMMARY_LIMIT = 1024 * 1024
#: the most of a detail a table cell shows (the check's folded details say all of it)
CELL_MAX = 160


#: what GitHub would turn into a link, an image, a mention or a reference outside code:
#: brackets become entities; a word joiner (U+2060) follows `@`, sits inside `://` and `www.`
#: (an autolink), and after the `#` of `#12` (`owner/repo#12`) and the `-` of `GH-12`
_ENTITIES = {"[": "&#91;", "]": "&#93;"}
_LINKING_RE = re.compile(r"[\[\]]|@|:(?=//)|www(?=\.)|#(?=\d)|gh-(?=\d)", re.IGNORECASE)


def md_escape(text: str) -> str:
    """Text safe inside a table cell or HTML: no pipes, no newlines, no raw HTML, no link,
    image, mention or reference."""
    escaped = html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")
    return _LINKING_RE.sub(lambda m: _ENTITIES.get(m.group()) or m.group() + "\u2060", escaped)


def code_span(text: str) -> str:
    """Untrusted text as inline code: GitHub links, embeds and mentions nothing in it (no
    `@org/team`, image or link), and no HTML. The fence is longer than any run of backticks in
    the text; the padding spaces are the ones CommonMark strips."""
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    return f"{fence} {' '.join(text.split())} {fence}"


def cell_code(text: str) -> str:
    """Untrusted text as inline code in a table cell: GitHub splits a row at every `|` not
    escaped, inside a code span too, and reads `\\|` there as `|`."""
    return code_span(text).replace("|", "\\|")


def code_block(text: str) -> str:
    """Untrusted lines as a fenced block whose fence no line of the text can close."""
    return f"{fence(text)}\n{text}\n{fence(text)}"


def _marker(grid: UpstreamGrid) -> Callable[[str], str]:
    """Anchors in bold; the pre-release ahead of the releases says it is one."""
    anchors, ahead = set(grid.info.anchors), set(grid.info.next)

    def mark(version: str) -> str:
        text = f"**{md_escape(version)}**" if version in anchors else md_escape(version)
        return f"{text} (next, pre-release)" if version in ahead else text

    return mark


def _header(report: RunReport) -> list[str]:
    counts = summarize(report.results)
    badges = " · ".join(f"{EMOJI[Status(s)]} {n} {s}" for s, n in counts.items() if n)
    legend = " ".join(f"{EMOJI[s]} {s.value}" for s in Status)
    red = "; ".join(filter(None, [red_line(report), upcoming_line(report)]))
    return [
        f"# canary: {badges or 'no results'}\n\n"
        + (f"**{red}**\n\n" if red else "")
        + f"Run: {stats_line(report)}\n\nLegend: {legend}\n"
    ]


def _table(grid: UpstreamGrid) -> list[str]:
    mark = _marker(grid)
    info = grid.info
    facts = [f"{plural(len(grid.checks), 'check')} x {plural(len(grid.versions), 'version')}"]
    facts.append(f"{span_text((grid.versions[0], grid.versions[-1]), mark)}")
    if info.anchors:
        facts.append("anchors " + ", ".join(f"**{md_escape(v)}**" for v in info.anchors))
    if info.broken:
        facts.append("known broken " + ", ".join(md_escape(v) for v in info.broken))
    if info.next:
        facts.append(
            "next " + ", ".join(md_escape(v) for v in info.next) + " (a pre-release, newer than "
            "every final release)"
        )
    anchors = [v for v in info.anchors if v in grid.versions]
    head = "| check | statuses over versions | first failing | last passing |"
    rows = [
        f"\n## {md_escape(grid.name)}\n\n{' · '.join(facts)}\n\n"
        + f"<details><summary>{_grid_summary(grid)}</summary>\n\n"
        + (head + " at anchors |" if anchors else head)
        + ("\n| --- | --- | --- | --- |" + (" --- |" if anchors else ""))
    ]
    for check in grid.checks:
        cells = grid.row(check)
        statuses = " · ".join(f"{EMOJI[r.status]} {span_text(r.span, mark)}" for r in runs(cells))
        fail, ok = first_failing(cells), last_passing(cells)
        row = f"| `{md_escape(check)}` | {statuses} | {mark(fail) if fail else NONE} | "
        row += f"{mark(ok) if ok else NONE} |"
        if anchors:
            at = [(v, grid.cells.get((check, v))) for v in anchors]
            row += " " + " ".join(f"{mark(v)} {EMOJI[c.status]}" for v, c in at if c) + " |"
        rows.append(row)
    return ["\n".join(rows) + "\n\n</details>\n"]  # one part: a cut never leaves it open


def _grid_summary(grid: UpstreamGrid) -> str:
    """What the folded grid holds: all green, or how many checks are not."""
    loud = [c for c in grid.checks if any(r.status not in QUIET for r in grid.row(c))]
    state = f"{len(loud)} not passing" if loud else "every check holds"
    return f"the grid: {plural(len(grid.checks), 'check')}, {state}"


def _failing_rows(
    grids: list[UpstreamGrid],
    statuses: frozenset[Status],
    upcoming: frozenset[Key] = frozenset(),
    ahead: bool = False,
) -> list[str]:
    """One row per check with a result in `statuses` (those in `upcoming` when `ahead`, the
    others when not), those red on releases the project's requirement allows first, then
    those only beyond its pins (standing.py, marked), each newest breakage first: the check
    whose first such version is the latest release comes first."""
    found = []
    for grid in grids:
        mark = _marker(grid)
        for check in grid.checks:
            cells = [
                c for c in grid.row(check) if c.status in statuses and (key(c) in upcoming) is ahead
            ]
            if not cells:
                continue
            rank = standing(grid.info, [c.version for c in cells])
            since = len(grid.versions) - grid.versions.index(cells[0].version)
            ok = last_passing(grid.row(check))
            detail = cells[-1].detail
            apart = f" ({md_escape(said)})" if (said := apart_mark(grid.info, rank)) else ""
            row = (
                f"| `{md_escape(grid.name)}::{md_escape(check)}`{apart} "
                f"| {' · '.join(sorted({EMOJI[c.status] for c in cells}))} "
                f"{spans_text([c.version for c in cells], grid.versions, mark)} "
                f"| {mark(cells[0].version)} | {mark(ok) if ok else NONE} "
                f"| {cell_code(in_words(detail, CELL_MAX)) if detail else NONE} |"
            )
            found.append(((rank, since), row))
    return [row for _, row in sorted(found, key=lambda pair: pair[0])]


_HEAD = "| check | versions | first | last passing | detail |\n| --- | --- | --- | --- | --- |"


def _findings(report: RunReport, grids: list[UpstreamGrid]) -> list[str]:
    """Failures first (a table of red checks, newest breakage first; the sources that could
    not be read, one line per cause), then warnings: each row its own part."""
    faults, _ = split_faults(report)
    order = version_order(report)
    parts = []
    upcoming = upcoming_keys(report)
    red = _failing_rows(grids, RED, upcoming)
    if red:
        parts += [f"\n## Failing\n\n{_HEAD}", *red]
    if ahead := _failing_rows(grids, RED, upcoming, ahead=True):
        parts += [f"\n## Upcoming\n\n{UPCOMING_HEAD.capitalize()}.\n\n{_HEAD}", *ahead]
    if faults:
        parts += ["\n## Sources not read\n"]
        parts += [f"- 💥 {md_escape(fault.line(order))}" for fault in faults]
    warned = _failing_rows(grids, WARNED)
    if warned:
        parts += [f"\n## Warnings\n\n{_HEAD}", *warned]
    return parts


def _details(grid: UpstreamGrid) -> list[str]:
    mark = _marker(grid)
    blocks = []
    for check in grid.checks:
        loud = [cell for cell in grid.row(check) if cell.status not in QUIET]
        if not loud:
            continue
        items = [
            f"- {EMOJI[status]} {status.value} {spans_text(versions, grid.versions, mark)}: "
            f"{code_span(detail) if detail else '(no detail)'}"
            + "".join(
                f"\n  - {md_escape(line)}" for line in why_lines(grid.cells[check, versions[0]].why)
            )
            + "".join(
                "\n" + note
                for note in markdown_notes((grid.cells[check, v] for v in versions), md_escape)
            )
            for (status, detail), versions in grouped(loud).items()
        ]
        blocks.append(
            f"<details><summary>{md_escape(grid.name)} :: {md_escape(check)} "
            f"({len(loud)} not passing)</summary>\n\n" + "\n".join(items) + "\n\n</details>\n"
        )
    return blocks


def fit(parts: list[str], limit: int) -> str:
    """Whole parts in order while they fit under `limit` UTF-8 bytes, then a note of the cut
    (each part and the note end with a newline: a part's size counts its own)."""
    sizes = [len(part.encode()) + 1 for part in parts]
    if sum(sizes) <= limit:
        return "\n".join(parts) + "\n"
    kept: list[str] = []
    used = 0
    for part, size in zip(parts, sizes, strict=True):
        note = _note(len(parts) - len(kept), len(parts), limit)
        if used + size + len(note.encode()) + 1 > limit:
            break
        kept.append(part)
        used += size
    return "\n".join([*kept, _note(len(parts) - len(kept), len(parts), limit)]) + "\n"


def _note(omitted: int, total: int, limit: int) -> str:
    return (
        f"\n> **Truncated**: the last {omitted} of {total} parts (table rows, detail blocks, "
        f"grids) are left out to stay under {limit:,} bytes (GitHub's limit). The full report "
        "is the run's uploaded results artifact (`canary report results.json --format html` "
        "draws it), or `--format html` / `--format json`."
    )


def markdown_parts(report: RunReport) -> list[str]:
    """Summary; what fails, what could not be read, what warns; the collapsed details; then
    every upstream's grid folded: as parts `fit` can cut, most useful first."""
    grids = [grid for grid in build_grids(report) if grid.checks]
    _, rest = split_faults(report)  # a source fault is one line, not a row and detail per check
    own = [g for g in build_grids(RunReport(rest, report.stats, report.upstreams)) if g.checks]
    parts = _header(report) + _findings(report, own)
    details = [block for grid in own for block in _details(grid)]
    if details:
        parts += ["\n## Details\n", *details]
    for grid in grids:
        parts += _table(grid)
    return parts


def render_markdown(report: RunReport, limit: int = SUMMARY_LIMIT) -> str:
    """The whole report in at most `limit` bytes (GitHub's job summary limit by default)."""
    return fit(markdown_parts(report), limit)
