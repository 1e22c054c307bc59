"""`canary lock`: refresh (or, with --check, verify) the committed version lists."""

from __future__ import annotations

import argparse
import sys

from canary import api
from canary.cli.help import EXIT_CODES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXIT_CODES
    parser.add_argument(
        "matrices", nargs="*", metavar="MATRIX", help="as for check; none: every matrix"
    )
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when stale")
    parser.add_argument(
        "--accept-changed",
        action="append",
        default=[],
        metavar="VERSION",
        help="lock the new bytes of a release whose locked file changed (after an ALARM)",
    )


def run(args: argparse.Namespace) -> int:
    report = api.lock(args.matrices, check=args.check, accept_changed=args.accept_changed)
    sys.stdout.writelines(f"{line}\n" for line in report.lines)
    return report.exit_code(args.check)
