"""canary: check that the upstream contracts your patches rely on hold on every release."""

from __future__ import annotations

import argparse
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path

from canary.analysis.pool import ParsePool
from canary.engine.outcomes import RunReport
from canary.engine.runner import (
    Runner,
    default_jobs,
    local_selector,
    offline_mode,
    release_selector,
)
from canary.init.workflows import ACTION_REF
from canary.matrix.config import ConfigError, find_matrices
from canary.matrix.model import Matrix, MatrixError, load_matrix
from canary.reports.dispatch import FORMATS, default_format, render
from canary.reports.output import OutputError, prepare_output, write_output
from canary.reports.progress import Progress, is_cold
from canary.reports.text import stats_line, summary_line, terminal_style
from canary.sources.local import LocalTree
from canary.sources.tree import SourceError
from canary.version import __version__

EXIT_OK, EXIT_RED, EXIT_USAGE = 0, 1, 2
MAX_JOBS = 256

EXIT_CODES = """exit status:
  0  every check holds (pass, skip, xfail, xpass, warn)
  1  a check failed, or a source could not be read (fail or error)
  2  a usage error or a matrix that does not load; nothing was run"""


class UsageError(Exception):
    """Bad command-line input: exit 2 with the message, no traceback."""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Defaults shown beside the options that have one; examples and exit codes as written."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default not in (None, False, 0, argparse.SUPPRESS) and "%(default)" not in text:
            text += " (default: %(default)s)"
        return text


def load_all(paths: list[str]) -> list[Matrix]:
    matrices = [load_matrix(p) for p in find_matrices(paths)]
    seen: dict[str, Path] = {}
    for matrix in matrices:
        if matrix.upstream in seen:
            raise UsageError(
                f"{matrix.path}: upstream {matrix.upstream!r} is also in {seen[matrix.upstream]}"
            )
        seen[matrix.upstream] = matrix.path
    return matrices


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


def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= jobs <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"{jobs} is outside 1..{MAX_JOBS}")
    return jobs


def exit_status(report: RunReport) -> int:
    return EXIT_RED if any(r.status.is_red for r in report.results) else EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    with offline_mode(args.offline):
        return check(args)


def check(args: argparse.Namespace) -> int:
    matrices = load_all(args.matrices)
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


def cmd_report(args: argparse.Namespace) -> int:
    from canary.reports.command import report_main

    return report_main(
        args.results, args.format or default_format(args.output), args.output, args.baseline
    )


def cmd_versions(args: argparse.Namespace) -> int:
    from canary.matrix.versions import versions_main

    found = find_matrices([args.matrix])
    if len(found) != 1:
        raise UsageError(f"{args.matrix}: holds {len(found)} matrices; name one")
    return versions_main(str(found[0]), sys.stdout)


def cmd_lock(args: argparse.Namespace) -> int:
    from canary.matrix.versions import lock_main

    return lock_main([str(p) for p in find_matrices(args.matrices)], args.check, sys.stdout)


def cmd_cache(args: argparse.Namespace) -> int:
    from canary.cache.store import cache_clear, cache_info, cache_prune

    if args.action == "prune":
        if args.older_than is None:
            args.parser.error("cache prune needs --older-than DAYS")
        print(cache_prune(args.older_than))
    elif args.older_than is not None:
        args.parser.error(f"--older-than applies to cache prune, not cache {args.action}")
    else:
        print(cache_info() if args.action == "info" else cache_clear())
    return EXIT_OK


def _days(value: str) -> float:
    try:
        days = float(value)
    except ValueError:
        days = -1.0
    if not days >= 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of days (0 or more)")
    return days


def split_names(names: str | None) -> list[str] | None:
    """`--upstream a,b` as a list; None when not given."""
    return [p.strip() for p in names.split(",") if p.strip()] if names else None


def cmd_scan(args: argparse.Namespace) -> int:
    from canary.scan import scan_main

    upstreams = split_names(args.upstream)
    return scan_main(args.path, upstreams, args.output, args.merge, sys.stdout, source=args.source)


def cmd_init(args: argparse.Namespace) -> int:
    from canary.init.command import init_main

    upstreams = split_names(args.upstream)
    return init_main(args.path, args.dir, upstreams, args.action, args.dry_run, sys.stdout)


def cmd_validate(args: argparse.Namespace) -> int:
    from canary.matrix.validate import validate_main

    paths = [str(p) for p in find_matrices(args.matrices)]
    return validate_main(paths, sys.stdout, sys.stderr)


