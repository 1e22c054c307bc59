"""`--format text`: grep-friendly lines in logs, the grid squeezed to the width on a TTY."""

from __future__ import annotations

import dataclasses
import html
import io
import json
import re

import pytest
from test_reports_support import build, releases

from canary.engine.outcomes import Result, RunReport, Status
from canary.reports.dispatch import render
from canary.reports.fitting import LINE_MAX
from canary.reports.text import human_size, terminal_style

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def sample(count: int = 150):
    versions = [*releases(count - 1), "main"]
    rows = {
        "disable-gradient-checkpointing": "F" * 40 + "." * (count - 40),
        "grpo-params": "s" * 20 + "." * 9 + "x" + "." * 70 + "F" * (count - 100),
    }
    return build(
        {"trl": (versions, rows), "peft": (["0.10.0", "0.11.0"], {"lora": "E."})},
        anchors={"trl": ("0.2.2", "0.7.1")},
    )


def test_plain_lines_one_per_notable_result_then_summary():
    report = build({"trl": (["1.0", "1.1", "1.2", "main"], {"a": ".F.s", "b": "xXWE"})})
    lines = render("text", report).splitlines()
    assert lines == [
        "FAIL  trl::a[1.1] a is fail (matrices/trl.yaml:10)",
        "XFAIL trl::b[1.0] b is xfail (matrices/trl.yaml:15)",
        "XPASS trl::b[1.1] b is xpass (matrices/trl.yaml:15)",
        "WARN  trl::b[1.2] b is warn (matrices/trl.yaml:15)",
        "ERROR trl::b[main] b is error (matrices/trl.yaml:15)",
        "2 checks red (2 check x version results); 2 pass, 1 fail, 1 skip, 1 xfail, 1 xpass, "
        "1 warn, 1 error",
    ]


def test_plain_lines_have_no_escape_codes_even_when_color_is_asked_without_width():
    assert "\x1b" not in render("text", sample(), color=True)


def test_empty_run_says_so():
    assert render("text", build({})) == "no results\n"
    grid = render("text", build({}), width=80).splitlines()
    assert grid[-1] == "no results (0.5s, 7 requests, 1.2 kB downloaded)"


def test_the_summary_names_the_cache_and_how_to_trim_it():
    report = build({"trl": (["1.0"], {"a": "."})})
    report.run["cache"] = "/tmp/canary-cache"
    assert render("text", report).splitlines()[-1] == "1 pass"
    summary = " ".join(render("text", report, width=400).splitlines()[-1:])
    assert summary == (
        "1 pass (0.5s, 7 requests, 1.2 kB downloaded; cache: /tmp/canary-cache "
        "(`canary cache info` sizes it, `canary cache prune --older-than DAYS` trims it))"
    )
    assert "cache hits" not in render("markdown", report)


def test_grid_fits_the_width_and_keeps_the_break_point_visible():
    for width in (40, 60, 80, 120, 200):
        out = render("text", sample(), width=width, color=True)
        plain = ANSI.sub("", out)
        lines = plain.splitlines()
        grid_lines = lines[:-1]  # the summary line may wrap
        assert max(map(len, grid_lines)) <= width, (width, plain)
        row = next(line for line in lines if line.startswith("  disab"))
        strip = row.split()[1]
        # 40 fails then passes: the squeezed strip is F's then dots, in that order
        assert re.fullmatch(r"F+\.+", strip), (width, row)
        assert " per column" in out or width < 60  # the header is clipped below that


def test_grid_one_column_per_version_when_there_is_room():
    out = render("text", sample(), width=300)
    row = next(line for line in out.splitlines() if line.startswith("  grpo-params"))
    strip = row.split()[1]
    assert strip == "s" * 20 + "." * 9 + "x" + "." * 70 + "F" * 50
    assert row.endswith("first fail 0.10.0, last pass 0.9.9")
    assert " per column" not in out


def test_grid_squeezed_column_shows_the_worst_status_it_covers():
    # 8 versions into 4 columns: each column covers 2 versions
    report = build({"u": (releases(8), {"c": ".F..xs.E"})})
    out = render("text", report, width=len("  c ") + 4)
    row = next(line for line in out.splitlines() if line.startswith("  c "))
    assert row == "  c F.xE"


