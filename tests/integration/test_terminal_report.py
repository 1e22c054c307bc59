"""The report a terminal gets: a grid taller than the screen would push the findings off it, so
they come first (red, then warnings) and the grid after them keeps the red rows only."""

from __future__ import annotations

import json
import os
import sys

from terminal import run_on_terminal

VERSIONS = [f"0.{i // 10}.{i % 10}" for i in range(30)]


def results_file(tmp_path, checks: int):
    """`checks` checks of trl over 30 releases: check-17 fails from 0.2.0, check-09 warns."""
    results = []
    for n in range(checks):
        check = f"check-{n:02}"
        for at, version in enumerate(VERSIONS):
            status = "pass"
            if check == "check-17" and at >= 20:
                status = "fail"
            if check == "check-09" and at >= 25:
                status = "warn"
            detail = "" if status == "pass" else f"{check} went {status}"
            results.append({"upstream": "trl", "check": check, "version": version,
                            "status": status, "detail": detail, "source": "index"})  # fmt: skip
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"results": results, "summary": {}, "stats": {}}))
    return path


def report_on_terminal(path, rows: int) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["NO_COLOR"] = "1"
    command = [sys.executable, "-m", "canary", "report", str(path)]
    return run_on_terminal(command, env, rows=rows, columns=100).splitlines()


def test_a_grid_taller_than_the_terminal_puts_the_findings_where_the_eye_lands(tmp_path):
    lines = report_on_terminal(results_file(tmp_path, 60), rows=40)
    assert lines[0].startswith("FAIL  trl::check-17[0.2.0\u20130.2.9] check-17 went fail")
    assert lines[1].startswith("WARN  trl::check-09[0.2.5\u20130.2.9] check-09 went warn")
    grid = lines.index("trl: the 1 red of 60 checks x 30 versions (0.0.0 \u2026 0.2.9)")
    assert lines[grid + 1].startswith("  check-17 " + "." * 20 + "F" * 10)
    assert lines[grid + 3].startswith("the red rows only: the whole grid is taller than the screen")
    assert len(lines) < 40


def test_a_grid_that_fits_the_terminal_comes_first_whole(tmp_path):
    lines = report_on_terminal(results_file(tmp_path, 20), rows=40)
    assert lines[0] == "trl: 20 checks x 30 versions (0.0.0 \u2026 0.2.9)"
    assert sum(line.startswith("  check-") for line in lines) == 20
    assert lines.index(next(x for x in lines if x.startswith("FAIL"))) > 20
