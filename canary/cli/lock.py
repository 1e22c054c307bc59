"""`canary lock`: refresh (or, with --check, verify) the committed version lists."""

from __future__ import annotations

import argparse
import sys

from canary.cli.help import EXIT_CODES
from canary.matrix.files import find_matrices


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXIT_CODES
    parser.add_argument("matrices", nargs="*", metavar="MATRIX")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when stale")


def run(args: argparse.Namespace) -> int:
    from canary.matrix.versions import lock_main

    return lock_main([str(p) for p in find_matrices(args.matrices)], args.check, sys.stdout)
