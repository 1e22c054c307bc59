"""`canary init`: adopt canary in a repository (matrices, locks and workflows)."""

from __future__ import annotations

import argparse
import sys

from canary.cli.help import add_upstream, split_names
from canary.cli.scan import add_exclude, scan_progress
from canary.init.workflows import ACTION_REF


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", default=".", metavar="PATH", help="the repository")
    parser.add_argument("--dir", default="canary", help="folder for the matrices, inside PATH")
    add_upstream(parser)
    parser.add_argument("--action", default=ACTION_REF, help="the Action the workflows use")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would be written, write nothing; each lock is resolved as init resolves it"
        " (in a folder of its own), so the dry run fails exactly where init would",
    )
    add_exclude(parser)


def run(args: argparse.Namespace) -> int:
    from canary.init.command import init_main

    upstreams = split_names(args.upstream)
    return init_main(
        args.path,
        args.dir,
        upstreams,
        args.action,
        args.dry_run,
        sys.stdout,
        args.exclude,
        scan_progress(),
    )
