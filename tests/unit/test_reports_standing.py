"""Reds on releases the project's requirement allows come first in every format; reds only
beyond its upper pins come after them, marked (issue 46: a maintainer read six reds about
releases the project does not support before the ones that matter)."""

from __future__ import annotations

import dataclasses
import json

from test_reports_support import build

from canary.engine.outcomes import RunReport
from canary.reports.dispatch import render
from canary.reports.github import annotation_lines
from canary.reports.jsonio import load_json

VERSIONS = ["0.18.0", "0.19.0", "0.20.0", "0.21.0", "0.22.0"]
MARK = "beyond your pin <=0.21.0"


def report(declared: str = ">=0.18.0,<=0.21.0") -> RunReport:
    """`beyond` breaks on 0.22.0 only (after the pin), listed first in the matrix; `within`
    breaks from 0.20.0 on, on releases the project supports."""
    built = build({"trl": (VERSIONS, {"beyond": "....F", "within": "..FFF"})})
    info = dataclasses.replace(built.upstreams["trl"], declared=declared)
    return dataclasses.replace(built, upstreams={"trl": info})


def order(text: str, *names: str) -> list[int]:
    return [text.index(name) for name in names]


def test_text_lists_the_reds_within_the_pins_first_and_marks_the_others():
    lines = render("text", report()).splitlines()
    assert lines[0].startswith("FAIL  trl::within[0.20.0\u20130.22.0] within is fail")
    assert lines[1] == f"FAIL  trl::beyond[0.22.0] {MARK}: beyond is fail (matrices/trl.yaml:10)"


def test_without_a_declared_requirement_nothing_moves():
    lines = render("text", report(declared="")).splitlines()
    assert lines[0].startswith("FAIL  trl::beyond[0.22.0] beyond is fail")
    assert "beyond your pin" not in "\n".join(lines)


def test_markdown_and_html_list_them_in_that_order_marked():
    markdown = render("markdown", report())
    within, beyond = order(markdown, "`trl::within`", "`trl::beyond`")
    assert within < beyond and "`trl::beyond` (beyond your pin &lt;=0.21.0)" in markdown
    findings = render("html", report()).split('<section id="findings">')[1]
    within, beyond = order(findings, "trl::within[", "trl::beyond[")
    assert within < beyond and "beyond your pin &lt;=0.21.0: beyond is fail" in findings


def test_annotations_put_the_reds_within_the_pins_first():
    errors = [line for line in annotation_lines(report()) if line.startswith("::error")]
    assert "trl%3A%3Awithin" in errors[0] and "trl%3A%3Abeyond" in errors[1]
    assert f"::fail: {MARK}: beyond is fail" in errors[1]


def test_json_carries_the_requirement_and_the_red_checks_within_first():
    text = render("json", report())
    data = json.loads(text)
    assert data["upstreams"]["trl"]["declared"] == ">=0.18.0,<=0.21.0"
    assert [(r["check"], r["standing"]) for r in data["red"]] == [
        ("within", "within"),
        ("beyond", "beyond"),
    ]
    assert load_json(text).upstreams["trl"].declared == ">=0.18.0,<=0.21.0"  # read back
    assert "red" not in json.loads(render("json", report(declared="")))
