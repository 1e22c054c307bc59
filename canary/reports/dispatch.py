"""Format name -> renderer, the one place `--format` values are known."""

from __future__ import annotations

from collections.abc import Callable

from canary.outcomes import RunReport
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
}
FORMATS = ("text", *RENDERERS)


def render(fmt: str, report: RunReport, *, width: int | None = None, color: bool = False) -> str:
    """The report in `fmt` (one of FORMATS); width and color only shape text.

    text: plain lines when width is None, else the grid squeezed to `width` (ANSI if color).
    """
    if fmt == "text":
        return render_text(report, width=width, color=color)
    if fmt not in RENDERERS:
        raise ValueError(f"unknown report format {fmt!r}; choose from {', '.join(FORMATS)}")
    return RENDERERS[fmt](report)
