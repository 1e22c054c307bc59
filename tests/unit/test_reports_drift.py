"""Drift since a baseline, and `canary report` over saved JSON files (exit codes included)."""

from __future__ import annotations

import io
import json

import pytest
from test_reports_support import build, releases, unreadable_main

from canary.reports.command import report_main
from canary.reports.drift import drift, render_drift
from canary.reports.jsonio import load_json, to_json
from canary.reports.markdown import SUMMARY_LIMIT

DASH = "\u2013"


def baseline():
    return build({"trl": (["1.0", "1.1", "1.2"], {"a": "...", "b": "FF.", "c": ".E."})})


def tonight():
    # a breaks at 1.2 and on the new 1.3 and main; b fixed at 1.0; c's error gone; d is new
    return build(
        {
            "trl": (
                ["1.1", "1.2", "1.3", "main"],
                {"a": ".FFF", "b": "F...", "c": "..s.", "d": "F..."},
            )
        }
    )


def test_drift_lists_new_failures_fixes_and_versions():
    found = drift(tonight(), baseline())
    assert [
        (r.check, r.version, old.status.value if old else None) for r, old in found.new_failures
    ] == [
        ("a", "1.2", "pass"),
        ("a", "1.3", None),
        ("a", "main", None),
        ("d", "1.1", None),
    ]
    assert [(r.check, r.version, old.status.value) for r, old in found.fixed] == [
        ("c", "1.1", "error"),
    ]
    assert found.new_versions == {"trl": ["1.3", "main"]}
    assert found.gone_versions == {"trl": ["1.0"]}


def test_still_failing_is_not_new():
    found = drift(tonight(), tonight())
    assert found.new_failures == [] and found.fixed == []
    assert found.new_versions == {} and found.gone_versions == {}


def test_render_drift_markdown_groups_versions_into_spans():
    out = render_drift(drift(tonight(), baseline()), "markdown")
    assert out.splitlines()[0] == "## New since the baseline"
    assert "**Newly failing**: 2 checks (4 check x version results)" in out
    assert "- ` trl::a[1.2] pass → fail: a is fail `" in out
    assert f"- ` trl::a[1.3{DASH}main] absent → fail: a is fail `" in out
    assert "**Fixed**: 1 check (1 check x version result)" in out
    assert "- ` trl::c[1.1] error → pass: c is error `" in out
    assert "**New versions**: 2" in out and "- ` trl: 1.3, main `" in out
    assert "**Gone versions**: 1" in out and "- ` trl: 1.0 `" in out


def test_render_drift_text_says_none_explicitly():
    out = render_drift(drift(baseline(), baseline()), "text")
    assert out == (
        "canary: changes since the baseline\n"
        "Newly failing: none\nUpcoming: none\nFixed: none\nNew versions: none\n"
        "Gone versions: none\n"
    )


@pytest.fixture
def saved(tmp_path):
    paths = {}
    for name, report in (("new", tonight()), ("old", baseline())):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(to_json(report), encoding="utf-8")
    return paths


def test_report_with_baseline_exits_1_on_new_failures(saved, capsys):
    assert report_main([str(saved["new"])], "markdown", None, str(saved["old"])) == 1
    out = capsys.readouterr().out
    assert out.index("## New since the baseline") < out.index("## trl")
    assert "**Newly failing**: 2 checks (4 check x version results)" in out


def test_report_with_baseline_exits_0_when_nothing_is_new(saved, capsys):
    assert report_main([str(saved["old"])], "text", None, str(saved["old"])) == 0
    assert "Newly failing: none" in capsys.readouterr().out


def test_report_without_baseline_exits_like_check(saved, tmp_path, capsys):
    assert report_main([str(saved["new"])], "text", None, None) == 1
    assert "FAIL  trl::a[1.2\u2013main] a is fail" in capsys.readouterr().out
    green = tmp_path / "green.json"
    green.write_text(to_json(build({"trl": (["1.0"], {"a": "."})})), encoding="utf-8")
    assert report_main([str(green)], "text", None, None) == 0
    assert capsys.readouterr().out == "1 pass\n"


def test_report_other_formats_to_file_with_drift_on_stderr(saved, tmp_path, capsys):
    target = tmp_path / "out" / "report.xml"  # its folder is created
    assert report_main([str(saved["new"])], "junit", str(target), str(saved["old"])) == 1
    assert target.read_text(encoding="utf-8").startswith("<?xml")
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0].startswith("3 checks red (5 check x version results); ")
    assert captured.out.splitlines()[1] == f"wrote {target}"
    assert "Newly failing: 2 checks (4 check x version results)" in captured.err


def test_report_merges_several_results(tmp_path, capsys):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(to_json(build({"trl": (["1.0"], {"a": "."})})), encoding="utf-8")
    second.write_text(to_json(build({"peft": (["2.0"], {"b": "F"})})), encoding="utf-8")
    merged = tmp_path / "merged.json"
    assert report_main([str(first), str(second)], "json", str(merged), None) == 1
    data = json.loads(merged.read_text(encoding="utf-8"))
    assert data["summary"]["pass"] == 1 and data["summary"]["fail"] == 1
    assert data["stats"]["requests"] == 14 and data["stats"]["seconds"] == 1.0
    assert list(data["upstreams"]) == ["trl", "peft"]
    assert load_json(merged.read_text(encoding="utf-8")).results[1].upstream == "peft"


