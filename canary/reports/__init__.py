"""Reports of a run: text, JSON, markdown, HTML and JUnit renderings, and drift since a baseline.

`render(fmt, report)` serves `canary check --format`; `report_main` is `canary report`, which
renders saved JSON results without re-running anything.
"""

from canary.reports.command import merge, read_report, report_main
from canary.reports.dispatch import FORMATS, render
from canary.reports.drift import Drift, drift, render_drift
from canary.reports.jsonio import ReportError, load_json, to_json
from canary.reports.text import terminal_style

__all__ = [
    "FORMATS",
    "Drift",
    "ReportError",
    "drift",
    "load_json",
    "merge",
    "read_report",
    "render",
    "render_drift",
    "report_main",
    "terminal_style",
    "to_json",
]
