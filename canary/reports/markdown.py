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
from canary.reports.text import QUIET, stats_line
from canary.reports.transition import fence, markdown_notes

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
#: GitHub's limit on one step's job summary
SUMMARY_LIMIT = 1024 * 1024


#: what GitHub would turn into a link, an image or a mention outside code: brackets become
#: entities, a word joiner (U+2060) follows `@` and sits inside `://`
_LINKING = {"[": "&#91;", "]": "&#93;", "@": "@\u2060", "://": ":\u2060//"}
_LINKING_RE = re.compile("|".join(map(re.escape, _LINKING)))


def md_escape(text: str) -> str:
    """Text safe inside a table cell or HTML: no pipes, no newlines, no raw HTML, no link,
    image or mention."""
    escaped = html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")
    return _LINKING_RE.sub(lambda m: _LINKING[m.group()], escaped)


def code_span(text: str) -> str:
    """Untrusted text as inline code: GitHub links, embeds and mentions nothing in it (no
    `@org/team`, image or link), and no HTML. The fence is longer than any run of backticks in
    the text; the padding spaces are the ones CommonMark strips."""
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    return f"{fence} {' '.join(text.split())} {fence}"


def code_block(text: str) -> str:
    """Untrusted lines as a fenced block whose fence no line of the text can close."""
    return f"{fence(text)}\n{text}\n{fence(text)}"


def _marker(grid: UpstreamGrid) -> Callable[[str], str]:
    anchors = set(grid.info.anchors)
    return lambda version: f"**{md_escape(version)}**" if version in anchors else md_escape(version)


def _header(report: RunReport) -> list[str]:
    counts = summarize(report.results)
    badges = " · ".join(f"{EMOJI[Status(s)]} {n} {s}" for s, n in counts.items() if n)
    legend = " ".join(f"{EMOJI[s]} {s.value}" for s in Status)
    return [
        f"# canary: {badges or 'no results'}\n\nRun: {stats_line(report)}\n\nLegend: {legend}\n"
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
    anchors = [v for v in info.anchors if v in grid.versions]
    head = "| check | statuses over versions | first failing | last passing |"
    rows = [
        f"\n## {md_escape(grid.name)}\n\n{' · '.join(facts)}\n\n"
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
    return rows


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
    """Whole parts in order while they fit under `limit` UTF-8 bytes, then a note of the cut."""
    sizes = [len(part.encode()) + 1 for part in parts]
    if sum(sizes) <= limit:
        return "\n".join(parts) + "\n"
    kept: list[str] = []
    used = 0
    for part, size in zip(parts, sizes, strict=True):
        note = _note(len(parts) - len(kept), len(parts), limit)
        if used + size + len(note.encode()) > limit:
            break
        kept.append(part)
        used += size
    return "\n".join([*kept, _note(len(parts) - len(kept), len(parts), limit)]) + "\n"


def _note(omitted: int, total: int, limit: int) -> str:
    return (
        f"\n> **Truncated**: {omitted} of {total} parts (table rows, detail blocks) are left "
        f"out to stay under {limit} bytes; `--format html` or `--format json` show everything."
    )


def markdown_parts(report: RunReport) -> list[str]:
    """Summary, one table per upstream, then the collapsed details, as parts `fit` can cut."""
    grids = [grid for grid in build_grids(report) if grid.checks]
    parts = _header(report)
    for grid in grids:
        parts += _table(grid)
    details = [block for grid in grids for block in _details(grid)]
    if details:
        parts += ["\n## Details\n", *details]
    return parts


def render_markdown(report: RunReport, limit: int = SUMMARY_LIMIT) -> str:
    """The whole report in at most `limit` bytes (GitHub's job summary limit by default)."""
    return fit(markdown_parts(report), limit)
