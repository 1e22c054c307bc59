"""SPEC's JSON object: exact shape, round trip, and reading other producers' files."""

from __future__ import annotations

import json

import pytest
from test_reports_support import build

from canary.engine.outcomes import Result, RunReport, Status, UpstreamInfo
from canary.reports.dispatch import render
from canary.reports.jsonio import ReportError, load_json, to_json


def sample() -> RunReport:
    return build(
        {
            "trl": (["0.18.2", "0.19.0", "1.0.0", "main"], {"a": "Fx..", "b": "sEW."}),
            "peft": (["0.10.0"], {"lora": "X"}),
        },
        anchors={"trl": ("1.0.0",)},
        broken={"trl": ("0.19.0",)},
    )


def test_json_has_exactly_spec_keys_and_all_statuses():
    data = json.loads(render("json", sample()))
    assert list(data) == ["results", "summary", "stats", "upstreams", "upcoming"]
    assert data["upcoming"] == []  # a is red on 0.18.2, b warns on 1.0.0: nothing ahead
    assert data["summary"] == {
        "pass": 3,
        "fail": 1,
        "skip": 1,
        "xfail": 1,
        "xpass": 1,
        "warn": 1,
        "error": 1,
    }
    assert data["stats"] == {
        "requests": 7,
        "bytes_downloaded": 1234,
        "cache_hits": 2,
        "seconds": 0.5,
    }
    assert data["results"][0] == {
        "upstream": "trl",
        "check": "a",
        "version": "0.18.2",
        "status": "fail",
        "detail": "a is fail",
        "source": "index",
    }
    assert data["upstreams"]["trl"] == {
        "versions": ["0.18.2", "0.19.0", "1.0.0", "main"],
        "anchors": ["1.0.0"],
        "broken": ["0.19.0"],
        "branches": ["main"],
        "matrix": "matrices/trl.yaml",
        "lines": {"a": 10, "b": 15},
    }


def test_json_stats_fill_missing_counters_with_zero():
    report = RunReport(results=[], stats={"requests": 3}, upstreams={})
    data = json.loads(to_json(report))
    assert data["stats"] == {"requests": 3, "bytes_downloaded": 0, "cache_hits": 0, "seconds": 0.0}
    assert set(data["summary"].values()) == {0}


def test_round_trip_is_lossless():
    report = sample()
    assert load_json(to_json(report)) == report


def test_non_ascii_and_control_characters_survive():
    result = Result("trl", "a", "1.0", Status.FAIL, 'ünïcode \x00 "quoted"\nline', "index")
    report = RunReport([result], {}, {"trl": UpstreamInfo(("1.0",))})
    assert load_json(to_json(report)).results == [result]


def test_without_upstreams_versions_are_ordered_by_pep440_branches_last():
    data = json.loads(to_json(sample()))
    del data["upstreams"]
    data["results"].reverse()
    report = load_json(json.dumps(data))
    assert report.upstreams["trl"] == UpstreamInfo(
        versions=("0.18.2", "0.19.0", "1.0.0", "main"), branches=("main",)
    )
    assert report.upstreams["peft"].versions == ("0.10.0",)
    assert report.stats["seconds"] == 0.5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not JSON"),
        ("[]", "not a JSON object"),
        ("{}", 'no "results" list'),
        ('{"results": [1]}', "results[0] is not an object of strings"),
        (
            '{"results": [{"upstream": "a", "check": "b", "version": 1.0, "status": "pass"}]}',
            "results[0] is not an object of strings",
        ),
        ('{"results": [{"upstream": "a", "check": "b", "status": "pass"}]}', "results[0]: missing"),
        (
            '{"results": [{"upstream": "a", "check": "b", "version": "1", "status": "ok"}]}',
            "results[0]: missing or bad",
        ),
        ('{"results": [], "stats": {"requests": "many"}}', '"stats" is not an object of numbers'),
        ('{"results": [], "upstreams": []}', '"upstreams" is not an object'),
        ('{"results": [], "upstreams": {"trl": {"versions": "1.0"}}}', 'upstreams["trl"]'),
        (
            '{"results": [], "upstreams": {"trl": {"commits": {"main": "HEAD~1; rm -rf"}}}}',
            'upstreams["trl"]["commits"] is not an object of commit shas',
        ),
        (
            '{"results": [], "upstreams": {"trl": {"commits": ["' + "0" * 40 + '"]}}}',
            'upstreams["trl"]["commits"] is not an object of commit shas',
        ),
    ],
)
def test_malformed_input_is_a_clear_report_error(text, message):
    with pytest.raises(ReportError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_json(text)
