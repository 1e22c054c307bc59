"""Range compression and the grid model that every report format draws from."""

from __future__ import annotations

from test_reports_support import build, releases, row_results

from canary.engine.outcomes import Status
from canary.reports.grid import (
    build_grids,
    first_failing,
    last_passing,
    order_versions,
    runs,
    spans,
    spans_text,
)

V = releases(12)


def compressed(glyphs: str, versions: list[str] = V) -> list[tuple[str, str, str]]:
    cells = row_results("up", "c", versions[: len(glyphs)], glyphs)
    return [(run.status.value, run.first, run.last) for run in runs(cells)]


def test_order_versions_pep440_then_branches_in_met_order():
    labels = ["main", "1.10.0", "1.9.0", "1.0.0rc1", "dev", "1.0.0", "1.9.0", "0.9"]
    assert order_versions(labels) == ["0.9", "1.0.0rc1", "1.0.0", "1.9.0", "1.10.0", "main", "dev"]


def test_runs_simple_break_point():
    assert compressed("....FFFF") == [("pass", "0.0.0", "0.0.3"), ("fail", "0.0.4", "0.0.7")]


def test_runs_skips_and_xfails_in_the_middle_split_runs():
    assert compressed("..s..x..") == [
        ("pass", "0.0.0", "0.0.1"),
        ("skip", "0.0.2", "0.0.2"),
        ("pass", "0.0.3", "0.0.4"),
        ("xfail", "0.0.5", "0.0.5"),
        ("pass", "0.0.6", "0.0.7"),
    ]


def test_runs_non_monotone_pass_fail():
    assert compressed(".F.FF..F") == [
        ("pass", "0.0.0", "0.0.0"),
        ("fail", "0.0.1", "0.0.1"),
        ("pass", "0.0.2", "0.0.2"),
        ("fail", "0.0.3", "0.0.4"),
        ("pass", "0.0.5", "0.0.6"),
        ("fail", "0.0.7", "0.0.7"),
    ]


def test_runs_missing_cells_are_left_out_not_a_run():
    # a gap (no result) joins the neighbours: the row is what was checked
    assert compressed("..  ..FF") == [("pass", "0.0.0", "0.0.5"), ("fail", "0.0.6", "0.0.7")]


def test_runs_of_empty_row():
    assert runs([]) == []


def test_first_failing_and_last_passing_on_odd_rows():
    def ends(glyphs: str) -> tuple[str | None, str | None]:
        cells = row_results("up", "c", V[: len(glyphs)], glyphs)
        return first_failing(cells), last_passing(cells)

    assert ends("....FFFF") == ("0.0.4", "0.0.3")
    assert ends("FFFF....") == ("0.0.0", "0.0.7")
    assert ends("ss.x.F.F") == ("0.0.5", "0.0.6")  # xfail is excused, not failing
    assert ends("..W.") == ("0.0.2", "0.0.3")  # warn: an info check that failed
    assert ends("EEEE") == (None, None)  # error: unknown either way
    assert ends("sXsx") == (None, "0.0.1")  # xpass: the contract holds
    assert ends("ssss") == (None, None)


def test_spans_contiguous_in_order_unknown_last():
    order = ["1.0", "1.1", "1.2", "2.0", "2.1", "main"]
    assert spans(["1.1", "1.0", "2.0", "2.1", "main"], order) == [
        ("1.0", "1.1"),
        ("2.0", "main"),
    ]
    assert spans(["3.0", "1.2", "feature"], order) == [
        ("1.2", "1.2"),
        ("3.0", "3.0"),
        ("feature", "feature"),
    ]
    assert spans_text(["1.0", "1.2", "1.1"], order, mark=lambda v: f"*{v}*") == "*1.0*\u2013*1.2*"


def test_build_grids_orders_versions_from_info_then_extras():
    report = build({"trl": (["1.0", "1.1", "main"], {"a": "..F", "b": "s.."})})
    extra = row_results("trl", "a", ["2.0", "0.5", "dev"], "FF.")
    report.results += extra
    (grid,) = build_grids(report)
    assert grid.checks == ["a", "b"]
    assert grid.versions == ["1.0", "1.1", "main", "0.5", "2.0", "dev"]
    assert [c.version for c in grid.row("b")] == ["1.0", "1.1", "main"]
    assert grid.cells["a", "main"].status is Status.FAIL


def test_build_grids_keeps_upstreams_without_info_and_their_pep440_order():
    report = build({"trl": (["1.0"], {"a": "."})})
    report.results += row_results("peft", "x", ["main", "0.10.0", "0.9.0"], "F..")
    grids = build_grids(report)
    assert [g.name for g in grids] == ["trl", "peft"]
    assert grids[1].versions == ["0.9.0", "0.10.0", "main"]
