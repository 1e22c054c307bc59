"""`canary check`: judge matrices on upstream versions and report every result."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Iterable

from canary import api
from canary.cli.help import EXIT_CODES
from canary.engine.outcomes import RunReport
from canary.engine.upcoming import FAIL_ON, failing, parse_fail_on
from canary.errors import ExitCode
from canary.reports.dispatch import FORMATS, default_format, render
from canary.reports.output import prepare_output, write_output
from canary.reports.progress import Progress, is_cold
from canary.reports.text import stats_line, summary_line, terminal_height, terminal_style
from canary.settings import MAX_JOBS, Settings, default_jobs

EXAMPLES = """examples:
  canary check                              every matrices/*.yaml on every locked release
  canary check trl --versions anchors       matrices/trl.yaml on its anchors only
  canary check -k grpo                      the checks whose id, upstream or file has grpo
  canary check -k "trl and 1.14.0"          trl's checks on 1.14.0 (pytest's -k grammar)
  canary check -k "not main"                every check on the releases, none on branch main
  canary check -k "grpo and 1.14" -v        one line per check x version, passes too
  canary check --format json --output out/results.json
  canary check --versions all --fail-on released,error
                                            main checked, but only released reds exit 1

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
    check.add_argument(
        "-k",
        dest="keywords",
        metavar="EXPR",
        help="only the check x versions EXPR selects, as pytest's -k: names matched "
        "case-insensitively as substrings of the matrix file, the upstream and CHECK[VERSION], "
        "with and, or, not and parentheses",
    )
    check.add_argument("--source", default="auto", help="auto | index | github | a local folder")
    check.add_argument(
        "--format",
        choices=FORMATS,
        help="report format (default: text; github under GitHub Actions)",
    )
    check.add_argument("--output", metavar="FILE", help="write the report to FILE")
    check.add_argument(
        "--fail-on",
        type=_fail_on,
        default=FAIL_ON,
        metavar="KINDS",
        help="what makes the exit status 1, comma-separated: released (a fail on a release), "
        "upcoming (a fail only ahead of the releases: main, the next pre-release), error "
        f"(default: {','.join(FAIL_ON)})",
    )
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
        help="in plain text, one line per check x version (passes and skips too) instead of "
        "version ranges",
    )


def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= jobs <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"{jobs} is outside 1..{MAX_JOBS}")
    return jobs


def _fail_on(value: str) -> frozenset[str]:
    try:
        return parse_fail_on(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    output = prepare_output(args.output) if args.output else None
    fmt = args.format or default_format(args.output)
    report = api.check(
        args.matrices,
        versions=args.versions,
        source=args.source,
        settings=Settings.from_environment(offline=args.offline, jobs=args.jobs),
        progress=progress_for(args),
        keywords=args.keywords,
    )
    report.run["command"] = shlex.join(["canary", *args.argv])
    if output is None:
        width, color = terminal_style(sys.stdout) if fmt == "text" else (None, False)
        height = terminal_height(sys.stdout)
        verbose = args.verbose > 0
        sys.stdout.write(
            render(fmt, report, width=width, color=color, verbose=verbose, height=height)
        )
    else:
        write_output(output, render(fmt, report))
        print(f"{summary_line(report)} ({stats_line(report)})\nwrote {output}")
    return exit_status(report, args.fail_on)


def exit_status(report: RunReport, fail_on: Iterable[str] = FAIL_ON) -> int:
    """1 when a result of a kind `--fail-on` names is there (canary.engine.upcoming)."""
    return ExitCode.FAILED if failing(report, fail_on) else ExitCode.OK


def progress_for(args: argparse.Namespace) -> api.ProgressFactory | None:
    """A status line on a terminal's stderr (never with -q, never in a log)."""
    if args.quiet or not sys.stderr.isatty():
        return None
    cold = None
    if args.source in api.REMOTE_SOURCES:
        from canary.settings import default_cache_dir

        root = default_cache_dir()
        cold = root if is_cold(root) and not args.offline else None
    return lambda downloaded: Progress(sys.stderr, downloaded, cold_cache=cold)
