"""The `canary` command: check, versions, lock, report, cache, scan."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from canary import __version__
from canary.matrix import Matrix, MatrixError, load_matrix
from canary.outcomes import RunReport
from canary.parse_pool import ParsePool
from canary.reports import FORMATS, render, report_main, terminal_style
from canary.run import Runner, default_jobs, local_selector, offline_mode, release_selector
from canary.sources.tree import SourceError

EXIT_OK, EXIT_RED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad command-line input: exit 2 with the message, no traceback."""


def find_matrices(paths: list[str]) -> list[Path]:
    """Explicit paths, else every matrices/*.yaml of the current project."""
    if paths:
        return [Path(p) for p in paths]
    found = sorted(Path("matrices").glob("*.yaml"))
    if not found:
        raise UsageError("no matrices given and no matrices/*.yaml in the current folder")
    return found


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


def selector_for(args: argparse.Namespace):
    if args.source not in ("auto", "index", "github"):
        folder = Path(args.source)
        if not folder.is_dir():
            raise UsageError(f"--source {args.source}: not a folder (or auto|index|github)")
        return local_selector(folder), folder
    return release_selector, None


def write_output(text: str, output: str | None) -> None:
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def exit_status(report: RunReport) -> int:
    return EXIT_RED if any(r.status.is_red for r in report.results) else EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    with offline_mode(args.offline):
        return check(args)


def check(args: argparse.Namespace) -> int:
    matrices = load_all(args.matrices)
    select, folder = selector_for(args)
    runner = Runner(
        select=select, source_path=folder, source=args.source, offline=args.offline, jobs=args.jobs
    )
    pool = ParsePool()
    runner.modules.parse = pool
    try:
        report = runner.run(matrices, args.versions)
    finally:
        pool.close()
    width, color = (None, False) if args.output else terminal_style(sys.stdout)
    write_output(render(args.format, report, width=width, color=color), args.output)
    return exit_status(report)


def cmd_report(args: argparse.Namespace) -> int:
    return report_main(args.results, args.format, args.output, args.baseline)


def cmd_versions(args: argparse.Namespace) -> int:
    from canary.versions import versions_main

    return versions_main(args.matrix, sys.stdout)


def cmd_lock(args: argparse.Namespace) -> int:
    from canary.versions import lock_main

    return lock_main([str(p) for p in find_matrices(args.matrices)], args.check, sys.stdout)


def cmd_cache(args: argparse.Namespace) -> int:
    from canary.sources.cache import cache_clear, cache_info, cache_prune

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


def cmd_scan(args: argparse.Namespace) -> int:
    from canary.scan import scan_main

    upstreams = (
        [p.strip() for p in args.upstream.split(",") if p.strip()] if args.upstream else None
    )
    return scan_main(args.path, upstreams, args.output, args.merge, sys.stdout, source=args.source)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="canary", description=__doc__)
    parser.add_argument("--version", action="version", version=f"canary {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="check matrices against upstream versions")
    check.add_argument("matrices", nargs="*", metavar="MATRIX")
    check.add_argument(
        "--versions",
        default="releases",
        help="releases (default) | all | anchors | a PEP 440 specifier | a comma-separated list",
    )
    check.add_argument(
        "--source", default="auto", help="auto (default) | index | github | a local folder"
    )
    check.add_argument("--format", default="text", choices=FORMATS)
    check.add_argument("--output", help="write the report to this file")
    check.add_argument("--offline", action="store_true", help="use the cache alone")
    check.add_argument("--jobs", type=int, default=default_jobs(), help="versions fetched at once")
    check.set_defaults(func=cmd_check)

    versions = commands.add_parser("versions", help="the resolved version list of a matrix")
    versions.add_argument("matrix", metavar="MATRIX")
    versions.set_defaults(func=cmd_versions)

    lock = commands.add_parser("lock", help="refresh the committed version lists")
    lock.add_argument("matrices", nargs="*", metavar="MATRIX")
    lock.add_argument("--check", action="store_true", help="write nothing; exit 1 when stale")
    lock.set_defaults(func=cmd_lock)

    cache = commands.add_parser("cache", help="show, empty or prune the canary cache")
    cache.add_argument("action", choices=["info", "clear", "prune"])
    cache.add_argument(
        "--older-than",
        type=_days,
        metavar="DAYS",
        help="with prune: remove entries neither written nor read for DAYS days",
    )
    cache.set_defaults(func=cmd_cache, parser=cache)

    report = commands.add_parser("report", help="render saved JSON results; drift since a baseline")
    report.add_argument("results", nargs="+", metavar="RESULT.json", help="'-' reads stdin")
    report.add_argument("--baseline", metavar="OLD.json", help="list what changed since it")
    report.add_argument("--format", default="text", choices=FORMATS)
    report.add_argument("--output", metavar="FILE")
    report.set_defaults(func=cmd_report)

    scan = commands.add_parser("scan", help="propose matrix checks from a downstream codebase")
    scan.add_argument("path", metavar="PATH", help="the downstream codebase (read, never run)")
    scan.add_argument(
        "--upstream", help="comma-separated upstream packages (default: trl,peft,transformers)"
    )
    scan.add_argument("--output", metavar="DIR", help="write DIR/NAME.yaml (never overwrites)")
    scan.add_argument("--merge", metavar="MATRIX_DIR", help="append only the missing checks")
    scan.add_argument(
        "--source",
        metavar="DIR",
        help="a site-packages or checkout of the upstreams, to find where re-exports are defined",
    )
    scan.set_defaults(func=cmd_scan)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (MatrixError, UsageError) as exc:
        print(f"canary: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SourceError as exc:
        print(f"canary: {exc}", file=sys.stderr)
        return EXIT_RED
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
