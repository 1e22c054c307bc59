"""Upcoming reds (red only ahead of the releases: main, the next pre-release) told apart from
released reds in every format, dated across nights, and their own exit policy."""

from __future__ import annotations

import dataclasses
import json

import pytest
from test_reports_support import build

from canary.cli.check import exit_status
from canary.engine.outcomes import UpstreamInfo
from canary.engine.upcoming import carry_since, parse_fail_on, upcoming_keys
from canary.reports.drift import drift, render_drift
from canary.reports.github import render_github
from canary.reports.html import render_html
from canary.reports.jsonio import load_json, to_json
from canary.reports.markdown import render_markdown
from canary.reports.text import render_grid, render_lines


def night(date: str = "2026-12-07 05:23 UTC", **rows: str):
    """trl over 1.0, 1.1, the next pre-release 1.2rc1 and main; `up` red on main only,
    `cand` red on the pre-release only, `old` red on 1.1 and main (released), `gone` red on
    1.0 only and on main (held on the newest release: main's red is upcoming again)."""
    grids = rows or {"up": "...F", "cand": "..F.", "old": ".FFF", "gone": "F..F", "ok": "...."}
    report = build({"trl": (["1.0", "1.1", "1.2rc1", "main"], grids)})
    info = report.upstreams["trl"]
    report.upstreams["trl"] = UpstreamInfo(
        versions=info.versions,
        branches=("main",),
        next=("1.2rc1",),
        matrix=info.matrix,
        lines=info.lines,
    )
    report.run["date"] = date
    return report


def test_a_red_only_ahead_of_the_newest_release_is_upcoming():
    assert upcoming_keys(night()) == {
        ("trl", "up", "main"),
        ("trl", "cand", "1.2rc1"),
        ("trl", "gone", "main"),
    }


def test_skips_and_errors_on_the_newest_release_are_stepped_over():
    report = night(up="Fs.F", err="FE.F", late="ss.F")
    assert upcoming_keys(report) == {("trl", "late", "main")}


def test_text_says_upcoming_apart_in_its_own_section():
    out = render_lines(night())
    lines = out.splitlines()
    at = lines.index("upcoming: red only ahead of the releases (a branch, the next pre-release)")
    ahead = lines[at + 1 :]
    assert any(line.startswith("UPCOMING trl::up[main] up is fail") for line in ahead)
    assert any(line.startswith("UPCOMING trl::cand[1.2rc1]") for line in ahead)
    assert any(line.startswith("FAIL  trl::old[1.1\u2013main]") for line in lines[:at])
    assert any(line.startswith("FAIL  trl::gone[1.0]") for line in lines[:at])
    assert lines[-1].startswith(
        "2 checks red (4 check x version results); 3 checks upcoming (3 check x version results)"
    )
    grid = render_grid(night(), 120, False)
    assert "upcoming: red only ahead" in grid and "UPCOMING trl::up[main]" in grid


def test_markdown_has_an_upcoming_table_apart_from_the_failing_one():
    out = render_markdown(night())
    failing, upcoming = out.split("## Failing")[1].split("## Upcoming")
    assert "`trl::old`" in failing and "`trl::up`" not in failing
    assert "`trl::up`" in upcoming and "`trl::cand`" in upcoming
    assert "`trl::old`" not in upcoming.split("##")[0]
    assert "3 checks upcoming" in out.splitlines()[2]


def test_junit_puts_upcoming_reds_in_a_suite_of_their_own():
    import xml.etree.ElementTree as ET

    from test_reports_junit import validate

    from canary.engine.outcomes import BrokenBy
    from canary.reports.junit import render_junit

    report = night()
    at = next(n for n, r in enumerate(report.results) if (r.check, r.version) == ("up", "main"))
    report.results[at] = dataclasses.replace(
        report.results[at],
        first_fail="main",
        last_pass="1.2rc1",
        broken_by=BrokenBy("1a2b3c4" + "0" * 33, "2026-07-15T12:00:00Z", "t", 41, "Drop it"),
    )
    root = ET.fromstring(render_junit(report).encode())
    validate(root)
    released, ahead = root.findall("testsuite")
    assert (released.get("name"), ahead.get("name")) == ("trl", "trl (upcoming)")
    assert [(p.get("name"), p.get("value")) for p in ahead.iter("property")] == [
        ("canary.kind", "upcoming")
    ]
    assert not list(released.iter("property"))
    names = {case.get("name") for case in ahead.iter("testcase")}
    assert names == {"up[main]", "cand[1.2rc1]", "gone[main]"}
    assert (ahead.get("tests"), ahead.get("failures")) == ("3", "3")
    assert released.get("failures") == "4"  # old on 1.1, 1.2rc1, main; gone on 1.0
    assert not names & {case.get("name") for case in released.iter("testcase")}
    failure = next(c for c in ahead.iter("testcase") if c.get("name") == "up[main]")[0]
    assert failure.get("type") == "upcoming" and failure.get("message").startswith("upcoming: ")
    assert "broken on trl main by 1a2b3c4 (#41 'Drop it'), 2026-07-15" in failure.text
    assert root.get("tests") == str(len(report.results)) and root.get("failures") == "7"