CHECK_EXAMPLES = """examples:
  canary check                              every matrices/*.yaml on every locked release
  canary check trl --versions anchors       matrices/trl.yaml on its anchors only
  canary check --format json --output out/results.json

"""


def cmd_action(args: argparse.Namespace) -> int:
    from canary.action.command import run_step

    return run_step(args.step)


ACTION_STEPS = ("plan", "lock", "check", "compare", "propose-locks", "verdict")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="canary",
        description=__doc__,
        formatter_class=HelpFormatter,
        epilog="examples:\n  canary check\n  canary lock --check\n\n" + EXIT_CODES,
    )
    parser.add_argument("--version", action="version", version=f"canary {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help: str, epilog: str | None = None) -> argparse.ArgumentParser:
        return commands.add_parser(
            name, help=help, description=help, epilog=epilog, formatter_class=HelpFormatter
        )

    check = command(
        "check", "check matrices against upstream versions", CHECK_EXAMPLES + EXIT_CODES
    )
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
    check.set_defaults(func=cmd_check)

    versions = command("versions", "the resolved version list of a matrix")
    versions.add_argument("matrix", metavar="MATRIX")
    versions.set_defaults(func=cmd_versions)

    lock = command("lock", "refresh the committed version lists", EXIT_CODES)
    lock.add_argument("matrices", nargs="*", metavar="MATRIX")
    lock.add_argument("--check", action="store_true", help="write nothing; exit 1 when stale")
    lock.set_defaults(func=cmd_lock)

    cache = command("cache", "show, empty or prune the canary cache")
    cache.add_argument("action", choices=["info", "clear", "prune"])
    cache.add_argument(
        "--older-than",
        type=_days,
        metavar="DAYS",
        help="with prune: remove entries neither written nor read for DAYS days",
    )
    cache.set_defaults(func=cmd_cache, parser=cache)

    report = command("report", "render saved JSON results; drift since a baseline")
    report.add_argument("results", nargs="+", metavar="RESULT.json", help="'-' reads stdin")
    report.add_argument("--baseline", metavar="OLD.json", help="list what changed since it")
    report.add_argument(
        "--format", choices=FORMATS, help="default: text; github under GitHub Actions"
    )
    report.add_argument("--output", metavar="FILE")
    report.set_defaults(func=cmd_report)

    scan = command("scan", "propose matrix checks from a downstream codebase")
    scan.add_argument("path", metavar="PATH", help="the downstream codebase (read, never run)")
    scan.add_argument(
        "--upstream", help="comma-separated upstream packages (default: trl,peft,transformers)"
    )
    scan.add_argument(
        "--output", metavar="DIR", help="write DIR/NAME.yaml (DIR is created; never overwrites)"
    )
    scan.add_argument("--merge", metavar="MATRIX_DIR", help="append only the missing checks")
    scan.add_argument(
        "--source",
        metavar="DIR",
        help="a site-packages or checkout of the upstreams, read instead of the package index",
    )
    scan.set_defaults(func=cmd_scan)

    init = command("init", "adopt canary: matrices, locks and workflows for a repository")
    init.add_argument("path", nargs="?", default=".", metavar="PATH", help="the repository")
    init.add_argument("--dir", default="canary", help="folder for the matrices, inside PATH")
    init.add_argument(
        "--upstream", help="comma-separated upstream packages (default: trl,peft,transformers)"
    )
    init.add_argument("--action", default=ACTION_REF, help="the Action the workflows use")
    init.add_argument("--dry-run", action="store_true", help="say what would be written")
    init.set_defaults(func=cmd_init)

    validate = command("validate", "check matrices and their locks offline (commit hooks)")
    validate.add_argument("matrices", nargs="*", metavar="MATRIX", help="a .lock means its matrix")
    validate.set_defaults(func=cmd_validate)

    action = command("action", "one step of the GitHub Action (action.yml runs them)")
    action.add_argument("step", choices=ACTION_STEPS)
    action.set_defaults(func=cmd_action)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    try:
        return args.func(args)
    except (MatrixError, ConfigError, UsageError, OutputError) as exc:
        for error in getattr(exc, "errors", [exc]):  # a matrix reports all its errors
            print(f"canary: {error}", file=sys.stderr)
        return EXIT_USAGE
    except SourceError as exc:
        print(f"canary: {exc}", file=sys.stderr)
        return EXIT_RED
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