def test_report_reads_stdin(saved, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(saved["old"].read_text(encoding="utf-8")))
    assert report_main(["-"], "text", None, None) == 1
    assert "FAIL  trl::b[1.0\u20131.1] b is fail" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read {path}: No such file or directory"),
        (b"\xff\xfe", "cannot read {path}: not UTF-8 text"),
        (b"{not json", "{path}: not JSON"),
        (b'{"results": [{"upstream": "x"}]}', "{path}: results[0]: missing or bad 'check'"),
    ],
)
def test_unreadable_input_exits_2_with_a_clear_message(tmp_path, capsys, content, message):
    path = tmp_path / "result.json"
    if content is not None:
        path.write_bytes(content)
    assert report_main([str(path)], "markdown", None, None) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"canary report: {message.format(path=path)}")
    assert captured.err.count("\n") == 1  # one line, no traceback


def test_unreadable_baseline_and_bad_format_exit_2(saved, tmp_path, capsys):
    assert report_main([str(saved["new"])], "text", None, str(tmp_path / "gone.json")) == 2
    assert "gone.json: No such file or directory" in capsys.readouterr().err
    assert report_main([str(saved["new"])], "pdf", None, None) == 2
    assert "unknown format 'pdf'" in capsys.readouterr().err


def test_unwritable_output_exits_2(saved, tmp_path, capsys):
    (tmp_path / "no").write_text("a file, not a folder")
    assert report_main([str(saved["new"])], "html", str(tmp_path / "no" / "x.html"), None) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_json_with_a_baseline_carries_the_drift(saved, tmp_path, capsys):
    out = tmp_path / "drift.json"
    assert report_main([str(saved["new"])], "json", str(out), str(saved["old"])) == 1
    data = json.loads(out.read_text(encoding="utf-8"))
    found = drift(load_json(saved["new"].read_text()), load_json(saved["old"].read_text()))
    assert len(data["drift"]["new_red"]) == len(found.new_failures) == 4
    assert len(data["drift"]["recovered"]) == len(found.fixed)
    first = data["drift"]["new_red"][0]
    assert set(first) == {"upstream", "check", "version", "status", "detail", "source", "was"}
    assert first["status"] in ("fail", "error")
    assert len(load_json(out.read_text(encoding="utf-8")).results) == len(found_results(saved))


def found_results(saved) -> list:
    return load_json(saved["new"].read_text(encoding="utf-8")).results


def test_two_files_never_count_a_cell_twice(tmp_path, capsys):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(to_json(build({"trl": (["1.0", "1.1"], {"a": "FF"})})), encoding="utf-8")
    second.write_text(to_json(build({"trl": (["1.1"], {"a": "."})})), encoding="utf-8")
    merged = tmp_path / "merged.json"
    assert report_main([str(first), str(second)], "json", str(merged), None) == 1
    data = json.loads(merged.read_text(encoding="utf-8"))
    assert [(r["version"], r["status"]) for r in data["results"]] == [
        ("1.0", "fail"),
        ("1.1", "pass"),
    ]
    assert data["summary"]["fail"] == 1 and data["summary"]["pass"] == 1
    assert "1 check x version results are in more than one file" in capsys.readouterr().err


def test_report_markdown_with_drift_stays_under_the_summary_limit(tmp_path, capsys):
    versions = releases(150)
    rows = {f"check-{i:03}": "F" * 150 for i in range(120)}
    new = build({"big": (versions, rows)})
    # a detail per cell (the version in it) defeats grouping: drift alone is over 1 MiB
    new.results = [r.__class__(r.upstream, r.check, r.version, r.status,
                               f"{r.check} gone in {r.version} " + "x" * 40, "index")
                   for r in new.results]  # fmt: skip
    old = build({"big": (versions, {name: "." * 150 for name in rows})})
    paths = []
    for name, report in (("new", new), ("old", old)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(to_json(report), encoding="utf-8")
    out = tmp_path / "summary.md"
    assert report_main([str(paths[0])], "markdown", str(out), str(paths[1])) == 1
    text = out.read_text(encoding="utf-8")
    assert len(text.encode()) <= SUMMARY_LIMIT
    assert text.startswith(
        "## New since the baseline\n\n**Newly failing**: 120 checks (18000 "
        "check x version results)\n"
    )
    assert "**Truncated**" in text


def test_a_source_not_read_tonight_is_one_line_per_cause_in_what_changed():
    """Issue 29 item 3: the nightly's issue lists what changed; a source that could not be
    read is its cause, the checks it left unjudged and the URL that failed, said once."""
    old = build({"trl": (["1.0", "main"], {"a": ".."})})
    found = drift(unreadable_main(386), old)
    for fmt in ("markdown", "text"):
        out = render_drift(found, fmt)
        assert "HTTPSConnectionPool" not in out
        assert out.count("GitHub unreachable (name resolution failed); 386 checks not run") == 1
        assert "(https://raw.githubusercontent.com/o/trl/main/trl/x.py)" in out
        assert "387 checks (387 check x version results)" in out  # a, and the 386 not read
