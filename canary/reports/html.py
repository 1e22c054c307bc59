"""One self-contained HTML document: what was run, the check x version grid, the findings.

A title with the date, canary's version and the command; a summary, a legend and filters; per
upstream the grid, scrolled so the newest releases show without scrolling, each cell colored
and marked with its status's glyph (the terminal's), so no status rests on color alone; under
the grids every finding with its detail in plain view (hover or click only repeat it).

Nothing is loaded from the network (inline CSS and JS, no fonts or images), so the file works as
a CI artifact opened from disk. Every box above and in the grids has a fixed size, so where a
cell is drawn is known (`cell_origin`): the browser test samples pixel colors there.
"""

from __future__ import annotations

import base64
import hashlib
import html
from string import Template

from canary.engine.outcomes import RunReport, Status, summarize
from canary.reports.faults import fault_text
from canary.reports.grid import UpstreamGrid, build_grids, first_failing, last_passing
from canary.reports.text import (
    GLYPH,
    NOTE_INDENT,
    UPCOMING_HEAD,
    Finding,
    findings,
    red_line,
    stats_line,
    summary_line,
    upcoming_line,
)
from canary.reports.transition import html_diff, why_lines

COLORS = {
    Status.PASS: "#2da44e",
    Status.FAIL: "#cf222e",
    Status.SKIP: "#d0d7de",
    Status.XFAIL: "#bf8700",
    Status.XPASS: "#8250df",
    Status.WARN: "#fb8500",
    Status.ERROR: "#1f2328",
}
#: what each status means, for the legend
MEANING = {
    Status.PASS: "holds",
    Status.FAIL: "broken",
    Status.SKIP: "outside its gate",
    Status.XFAIL: "known broken, fails",
    Status.XPASS: "known broken, holds",
    Status.WARN: "info check fails",
    Status.ERROR: "not read",
}
CELL = 16  # px, square cells
LABEL_W = 280  # px, the check-id column
HEADER = 56  # px, title and what was run
TOP = HEADER + 40 + 28 + 32  # px, header + summary bar (40) + legend (28) + filter bar (32)
HEAD = 28  # px, an upstream's title
AXIS = 100  # px, the rotated version labels
#: what a marked version's label says when pointed at
AXIS_NOTES = {
    " anchor": " (anchor)",
    " broken": " (known broken)",
    " next": " (next: a pre-release, newer than every final release)",
}
GAP = 20  # px, below each upstream's grid

CSS = Template("""
body{margin:0;font:12px/16px sans-serif;color:#1f2328;background:#fff}
header{height:${header}px;overflow:hidden;padding:6px 8px 0;box-sizing:border-box;
 white-space:nowrap}
header h1{margin:0;font-size:18px;line-height:24px}
header p{margin:0;color:#57606a;overflow:hidden;text-overflow:ellipsis}
#legend{height:28px;overflow:hidden;display:flex;gap:14px;align-items:center;padding:0 8px;
 box-sizing:border-box;white-space:nowrap}
.scroll{overflow-x:auto}
#findings{padding:8px}
#findings h2{font-size:15px;margin:0 0 6px}
#findings ul{margin:0;padding:0;list-style:none}
#findings li{white-space:pre-wrap;font-family:monospace;padding:2px 0}
#findings .badge{width:auto;height:auto;padding:0 3px;font-weight:bold}
#summary{height:40px;overflow:hidden;display:flex;gap:12px;align-items:center;padding:0 8px;
 box-sizing:border-box;background:#f6f8fa;white-space:nowrap}
#filters{height:32px;overflow:hidden;display:flex;gap:10px;align-items:center;padding:0 8px;
 box-sizing:border-box;white-space:nowrap}
.badge{display:inline-block;min-width:12px;height:14px;margin-right:4px;text-align:center;
 font:bold 10px/14px monospace;color:#fff}
section{padding-bottom:${gap}px}
section h2{height:${head}px;line-height:${head}px;margin:0;padding:0 8px;font-size:15px;
 overflow:hidden;white-space:nowrap;box-sizing:border-box}
.grid{display:grid;width:max-content;grid-template-rows:${axis}px;grid-auto-rows:${cell}px}
.row{display:contents}
.row[hidden],section[hidden]{display:none}
.v{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;overflow:hidden;
 font-size:11px;line-height:${cell}px;text-align:left}
.v.anchor{font-weight:bold}
.v.broken{font-style:italic;color:#8c959f}
.v.next{color:#9a6700;text-decoration:underline dotted}
.k{grid-column:1;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;padding:0 6px 0 8px;
 box-sizing:border-box;position:sticky;left:0;z-index:1;background:#fff}
.c{box-sizing:border-box;border-right:1px solid #fff;border-bottom:1px solid #fff;cursor:pointer;
 font:bold 9px/15px monospace;text-align:center;color:#fff;overflow:hidden}
.c.s-skip,.badge.s-skip{color:#57606a}
.c.dim{opacity:.12}
#detail{position:fixed;left:0;right:0;bottom:0;background:#fff8c5;padding:6px 8px;
 border-top:1px solid #d4a72c;white-space:pre-wrap;font-family:monospace}
$colors
""")

