"""`--format github`: workflow annotations at the check's line in its matrix."""

from __future__ import annotations

from test_reports_support import build, releases

from canary.engine.outcomes import Result, Status
from canary.reports.dispatch import default_format, render
from canary.reports.github import annotation_lines


def test_a_red_check_is_one_annotation_per_version_range_at_its_matrix_line():
    report = build({"trl": (releases(6), {"ok": "......", "gone": "..FFF.", "opt": ".W...."})})
    assert annotation_lines(report) == [
        "::error file=matrices/trl.yaml,line=15,title=canary trl%3A%3Agone[0.0.2\u20130.0.4]"
        "::fail: gone is fail",
        "::warning file=matrices/trl.yaml,line=20,title=canary trl%3A%3Aopt[0.0.1]"
        "::warn: opt is warn",
    ]


def test_messages_and_properties_are_escaped():
    report = build({"trl": (["1.0"], {"a": "F"})})
    report.results = [
        Result("trl", "a", "1.0", Status.FAIL, "100% broken\nsecond line, really: yes")
    ]
    (line,) = annotation_lines(report)
    assert line.endswith("::fail: 100%25 broken\\nsecond line, really: yes")  # one line
    assert "title=canary trl%3A%3Aa[1.0]" in line


def test_an_unreadable_source_is_one_annotation():
    report = build({"trl": (["main"], {})})
    report.results = [
        Result("trl", c, "main", Status.ERROR, "https://raw.githubusercontent.com/x: HTTP 503")
        for c in "abc"
    ]
    assert annotation_lines(report) == [
        "::error title=canary%3A a source was not read"
        "::trl[main] GitHub answered HTTP 503; 3 checks not run (https://raw.githubusercontent.com/x)"
    ]


def test_the_report_keeps_the_findings_in_a_group_and_ends_with_the_summary():
    """The findings quote upstream text: the runner's commands are stopped around them, with a
    token of their own each time."""
    report = build({"trl": (releases(2), {"a": "F."})})
    lines = render("github", report).splitlines()
    stop, token = lines[2].split("::")[1:3]
    assert (stop, len(token)) == ("stop-commands", len("canary-") + 32)
    assert lines[1:] == [
        "::group::canary: findings by check",
        f"::stop-commands::{token}",
        "FAIL  trl::a[0.0.0] a is fail (matrices/trl.yaml:10)",
        f"::{token}::",
        "::endgroup::",
        "1 check red (1 check x version result); 1 pass, 1 fail",
    ]
    assert render("github", report).splitlines()[2] != lines[2]


def test_github_is_the_default_under_github_actions(monkeypatch):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert default_format(None) == "github"
    assert default_format("report.txt") == "text"
    monkeypatch.delenv("GITHUB_ACTIONS")
    assert default_format(None) == "text"


def test_ten_errors_newest_breakage_first_then_one_notice_for_the_rest():
    versions = releases(20)
    # check-NN breaks NN releases before the newest: check-01 is the newest breakage
    rows = {f"check-{n:02}": "." * (20 - n) + "F" * n for n in range(1, 16)}
    lines = annotation_lines(build({"trl": (versions, rows)}))
    errors = [line for line in lines if line.startswith("::error")]
    titles = [line.split("title=canary trl%3A%3A")[1].split("[")[0] for line in errors]
    assert titles == [f"check-{n:02}" for n in range(1, 11)]
    assert lines[-1] == (
        "::notice title=canary%3A more findings::canary: 5 more findings in the job summary"
    )
    assert len(lines) == 11


def test_a_red_check_is_one_error_whatever_its_details():
    one = build({"trl": (releases(20), {"two": "." * 5 + "F" * 15})})
    one.results = [
        Result(r.upstream, r.check, r.version, r.status, f"{r.detail} {r.version < '0.0.9'}")
        if r.status is Status.FAIL
        else r
        for r in one.results
    ]
    (line,) = annotation_lines(one)
    assert "[0.0.5\u20130.1.9]" in line
    assert line.endswith("::fail: two is fail False (1 other detail in the job summary)")
