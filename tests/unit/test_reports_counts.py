"""Issue 29 item 3: every format counts red checks and check x version results apart."""

from __future__ import annotations

import pytest
from test_reports_support import build, releases

from canary.reports.dispatch import render
from canary.reports.text import summary_line

#: two checks red, one over three versions, one over one: four check x version results
SAID = "2 checks red (4 check x version results)"


def red_run():
    return build({"trl": (releases(4), {"a": ".FFF", "b": "E...", "c": "...."})})


def test_the_summary_line_says_checks_then_results_by_status():
    assert summary_line(red_run()) == f"{SAID}; 8 pass, 3 fail, 1 error"
    assert summary_line(build({"trl": (releases(2), {"a": ".."})})) == "2 pass"


@pytest.mark.parametrize("fmt", ["text", "github", "markdown", "html"])
def test_every_format_says_checks_and_results_apart(fmt):
    out = render(fmt, red_run())
    assert SAID in out
    assert "checks red (12 " not in out  # never every result counted as red


def test_the_terminal_grid_ends_with_the_counts():
    assert SAID in " ".join(render("text", red_run(), width=120).splitlines()[-3:])


def test_the_html_summary_bar_and_title_say_both():
    page = render("html", red_run())
    bar = page[page.index('<div id="summary"') :]
    assert bar[: bar.index("</div>")].count(SAID) == 1
    title = page[page.index("<title>") : page.index("</title>")]
    assert SAID in title
