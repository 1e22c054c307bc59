"""Progress on stderr: a status line on a terminal (tested under a real pseudo-terminal),
nothing in a log, nothing with -q."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

from paths import FIXTURES
from terminal import run_with_stderr

from canary.reports.progress import Progress, is_cold

CHECKOUT = FIXTURES / "checkout"


def run_canary(tmp_path: Path, *extra: str, stderr_tty: bool) -> tuple[str, str]:
    """`canary check` on the fixture checkout; stderr on a pseudo-terminal or a pipe."""
    matrix = tmp_path / "fakeup.yaml"
    matrix.write_text("upstream: fakeup\nsrc: src\nchecks:\n  - {id: pkg, module: fakeup.pkg}\n")
    command = [
        sys.executable,
        "-m",
        "canary.cli.main",
        "check",
        str(matrix),
        "--source",
        str(CHECKOUT),
    ]
    env = {**os.environ, "CANARY_CACHE_DIR": str(tmp_path / "cache")}
    return run_with_stderr([*command, *extra], env, stderr_tty)


def test_a_terminal_gets_a_status_line_that_is_erased_at_the_end(tmp_path):
    out, err = run_canary(tmp_path, stderr_tty=True)
    assert out == "1 pass\n"
    assert "\rcanary: reading releases: 0/1, 0 B downloaded" in err
    assert "\rcanary: reading releases: 1/1, 0 B downloaded" in err
    assert err.endswith("\r")  # erased: the cursor is back at the start of an empty line


def test_quiet_and_logs_get_no_progress(tmp_path):
    assert run_canary(tmp_path, "-q", stderr_tty=True) == ("1 pass\n", "")
    assert run_canary(tmp_path, stderr_tty=False) == ("1 pass\n", "")


def test_a_first_run_says_what_it_is_about_to_read(tmp_path):
    stream = io.StringIO()
    ticks = iter([0.0, 0.05, 0.5])
    progress = Progress(stream, lambda: 2_500_000, cold_cache=tmp_path, clock=lambda: next(ticks))
    progress.start(3, releases=2)
    progress.advance()  # within the redraw interval: not drawn
    progress.advance()
    progress.close()
    text = stream.getvalue()
    assert text.startswith(
        f"canary: first run: reading 2 releases from the package index; cached afterwards in "
        f"{tmp_path}\n"
    )
    assert "1/3" not in text
    assert "\rcanary: reading versions: 2/3, 2.5 MB downloaded" in text


def test_each_phase_counts_to_a_total_that_does_not_move(tmp_path):
    """Reading the releases, then bisecting: the checks placed out of those bisected, the
    releases the bisections open counted beside (the count never outgrows its total)."""
    stream = io.StringIO()
    progress = Progress(stream, lambda: 0, clock=iter(range(100)).__next__, command="scan")
    progress.start(2, releases=2)
    progress.advance()
    progress.advance()
    progress.phase("bisecting 3 checks", 3, "placed")
    progress.read_one()
    progress.advance()
    progress.read_one()
    progress.advance()
    progress.advance()
    progress.close()
    drawn = [line.strip() for line in stream.getvalue().split("\r") if line.strip()]
    assert drawn == [
        "canary: reading releases: 0/2, 0 B downloaded",
        "canary: reading releases: 1/2, 0 B downloaded",
        "canary: reading releases: 2/2, 0 B downloaded",
        "canary: bisecting 3 checks: 0/3 placed, 0 B downloaded",
        "canary: bisecting 3 checks: 0/3 placed, 1 more release read, 0 B downloaded",
        "canary: bisecting 3 checks: 1/3 placed, 1 more release read, 0 B downloaded",
        "canary: bisecting 3 checks: 1/3 placed, 2 more releases read, 0 B downloaded",
        "canary: bisecting 3 checks: 2/3 placed, 2 more releases read, 0 B downloaded",
        "canary: bisecting 3 checks: 3/3 placed, 2 more releases read, 0 B downloaded",
    ]


def test_a_cache_is_cold_until_something_is_in_it(tmp_path):
    assert is_cold(tmp_path / "missing")
    assert is_cold(tmp_path)
    (tmp_path / "entry").write_text("x")
    assert not is_cold(tmp_path)