def test_html_has_an_upcoming_list():
    out = render_html(night())
    findings, upcoming = out.split('<section id="findings">')[1].split('<h2 id="upcoming">')
    assert "trl::old" in findings and "trl::up[main]" not in findings
    assert "data-upcoming>" in upcoming and "UPCOMING trl::up[main]" in upcoming


def test_annotations_title_upcoming_reds_apart():
    lines = render_github(night()).splitlines()
    assert any("title=canary upcoming trl%3A%3Aup[main]::" in line for line in lines)
    assert any("title=canary trl%3A%3Aold[1.1\u2013main]::" in line for line in lines)
    assert not any("title=canary upcoming trl%3A%3Aold" in line for line in lines)


def test_json_lists_upcoming_with_the_date_first_seen_and_reads_it_back():
    report = night()
    data = json.loads(to_json(report))
    assert data["upcoming"] == [
        {
            "upstream": "trl",
            "check": "up",
            "versions": ["main"],
            "detail": "up is fail",
            "since": "2026-12-07",
        },
        {
            "upstream": "trl",
            "check": "cand",
            "versions": ["1.2rc1"],
            "detail": "cand is fail",
            "since": "2026-12-07",
        },
        {
            "upstream": "trl",
            "check": "gone",
            "versions": ["main"],
            "detail": "gone is fail",
            "since": "2026-12-07",
        },
    ]
    later = night("2026-12-09 05:23 UTC")
    carry_since(later, load_json(to_json(report)))
    assert {e["check"]: e["since"] for e in json.loads(to_json(later))["upcoming"]} == {
        "up": "2026-12-07",
        "cand": "2026-12-07",
        "gone": "2026-12-07",
    }
    assert load_json(to_json(later)).since[("trl", "up")] == "2026-12-07"


def test_a_check_upcoming_tonight_is_dated_tonight():
    before = night("2026-12-06 05:23 UTC", up="....", ok="....")
    now = night("2026-12-07 05:23 UTC", up="...F", ok="....")
    carry_since(now, before)
    assert json.loads(to_json(now))["upcoming"][0]["since"] == "2026-12-07"


def test_the_nightly_drift_says_what_breaks_ahead_and_since_when():
    before = night("2026-12-05 05:23 UTC", up="...F", cand="....", ok="....")
    now = night("2026-12-07 05:23 UTC", up="...F", cand="..F.", ok="....")
    carry_since(now, before)
    found = drift(now, before)
    assert found.new_failures == []
    assert [(r.check, r.version) for r, _ in found.new_upcoming] == [("cand", "1.2rc1")]
    out = render_drift(found, "text")
    assert (
        "Upcoming: trl main breaks 1 check since 2026-12-05; "
        "trl 1.2rc1 breaks 1 check since 2026-12-07"
    ) in out
    assert "  new: trl::cand[1.2rc1] pass → fail: cand is fail" in out


@pytest.mark.parametrize(
    ("fail_on", "status"),
    [
        ("released,upcoming,error", 1),
        ("upcoming", 1),
        ("released", 0),
        ("error", 0),
    ],
)
def test_fail_on_names_the_kinds_of_red_that_exit_1(fail_on, status):
    report = night(up="...F", ok="....")
    assert exit_status(report, parse_fail_on(fail_on)) == status


def test_the_default_exit_policy_is_unchanged():
    assert exit_status(night(up="...F", ok="....")) == 1
    assert exit_status(night(up="....", ok="....")) == 0


def test_fail_on_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match="upcomming: expected a comma-separated list"):
        parse_fail_on("released,upcomming")
