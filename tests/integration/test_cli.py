"""`canary check` end to end on a local source: exit codes, JSON shape, text lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paths import FIXTURES

from canary.cli.main import main

CHECKOUT = FIXTURES / "checkout"


def write_matrix(tmp_path: Path, checks: str) -> Path:
    path = tmp_path / "fakeup.yaml"
    path.write_text(f"upstream: fakeup\nsrc: src\nchecks:\n{checks}")
    return path


def test_all_pass_exits_0_and_prints_summary(tmp_path, capsys):
    matrix = write_matrix(tmp_path, "  - {id: pkg, module: fakeup.pkg}\n")
    assert main(["check", str(matrix), "--source", str(CHECKOUT)]) == 0
    assert capsys.readouterr().out == "1 pass\n"


def test_fail_exits_1_with_one_line_per_non_pass(tmp_path, capsys):
    matrix = write_matrix(
        tmp_path,
        "  - {id: pkg, module: fakeup.pkg}\n"
        "  - {id: gone, module: fakeup.gone}\n"
        "  - {id: opt, module: fakeup.gone, severity: info}\n",
    )
    assert main(["check", str(matrix), "--source", str(CHECKOUT), "--versions", "3.0.0"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"FAIL  fakeup::gone[3.0.0] module fakeup.gone not found ({matrix}:5)",
        f"WARN  fakeup::opt[3.0.0] module fakeup.gone not found ({matrix}:6)",
        "1 check red (1 check x version result); 1 pass, 1 fail, 1 warn",
    ]


def test_json_is_the_spec_object(tmp_path, capsys):
    matrix = write_matrix(tmp_path, "  - {id: gone, module: fakeup.gone}\n")
    out = tmp_path / "r.json"
    args = ["check", str(matrix), "--source", str(CHECKOUT), "--format", "json"]
    assert main([*args, "--output", str(out)]) == 1
    data = json.loads(out.read_text())
    assert data["results"] == [
        {
            "upstream": "fakeup",
            "check": "gone",
            "version": "2.1.0.dev0",
            "status": "fail",
            "detail": "module fakeup.gone not found",
            "source": "local",
        }
    ]
    assert data["summary"] == {
        "pass": 0,
        "fail": 1,
        "skip": 0,
        "xfail": 0,
        "xpass": 0,
        "warn": 0,
        "error": 0,
    }
    assert set(data["stats"]) >= {"requests", "bytes_downloaded", "cache_hits", "seconds"}
    assert data["stats"]["requests"] == 0


def test_error_exits_1(tmp_path):
    matrix = write_matrix(tmp_path, "  - {id: b, module: fakeup.broken}\n")
    assert main(["check", str(matrix), "--source", str(CHECKOUT)]) == 1


def test_usage_errors_exit_2(tmp_path, capsys):
    matrix = write_matrix(tmp_path, "  - {id: pkg, module: fakeup.pkg}\n")
    assert main(["check", str(matrix), "--source", str(tmp_path / "nowhere")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "missing.yaml"), "--source", str(CHECKOUT)]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_a_malformed_retry_backoff_is_a_usage_error(tmp_path, monkeypatch, capsys):
    matrix = write_matrix(tmp_path, "  - {id: pkg, module: fakeup.pkg}\n")
    monkeypatch.setenv("CANARY_RETRY_BACKOFF", "soon")
    assert main(["check", str(matrix), "--source", str(CHECKOUT)]) == 2
    said = "canary: CANARY_RETRY_BACKOFF='soon': expected seconds from 0 to 60\n"
    assert capsys.readouterr().err == said


def test_a_local_source_says_it_is_one_version(tmp_path, capsys):
    matrix = write_matrix(tmp_path, "  - {id: pkg, module: fakeup.pkg}\n")
    assert main(["check", str(matrix), "--source", str(CHECKOUT), "--versions", "anchors"]) == 0
    captured = capsys.readouterr()
    assert "is one version (2.1.0.dev0); --versions anchors applies to the package index" in (
        captured.err
    )
    assert captured.out == "1 pass\n"


def test_github_annotations_point_at_the_check_line(tmp_path, capsys):
    matrix = write_matrix(
        tmp_path, "  - id: pkg\n    module: fakeup.pkg\n  - id: gone\n    module: fakeup.gone\n"
    )
    args = ["check", str(matrix), "--source", str(CHECKOUT), "--format", "github"]
    assert main(args) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        f"::error file={matrix.as_posix()},line=6,title=canary fakeup%3A%3Agone[2.1.0.dev0]"
        "::fail: module fakeup.gone not found"
    )


def test_a_name_means_matrices_name_yaml_and_a_folder_its_matrices(tmp_path, monkeypatch, capsys):
    (tmp_path / "matrices").mkdir()
    write_matrix(tmp_path / "matrices", "  - {id: pkg, module: fakeup.pkg}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "fakeup", "--source", str(CHECKOUT)]) == 0
    assert main(["check", "matrices", "--source", str(CHECKOUT)]) == 0
    assert capsys.readouterr().out == "1 pass\n1 pass\n"
    assert main(["check", str(tmp_path), "--source", str(CHECKOUT)]) == 2
    assert "a folder without *.yaml matrices" in capsys.readouterr().err


def test_jobs_must_be_a_positive_number(tmp_path, capsys):
    matrix = write_matrix(tmp_path, "  - {id: pkg, module: fakeup.pkg}\n")
    for bad in ("0", "-3", "many"):
        with pytest.raises(SystemExit) as exited:
            main(["check", str(matrix), "--jobs", bad])
        assert exited.value.code == 2
        assert "argument --jobs" in capsys.readouterr().err


def test_output_creates_its_folder_and_says_what_it_wrote(tmp_path, capsys):
    matrix = write_matrix(tmp_path, "  - {id: pkg, module: fakeup.pkg}\n")
    out = tmp_path / "new" / "deeper" / "r.json"
    assert main(["check", str(matrix), "--source", str(CHECKOUT), "--output", str(out)]) == 0
    assert out.read_text() == "1 pass\n"
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("1 pass (")
    assert lines[1] == f"wrote {out}"
    red = write_matrix(tmp_path, "  - {id: gone, module: fakeup.gone}\n")
    assert main(["check", str(red), "--source", str(CHECKOUT), "--output", str(out)]) == 1
    said = capsys.readouterr().out.splitlines()[0]
    assert said.startswith("1 check red (1 check x version result); 1 fail (")


def test_an_unwritable_output_stops_the_run_before_it_starts(tmp_path, capsys):
    matrix = write_matrix(tmp_path, "  - {id: pkg, module: fakeup.gone}\n")
    blocker = tmp_path / "file"
    blocker.write_text("")
    for bad in (blocker / "r.json", tmp_path):
        args = ["check", str(matrix), "--source", str(CHECKOUT), "--output", str(bad)]
        assert main(args) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert len(captured.err.splitlines()) == 1
        assert captured.err.startswith(f"canary: --output {bad}: ")


def test_a_source_folder_without_the_package_is_one_error(tmp_path, capsys):
    matrix = write_matrix(
        tmp_path, "  - {id: a, module: fakeup.pkg}\n  - {id: b, module: fakeup.gone}\n"
    )
    assert main(["check", str(matrix), "--source", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"canary: --source {tmp_path}: no package fakeup in it")
    assert len(err.splitlines()) == 1


def test_help_shows_defaults_exit_codes_and_examples(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = capsys.readouterr().out
    assert "(default: releases)" in text
    assert "exit status:" in text and "  2  a usage error" in text
    assert text.count("\n  canary check") >= 2
