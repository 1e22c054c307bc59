"""`canary report RESULT.json [...] [--baseline OLD.json] [--format F] [--output FILE]`.

Renders saved results (several files are merged, e.g. one per upstream from parallel jobs) so
the nightly can draw the grid and say what is new without re-running the checks.
"""

from __future__ import annotations

import sys
from pathlib import Path

from canary.engine.outcomes import Result, RunReport
from canary.engine.upcoming import carry_since
from canary.reports.dispatch import FORMATS, render
from canary.reports.drift import Drift, drift, drift_json, drift_parts, render_drift
from canary.reports.jsonio import STATS_KEYS, ReportError, load_json, to_json
from canary.reports.markdown import SUMMARY_LIMIT, fit, markdown_parts
from canary.reports.output import OutputError, prepare_output, write_output
from canary.reports.text import stats_line, summary_line, terminal_height, terminal_style


def read_report(path: str) -> RunReport:
    """A saved JSON result ("-" is stdin); ReportError naming the file on any problem."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        return load_json(text)
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ReportError(f"cannot read {path}: not UTF-8 text ({exc.reason})") from None
    except ReportError as exc:
        raise ReportError(f"{path}: {exc}") from None


def merge(reports: list[RunReport]) -> RunReport:
    """One report from several runs: one result per check x version (the last file's, when
    two files hold the same cell: a re-run replaces, never adds), counters added up."""
    cells: dict[tuple[str, str, str], Result] = {}
    merged = RunReport(results=[], stats=dict.fromkeys(STATS_KEYS, 0), upstreams={})
    for report in reports:
        for result in report.results:
            cell = (result.upstream, result.check, result.version)
            cells.pop(cell, None)  # the newer result takes the newer place
            cells[cell] = result
        for key in STATS_KEYS:
            merged.stats[key] += report.stats.get(key, 0)
        merged.upstreams.update(report.upstreams)
        merged.since.update(report.since)
        merged.run = report.run or merged.run
    merged.results = list(cells.values())
    repeated = sum(len(report.results) for report in reports) - len(merged.results)
    if repeated:
        print(
            f"canary report: {repeated} check x version results are in more than one file; "
            "the last file's are kept",
            file=sys.stderr,
        )
    return merged


#: the formats that show what changed since a baseline in the report itself (else: stderr)
DRIFT_FORMATS = ("markdown", "text", "json")


def compose(
    fmt: str,
    report: RunReport,
    found: Drift | None,
    width: int | None = None,
    color: bool = False,
    limit: int = SUMMARY_LIMIT,
    height: int | None = None,
) -> str:
    """The report in `fmt`; with what changed since a baseline (`found`) first, in the
    formats that can show it. Markdown stays under `limit` bytes, cut at whole parts."""
    if fmt == "markdown":  # drift first, both under one size cap
        return fit((drift_parts(found) if found else []) + markdown_parts(report), limit)
    if found is not None and fmt == "text":
        return (
            render_drift(found, fmt)
            + "\n"
            + render(fmt, report, width=width, color=color, height=height)
        )
    if found is not None and fmt == "json":
        return to_json(report, {"drift": drift_json(found)})
    return render(fmt, report, width=width, color=color, height=height)


def report_main(
    paths: list[str], fmt: str = "text", output: str | None = None, baseline: str | None = None
) -> int:
    """Exit status: with a baseline, 1 on new failures; without, 1 on any fail or error; 2 when
    an input cannot be read or the format is unknown."""
    if fmt not in FORMATS:
        print(
            f"canary report: unknown format {fmt!r}; choose from {', '.join(FORMATS)}",
            file=sys.stderr,
        )
        return 2
    try:
        target = prepare_output(output) if output is not None else None
        report = merge([read_report(path) for path in paths])
        old = read_report(baseline) if baseline else None
    except (ReportError, OutputError) as exc:
        print(f"canary report: {exc}", file=sys.stderr)
        return 2
    width, color = terminal_style(sys.stdout) if output is None else (None, False)
    height = terminal_height(sys.stdout) if output is None else None
    if old is not None:
        carry_since(report, old)
    found = drift(report, old) if old is not None else None
    body = compose(fmt, report, found, width=width, color=color, height=height)
    if found is not None and fmt not in DRIFT_FORMATS:
        print(render_drift(found, "text"), file=sys.stderr, end="")
    if target is None:
        sys.stdout.write(body)
    else:
        try:
            write_output(target, body)
        except OutputError as exc:
            print(f"canary report: {exc}", file=sys.stderr)
            return 2
        print(f"{summary_line(report)} ({stats_line(report)})\nwrote {target}")
    if found is not None:
        return 1 if found.new_failures or found.new_upcoming else 0
    return 1 if any(result.status.is_red for result in report.results) else 0
