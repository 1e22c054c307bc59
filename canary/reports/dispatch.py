"""Format name -> renderer, the one place `--format` values are known."""

from __future__ import annotations

import os
from collections.abc import Callable

from canary.outcomes import RunReport
from canary.reports.github import render_github
from canary.reports.html import render_html
from canary.reports.jsonio import to_json
from canary.reports.junit import render_junit
from canary.reports.markdown import render_markdown
from canary.reports.text import render_text

RENDERERS: dict[str, Callable[[RunReport], str]] = {
    "json": to_json,
    "markdown": render_markdown,
    "html": render_html,
    "junit": render_junit,
    "github": render_github,
}
FORMATS = ("text", *RENDERERS)


def render(
    fmt: str,
    report: RunReport,
    *,
    width: int | None = None,
    color: bool = False,
    verbose: bool = False,
) -> str:
    """The report in `fmt` (one of FORMATS); width, color and verbose only shape text.

    text: grouped lines when width is None (one per result if verbose), else the grid
    squeezed to `width` (ANSI if color).
    """
    if fmt == "text":
        return render_text(report, width=width, color=color, verbose=verbose)
    if fmt not in RENDERERS:
        raise ValueError(f"unknown report format {fmt!r}; choose from {', '.join(FORMATS)}")
    return RENDERERS[fmt](report)


def default_format(output: str | None) -> str:
    """`text`, or `github` (annotations) when run by GitHub Actions and printing to the log."""
    return "github" if output is None and os.environ.get("GITHUB_ACTIONS") == "true" else "text"
