"""`canary report RESULT.json [...] [--baseline OLD.json] [--format F] [--output FILE]`.

Renders saved results (several files are merged, e.g. one per upstream from parallel jobs) so
the nightly can draw the grid and say what is new without re-running the checks.
"""

from __future__ import annotations

import sys
from pathlib import Path

from canary.outcomes import RunReport
from canary.reports.dispatch import FORMATS, render
from canary.reports.drift import drift, drift_parts, render_drift
from canary.reports.jsonio import STATS_KEYS, ReportError, load_json
from canary.reports.markdown import SUMMARY_LIMIT, fit, markdown_parts
from canary.reports.text import terminal_style


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
    """One report from several runs: results concatenated, counters added up."""
    merged = RunReport(results=[], stats=dict.fromkeys(STATS_KEYS, 0), upstreams={})
    for report in reports:
        merged.results += report.results
        for key in STATS_KEYS:
            merged.stats[key] += report.stats.get(key, 0)
        merged.upstreams.update(report.upstreams)
    return merged


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
        report = merge([read_report(path) for path in paths])
        old = read_report(baseline) if baseline else None
    except ReportError as exc:
        print(f"canary report: {exc}", file=sys.stderr)
        return 2
    width, color = terminal_style(sys.stdout) if output is None else (None, False)
    found = drift(report, old) if old is not None else None
    if found is not None and fmt == "markdown":  # drift first, both under one size cap
        body = fit(drift_parts(found) + markdown_parts(report), SUMMARY_LIMIT)
    elif found is not None and fmt == "text":
        body = render_drift(found, fmt) + "\n" + render(fmt, report, width=width, color=color)
    else:
        body = render(fmt, report, width=width, color=color)
        if found is not None:
            print(render_drift(found, "text"), file=sys.stderr, end="")
    try:
        if output is None:
            sys.stdout.write(body)
        else:
            Path(output).write_text(body, encoding="utf-8")
    except OSError as exc:
        print(f"canary report: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if found is not None:
        return 1 if found.new_failures else 0
    return 1 if any(result.status.is_red for result in report.results) else 0
