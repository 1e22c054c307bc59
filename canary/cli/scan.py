"""`canary scan`: propose matrix checks from what a downstream codebase patches."""

from __future__ import annotations

import argparse
import sys

from canary import api
from canary.cli.help import add_upstream, split_names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="the downstream codebase (read, never run)")
    add_upstream(parser)
    parser.add_argument(
        "--output", metavar="DIR", help="write DIR/NAME.yaml (DIR is created; never overwrites)"
    )
    parser.add_argument("--merge", metavar="MATRIX_DIR", help="append only the missing checks")
    parser.add_argument(
        "--source",
        metavar="DIR",
        help="a site-packages or checkout of the upstreams, read instead of the package index",
    )
    add_exclude(parser)


def add_exclude(parser: argparse.ArgumentParser) -> None:
    """`--exclude GLOB`, shared with `canary init` (which scans the same way)."""
    parser.add_argument(
        "--exclude",
        action="append",
        metavar="GLOB",
        help="leave these files or folders out (repeatable; tests/, scripts/, ... already are)",
    )


def scan_progress(offline: bool = False) -> api.ScanProgressFactory | None:
    """The status line scan and init draw on a terminal's stderr (as `canary check` does)."""
    if not sys.stderr.isatty():
        return None
    from canary.reports.progress import Progress, is_cold
    from canary.settings import default_cache_dir

    root = default_cache_dir()
    cold = root if is_cold(root) and not offline else None
    return lambda downloaded: Progress(sys.stderr, downloaded, cold_cache=cold, command="scan")


def run(args: argparse.Namespace) -> int:
    from canary.compat.malloc import fewer_arenas
    from canary.scan.command import emit, output_folder, upstream_names
    from canary.scan.merging import matrices_in

    fewer_arenas()  # before the fetch threads start: what they free is not held apart
    folder = output_folder(args.output, args.merge)  # a bad --output before a long scan
    existing = matrices_in(folder) if args.merge else {}
    upstreams = sorted({*upstream_names(split_names(args.upstream)), *existing})
    found = api.scan(
        args.path,
        upstreams,
        source=args.source,
        exclude=args.exclude or (),
        progress=scan_progress() if args.source is None else None,
    )
    return emit(
        found.result,
        found.proposed,
        args.path,
        found.upstreams,
        folder,
        args.output,
        args.merge,
        existing,
        sys.stdout,
    )