def test_grid_lists_grouped_details_with_version_spans():
    out = ANSI.sub("", render("text", sample(), width=200, color=True))
    assert "FAIL  trl::grpo-params[0.10.0\u2013main] grpo-params is fail" in out
    assert "XFAIL trl::grpo-params[0.2.9] grpo-params is xfail" in out
    assert "ERROR peft::lora[0.10.0] lora is error" in out


def test_grid_colors_statuses_and_underlines_anchors():
    out = render("text", sample(), width=300, color=True)
    assert "\x1b[31;1mF" in out and "\x1b[32m." in out and "\x1b[35;1mE" in out
    assert "\x1b[32;4m." in out  # anchor column (0.2.2 passes grpo-params)
    assert "\x1b" not in render("text", sample(), width=300, color=False)


def test_terminal_style_only_on_a_tty(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setenv("COLUMNS", "97")
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert terminal_style(io.StringIO()) == (None, False)
    assert terminal_style(Tty()) == (97, True)
    monkeypatch.setenv("NO_COLOR", "1")
    assert terminal_style(Tty()) == (97, False)


def test_plain_lines_group_versions_into_ranges_and_verbose_lists_each():
    report = build({"trl": (releases(6), {"a": "..FFF.", "b": "EE...."})})
    assert render("text", report).splitlines() == [
        "FAIL  trl::a[0.0.2\u20130.0.4] a is fail (matrices/trl.yaml:10)",
        "ERROR trl::b[0.0.0\u20130.0.1] b is error (matrices/trl.yaml:15)",
        "2 checks red (5 check x version results); 7 pass, 3 fail, 2 error",
    ]
    verbose = render("text", report, verbose=True).splitlines()
    assert verbose[:6] == [
        "PASS  trl::a[0.0.0]",
        "PASS  trl::a[0.0.1]",
        "FAIL  trl::a[0.0.2] a is fail",
        "FAIL  trl::a[0.0.3] a is fail",
        "FAIL  trl::a[0.0.4] a is fail",
        "PASS  trl::a[0.0.5]",
    ]
    assert len(verbose) == 13  # every check x version, then the summary


def long_failure() -> RunReport:
    """trl::a fails on 1.1 and 1.2 with a 400-character detail and a long why."""
    report = build({"trl": (["1.0", "1.1", "1.2"], {"a": ".FF"})})
    detail = (
        "params of GRPOTrainer.compute_loss are ("
        + ", ".join(f"argument_{n}" for n in range(40))
        + "); missing num_items_in_batch"
    )
    why = "unsloth's compute_loss wrapper forwards num_items_in_batch " * 4
    report.results = [
        dataclasses.replace(r, detail=detail, why=why.strip()) if r.status is Status.FAIL else r
        for r in report.results
    ]
    return report


def test_a_finding_in_a_log_is_one_short_line_and_the_why_is_in_verbose():
    """Issue 29 item 4: status, id[versions], detail and the matrix's file:line in one line
    of at most 200 characters; the why in -v (and JSON, HTML: below)."""
    report = long_failure()
    finding, summary = render("text", report).splitlines()
    assert len(finding) <= LINE_MAX
    assert finding.startswith("FAIL  trl::a[1.1\u20131.2] params of GRPOTrainer.compute_loss are (")
    assert finding.endswith(" … (matrices/trl.yaml:10)")
    assert "unsloth" not in finding
    assert summary == "1 check red (2 check x version results); 1 pass, 2 fail"
    verbose = render("text", report, verbose=True).splitlines()
    assert verbose[1].startswith("FAIL  trl::a[1.1] params of GRPOTrainer")
    assert verbose[1].endswith("missing num_items_in_batch")  # -v says all of it
    assert verbose[2] == "      why: " + report.results[1].why
    assert verbose[3].startswith("FAIL  trl::a[1.2] ")
    on_tty = render("text", report, width=80, verbose=True).splitlines()
    assert on_tty == verbose  # -v is every check x version on a terminal too
    wrapped = " ".join(line.strip() for line in render("text", report, width=80).splitlines())
    assert "missing num_items_in_batch (matrices/trl.yaml:10)" in wrapped  # never cut


@pytest.mark.parametrize("fmt", ["json", "markdown", "junit", "github", "html"])
def test_the_why_is_in_every_format_but_the_logs_line(fmt):
    report = long_failure()
    why = report.results[1].why
    out = render(fmt, report)
    if fmt == "json":
        failed = [r for r in json.loads(out)["results"] if r["status"] == "fail"]
        assert [r["why"] for r in failed] == [why, why]
        assert all(why not in r["detail"] for r in failed)
    elif fmt == "github":
        annotation = next(line for line in out.splitlines() if line.startswith("::error "))
        assert annotation.endswith(f"%0Awhy: {why}")  # on the annotation's next line
        assert all(len(line) <= LINE_MAX for line in out.splitlines()[2:-1])  # the log group
    else:
        assert f"why: {html.escape(why, quote=fmt == 'html')}" in out


def test_a_findings_line_cuts_long_version_lists_and_urls_to_fit():
    versions = releases(120)
    report = build({"trl": (versions, {"a": ".F" * 60})})  # sixty one-version spans
    (finding, _) = render("text", report).splitlines()
    assert len(finding) <= LINE_MAX
    assert finding.startswith("FAIL  trl::a[0.0.1, 0.0.3") and "…" in finding
    assert finding.endswith("a is fail (matrices/trl.yaml:10)")
    long_url = UNREACHABLE.replace("main/{up}/x.py", "main/{up}/" + "deep/" * 40 + "x.py")
    report = build({"trl": (["1.0"], {"a": "F"})})
    report.results += [
        Result("trl", "b", "main", Status.ERROR, long_url.format(up="trl")),
        Result("trl", "c", "main", Status.ERROR, long_url.format(up="trl")),
    ]
    fault = render("text", report).splitlines()[1]
    assert len(fault) <= LINE_MAX
    assert fault.startswith("ERROR trl[main] GitHub unreachable (name resolution failed); ")
    assert "(https://raw.githubusercontent.com/o/trl/" in fault and fault.endswith("/x.py)")


@pytest.mark.parametrize("width", [60, 80, 120])
def test_grid_ids_sharing_a_long_prefix_stay_apart(width):
    prefix = "unsloth-zoo-patch-grpo-trainer-compute-loss-"
    checks = [f"{prefix}{end}" for end in ("logps", "logits", "loss-type")]
    report = build({"trl": (releases(20), dict.fromkeys(checks, "." * 20))})
    rows = [row for row in render("text", report, width=width).splitlines() if "unsloth" in row]
    labels = [row.split()[0] for row in rows]
    assert len(labels) == 3 and len(set(labels)) == 3, rows
    assert all(label.startswith("unsloth") for label in labels)
    assert all(len(row) <= width for row in rows)


@pytest.mark.parametrize("width", [30, 40])
def test_grid_ids_differing_only_in_their_middle_are_wrapped_whole(width):
    """Issue 29 item 5: never rows that read the same; shortened in the middle at 40 columns
    these three read `unsloth-zoo-patch-…ss-logps-and-more` each, so each id is written whole,
    wrapped at its hyphens, above its row of glyphs."""
    checks = [f"unsloth-zoo-patch-grpo-{m}-trainer-compute-loss-logps" for m in ("a", "bb", "c")]
    report = build({"trl": (releases(20), dict.fromkeys(checks, "." * 19 + "F"))})
    lines = render("text", report, width=width).splitlines()
    assert all(len(line) <= width for line in lines)
    block = lines[1 : lines.index("")]
    labels = "".join(line.strip() for line in block if not line.strip().startswith("."))
    assert labels == "".join(checks)
    assert [line.strip() for line in block if line.strip().startswith(".")] == ["." * 19 + "F"] * 3


UNREACHABLE = (
    "https://raw.githubusercontent.com/o/{up}/main/{up}/x.py: ConnectionError: "
    "HTTPSConnectionPool(host='raw.githubusercontent.com', port=443): Max retries exceeded "
    '(Caused by NameResolutionError("HTTPSConnection(...)")) (after 5 attempts)'
)


def unreadable(upstream: str, checks: int, version: str = "main") -> list[Result]:
    detail = UNREACHABLE.format(up=upstream)
    return [
        Result(
            upstream,
            f"c{n}",
            version,
            Status.ERROR,
            f"gated check on main: {detail}" * (n % 2) or detail,
        )
        for n in range(checks)
    ]


def test_an_unreadable_source_is_one_line_with_a_short_cause_and_a_count():
    report = build({"trl": (["1.0", "main"], {"a": "F.", "b": ".."})})
    report.results = [r for r in report.results if r.version != "main"]
    report.results += unreadable("trl", 3) + unreadable("peft", 2)
    lines = render("text", report).splitlines()
    assert lines == [
        "FAIL  trl::a[1.0] a is fail (matrices/trl.yaml:10)",
        "ERROR trl[main], peft[main] GitHub unreachable (name resolution failed); 5 checks not run"
        " (https://raw.githubusercontent.com/o/trl/main/trl/x.py and 1 other URL)",
        "6 checks red (6 check x version results); 1 pass, 1 fail, 5 error",
    ]


def test_offline_with_an_empty_cache_is_one_line():
    versions = releases(4)
    report = build({"trl": (versions, {})})
    report.results = [
        Result("trl", check, v, Status.ERROR, f"offline: listing of trl-{v}.whl not in cache")
        for v in versions
        for check in ("a", "b")
    ]
    assert render("text", report) == (
        "ERROR trl[0.0.0\u20130.0.3] not in the cache (offline; run once online to fill it); "
        "8 checks not run\n"
    )


def test_a_narrow_terminal_wraps_the_reason_and_never_cuts_it():
    detail = "GRPOTrainer has no method _get_per_token_logps (has _get_per_token_logps_and_x)"
    report = build({"trl": (releases(3), {"a": "FF."})})
    report.results = [
        Result(r.upstream, r.check, r.version, r.status, detail if r.detail else "")
        for r in report.results
    ]
    lines = render("text", report, width=40).splitlines()
    assert all(len(line) <= 40 for line in lines)
    start = next(i for i, line in enumerate(lines) if line.startswith("FAIL"))
    joined = " ".join(line.strip() for line in lines[start : start + 4])
    assert detail in joined
    assert "…" not in joined


@pytest.mark.parametrize(
    ("count", "text"),
    [(0, "0 B"), (999, "999 B"), (1234, "1.2 kB"), (84_512_000, "84.5 MB"), (3.2e9, "3.2 GB")],
)
def test_sizes_read_like_pip_does(count, text):
    assert human_size(count) == text


def tall(checks: int = 40) -> RunReport:
    """trl with more checks than a screen has lines: one red, one warning, the rest holding."""
    rows = {f"check-{i:02}": "." * 30 for i in range(checks)}
    rows["check-09"] = "." * 25 + "W" * 5
    rows["check-17"] = "." * 20 + "F" * 10
    return build({"trl": (releases(30), rows), "peft": (releases(3), {"lora": "..."})})


def test_a_grid_taller_than_the_screen_puts_the_findings_first_then_the_red_rows():
    lines = render("text", tall(), width=100, height=30).splitlines()
    assert lines[:3] == [
        "FAIL  trl::check-17[0.2.0\u20130.2.9] check-17 is fail (matrices/trl.yaml:95)",
        "WARN  trl::check-09[0.2.5\u20130.2.9] check-09 is warn (matrices/trl.yaml:55)",
        "",
    ]
    assert lines[3] == "trl: the 1 red of 40 checks x 30 versions (0.0.0 \u2026 0.2.9)"
    assert lines[4].startswith("  check-17 " + "." * 20 + "F" * 10)
    assert "peft: no red check of 1 check" in lines
    note = " ".join(lines[lines.index("peft: no red check of 1 check") + 2 :][:2])
    assert note.startswith("the red rows only: the whole grid is taller than the screen (`-v`")
    assert not any(line.lstrip().startswith("check-0") for line in lines)
    assert len(lines) < 30


def test_a_grid_that_fits_the_screen_comes_first_with_every_row():
    lines = render("text", tall(), width=100, height=60).splitlines()
    assert lines[0] == "trl: 40 checks x 30 versions (0.0.0 \u2026 0.2.9)"
    assert sum(line.startswith("  check-") for line in lines) == 40
    at = [i for i, line in enumerate(lines) if line.startswith(("FAIL", "WARN"))]
    assert [lines[i][:5] for i in at] == ["WARN ", "FAIL "]  # check order, under the grid
    assert render("text", tall(), width=100) == render("text", tall(), width=100, height=None)
