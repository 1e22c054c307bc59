"""Format name -> renderer, the one place `--format` values are known.

The other formats' modules are imported when their format is asked for: a run prints one
format, and loading every renderer (XML, HTML) would cost every start-up.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable

from canary.engine.outcomes import RunReport
from canary.reports.text import render_text

#: format -> (module of canary.reports, its renderer)
RENDERERS: dict[str, tuple[str, str]] = {
    "json": ("jsonio", "to_json"),
    "markdown": ("markdown", "render_markdown"),
    "html": ("html", "render_html"),
    "junit": ("junit", "render_junit"),
    "github": ("github", "render_github"),
}
FORMATS = ("text", *RENDERERS)


def render(
    fmt: str,
    report: RunReport,
    *,
    width: int | None = None,
    color: bool = False,
    verbose: bool = False,
    height: int | None = None,
) -> str:
    """The report in `fmt` (one of FORMATS); width, color and verbose only shape text.

    text: grouped lines when width is None (one per result if verbose), else the grid
    squeezed to `width` (ANSI if color), the findings first when it is taller than `height`.
    """
    if fmt == "text":
        return render_text(report, width=width, color=color, verbose=verbose, height=height)
    if fmt not in RENDERERS:
        raise ValueError(f"unknown report format {fmt!r}; choose from {', '.join(FORMATS)}")
    module, name = RENDERERS[fmt]
    renderer: Callable[[RunReport], str] = getattr(
        importlib.import_module(f"canary.reports.{module}"), name
    )
    return renderer(report)


def default_format(output: str | None) -> str:
    """`text`, or `github` (annotations) when run by GitHub Actions and printing to the log."""
    return "github" if output is None and os.environ.get("GITHUB_ACTIONS") == "true" else "text"