JS = """
const sel = document.getElementById('f-upstream');
const boxes = [...document.querySelectorAll('#filters input')];
function apply() {
  const on = new Set(boxes.filter(b => b.checked).map(b => b.value));
  for (const s of document.querySelectorAll('section'))
    s.hidden = sel.value !== '' && s.dataset.upstream !== sel.value;
  for (const r of document.querySelectorAll('.row'))
    r.hidden = !r.dataset.statuses.split(' ').some(x => on.has(x));
  for (const c of document.querySelectorAll('.c')) c.classList.toggle('dim', !on.has(c.dataset.s));
  const st = boxes.every(b => b.checked) ? '' : 'status=' + [...on].join(',');
  const up = sel.value ? 'upstream=' + encodeURIComponent(sel.value) : '';
  history.replaceState(null, '', '#' + [up, st].filter(Boolean).join('&'));
}
const want = new URLSearchParams(location.hash.slice(1));
if (want.has('upstream')) sel.value = want.get('upstream');
if (want.has('status')) {
  const st = new Set(want.get('status').split(','));
  for (const b of boxes) b.checked = st.has(b.value);
}
for (const s of document.querySelectorAll('.scroll')) s.scrollLeft = s.scrollWidth;
sel.addEventListener('change', apply);
for (const b of boxes) b.addEventListener('change', apply);
document.addEventListener('click', e => {
  if (!e.target.classList.contains('c')) return;
  const d = document.getElementById('detail');
  d.textContent = e.target.title;
  d.hidden = false;
});
apply();
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _css() -> str:
    colors = "\n".join(f".s-{s.value}{{background:{c}}}" for s, c in COLORS.items())
    return CSS.substitute(
        gap=GAP, head=HEAD, label=LABEL_W, cell=CELL, axis=AXIS, header=HEADER, colors=colors
    )


def _section(grid: UpstreamGrid) -> str:
    kinds = {v: " broken" for v in grid.info.broken}
    kinds |= {v: " anchor" for v in grid.info.anchors} | {v: " next" for v in grid.info.next}
    axis = ['<div class="k"></div>']
    for version in grid.versions:
        kind = kinds.get(version, "")
        note = AXIS_NOTES.get(kind, "")
        axis.append(f'<div class="v{kind}" title="{_e(version + note)}">{_e(version)}</div>')
    rows = []
    for check in grid.checks:
        cells = grid.row(check)
        statuses = " ".join(sorted({c.status.value for c in cells}))
        fail, ok = first_failing(cells), last_passing(cells)
        hint = f"first failing {fail or '-'}, last passing {ok or '-'}"
        out = [f'<div class="row" data-statuses="{statuses}">']
        out.append(f'<div class="k" title="{_e(check + ": " + hint)}">{_e(check)}</div>')
        for version in grid.versions:
            cell = grid.cells.get((check, version))
            if cell is None:
                out.append("<div></div>")
                continue
            title = f"{grid.name}::{check}[{version}] {cell.status.value}"
            detail = fault_text(cell) or cell.detail  # a source fault: its cause, once
            title += f": {detail}" if detail else ""
            title += "".join(f"\n{line}" for line in why_lines(cell.why))
            out.append(
                f'<div class="c s-{cell.status.value}" data-s="{cell.status.value}" '
                f'title="{_e(title)}">{_e(GLYPH[cell.status])}</div>'
            )
        rows.append("".join(out) + "</div>")
    return (
        f'<section data-upstream="{_e(grid.name)}"><h2>{_e(grid.name)}</h2>'
        f'<div class="scroll"><div class="grid" style="grid-template-columns:{LABEL_W}px '
        f'repeat({len(grid.versions)},{CELL}px)">{"".join(axis)}\n'
        + "\n".join(rows)
        + "</div></div></section>"
    )


def _badge(status: Status) -> str:
    return f'<span class="badge s-{status.value}">{_e(GLYPH[status])}</span>'


def _bars(report: RunReport, grids: list[UpstreamGrid]) -> str:
    counts = summarize(report.results)
    badges = "".join(f"<span>{_badge(Status(s))}{n} {s}</span>" for s, n in counts.items())
    if ahead := upcoming_line(report):
        badges = f"<strong>{_e(ahead)}:</strong>{badges}"
    if red := red_line(report):
        badges = f"<strong>{_e(red)}:</strong>{badges}"
    legend = "".join(
        f'<span title="{_e(MEANING[s])}">{_badge(s)}{s.value}: {_e(MEANING[s])}</span>'
        for s in Status
    )
    options = "".join(f'<option value="{_e(g.name)}">{_e(g.name)}</option>' for g in grids)
    boxes = "".join(
        f'<label><input type="checkbox" value="{s.value}" checked> {s.value}</label>'
        for s in Status
    )
    return (
        f'<div id="summary" title="{_e(stats_line(report))}">{badges}</div>'
        f'<div id="legend">{legend}</div>'
        f'<div id="filters"><select id="f-upstream"><option value="">all upstreams</option>'
        f"{options}</select>{boxes}</div>"
    )


#: nothing but the page's own script runs, and nothing is fetched: a script that reached the
#: page through a field of the results file (every field is escaped) would still not run
POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; "
    f"script-src 'sha256-{base64.b64encode(hashlib.sha256(JS.encode()).digest()).decode()}'"
)


def _title(report: RunReport) -> str:
    when = report.run.get("date", "date unknown")
    return f"canary report, {when}: {summary_line(report)}"


def _header(report: RunReport) -> str:
    facts = [_e(f"canary {report.run['canary']}")] if "canary" in report.run else []
    if "command" in report.run:
        facts.append(f"<code>{_e(str(report.run['command']))}</code>")
    facts.append(_e(stats_line(report)))
    return f"<header><h1>{_e(_title(report))}</h1><p>{' · '.join(facts)}</p></header>"


def _findings(report: RunReport) -> str:
    """Every finding in plain view: status, check, versions as ranges, detail."""
    found = findings(report)
    body = _items([f for f in found if not f.upcoming])
    if not body:
        body = "<p>Nothing to report: every check holds.</p>"
    if ahead := _items([f for f in found if f.upcoming]):
        body += f'<h2 id="upcoming">{_e(UPCOMING_HEAD.capitalize())}</h2>{ahead}'
    return f'<section id="findings"><h2>Findings</h2>{body}</section>'


def _items(found: list[Finding]) -> str:
    """The findings as a list (an upcoming one marked `data-upcoming`); "" when none."""
    items = [
        f'<li data-s="{f.status.value}"{" data-upcoming" if f.upcoming else ""}>'
        f"{_badge(f.status)}{_e(f.text)}"
        + "".join(f"<br>{_e(NOTE_INDENT + n)}" for n in [*why_lines(f.why), *f.notes])
        + "".join(html_diff(e, _e) for e in f.breaks)
        + "</li>"
        for f in found
    ]
    return f"<ul>{''.join(items)}</ul>" if items else ""


def render_html(report: RunReport) -> str:
    grids = [grid for grid in build_grids(report) if grid.checks]
    sections = "\n".join(_section(grid) for grid in grids)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        f"<title>{_e(_title(report))}</title><style>{_css()}</style></head>"
        f"<body>{_header(report)}{_bars(report, grids)}\n{sections}\n{_findings(report)}"
        f'\n<div id="detail" hidden></div><script>{JS}</script></body></html>\n'
    )


def cell_origin(report: RunReport, upstream: str, check: str, version: str) -> tuple[int, int]:
    """Top-left pixel (x, y) of a cell in the unfiltered page at scroll 0."""
    y = TOP
    for grid in build_grids(report):
        if not grid.checks:
            continue
        if grid.name == upstream:
            row, col = grid.checks.index(check), grid.versions.index(version)
            return LABEL_W + col * CELL, y + HEAD + AXIS + row * CELL
        y += HEAD + AXIS + len(grid.checks) * CELL + GAP
    raise KeyError(upstream)
