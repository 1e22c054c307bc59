"""`canary check`: judge matrices on upstream versions and report every result."""

from __future__ import annotations

import argparse
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path

from canary import __version__
from canary.analysis.pool import ParsePool
from canary.cli.help import EXIT_CODES
from canary.engine.outcomes import RunReport
from canary.engine.runner import (
    Runner,
    default_jobs,
    local_selector,
    offline_mode,
    release_selector,
)
from canary.errors import ExitCode, UsageError
from canary.matrix.files import load_matrices
from canary.matrix.model import Matrix
from canary.reports.dispatch import FORMATS, default_format, render
from canary.reports.output import prepare_output, write_output
from canary.reports.progress import Progress, is_cold
from canary.reports.text import stats_line, summary_line, terminal_style
from canary.sources.local import LocalTree
from canary.sources.tree import SourceError

MAX_JOBS = 256

EXAMPLES = """examples:
  canary check                              every matrices/*.yaml on every locked release
  canary check trl --versions anchors       matrices/trl.yaml on its anchors only
  canary check --format json --output out/results.json

"""


def add_arguments(check: argparse.ArgumentParser) -> None:
    check.epilog = EXAMPLES + EXIT_CODES
    check.add_argument(
        "matrices",
        nargs="*",
        metavar="MATRIX",
        help="a matrix file, a folder of them, or a name (trl: matrices/trl.yaml); "
        "none: every matrices/*.yaml",
    )
    check.add_argument(
        "--versions",
        default="releases",
        help="releases | all (with branches) | anchors | latest | a PEP 440 specifier | "
        "a comma-separated list of versions and branches",
    )
    check.add_argument("--source", default="auto", help="auto | index | github | a local folder")
    check.add_argument(
        "--format",
        choices=FORMATS,
        help="report format (default: text; github under GitHub Actions)",
    )
    check.add_argument("--output", metavar="FILE", help="write the report to FILE")
    check.add_argument("--offline", action="store_true", help="use the cache alone")
    check.add_argument(
        "--jobs", type=_jobs, default=default_jobs(), help=f"versions read at once (1..{MAX_JOBS})"
    )
    loudness = check.add_mutually_exclusive_group()
    loudness.add_argument(
        "-q", "--quiet", action="store_true", help="no progress line on the terminal"
    )
    loudness.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="in plain text, one line per check x version instead of version ranges",
    )


def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= jobs <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"{jobs} is outside 1..{MAX_JOBS}")
    return jobs


def run(args: argparse.Namespace) -> int:
    with offline_mode(args.offline):
        return check(args)


def check(args: argparse.Namespace) -> int:
    matrices = load_matrices(args.matrices)
    select, folder = selector_for(args, matrices)
    output = prepare_output(args.output) if args.output else None
    fmt = args.format or default_format(args.output)
    runner = Runner(
        select=select, source_path=folder, source=args.source, offline=args.offline, jobs=args.jobs
    )
    runner.progress = progress_for(args, runner)
    pool = ParsePool()
    runner.modules.parse = pool
    try:
        report = runner.run(matrices, args.versions)
    finally:
        pool.close()
        if runner.progress is not None:
            runner.progress.close()
    report.run = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "canary": __version__,
        "command": shlex.join(["canary", *args.argv]),
    }
    if output is None:
        width, color = terminal_style(sys.stdout) if fmt == "text" else (None, False)
        sys.stdout.write(render(fmt, report, width=width, color=color, verbose=args.verbose > 0))
    else:
        write_output(output, render(fmt, report))
        print(f"{summary_line(report)} ({stats_line(report)})\nwrote {output}")
    return exit_status(report)


def exit_status(report: RunReport) -> int:
    return ExitCode.FAILED if any(r.status.is_red for r in report.results) else ExitCode.OK


def selector_for(args: argparse.Namespace, matrices: list[Matrix]):
    if args.source not in ("auto", "index", "github"):
        folder = Path(args.source)
        if not folder.is_dir():
            raise UsageError(f"--source {args.source}: not a folder (or auto|index|github)")
        missing = [m.package for m in matrices if not _holds(folder, m)]
        if missing:
            raise SourceError(
                f"--source {args.source}: no package {', '.join(missing)} in it (looked at the "
                "top, under the matrix's `src` and under src/); name the matrix it stands in for"
            )
        return local_selector(folder), folder
    return release_selector, None


def _holds(folder: Path, matrix: Matrix) -> bool:
    top = matrix.package.split(".")[0]
    root = LocalTree(folder, matrix.package, matrix.src).root
    return (root / top).is_dir() or (root / f"{top}.py").is_file()


def progress_for(args: argparse.Namespace, runner: Runner) -> Progress | None:
    """A status line on a terminal's stderr (never with -q, never in a log)."""
    if args.quiet or not sys.stderr.isatty():
        return None
    cold = None
    if args.source in ("auto", "index", "github"):
        from canary.cache.store import default_cache_dir

        root = default_cache_dir()
        cold = root if is_cold(root) and not args.offline else None
    return Progress(sys.stderr, lambda: runner.stats().get("bytes_downloaded", 0), cold_cache=cold)
