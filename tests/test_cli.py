"""`canary check` end to end on a local source: exit codes, JSON shape, text lines."""

from __future__ import annotations

import json
from pathlib import Path

from canary.cli import main

CHECKOUT = Path(__file__).parent / "fixtures" / "checkout"


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
        "FAIL  fakeup::gone[3.0.0] module fakeup.gone not found",
        "WARN  fakeup::opt[3.0.0] module fakeup.gone not found",
        "1 pass, 1 fail, 1 warn",
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


def test_a_local_source_says_it_is_one_version(tmp_path, capsys):
    matrix = write_matrix(tmp_path, "  - {id: pkg, module: fakeup.pkg}\n")
    assert main(["check", str(matrix), "--source", str(CHECKOUT), "--versions", "anchors"]) == 0
    captured = capsys.readouterr()
    assert "is one version (2.1.0.dev0); --versions anchors applies to the package index" in (
        captured.err
    )
    assert captured.out == "1 pass\n"
