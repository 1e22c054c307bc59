"""`canary validate`: matrices and their locks checked offline (for commit hooks)."""

from __future__ import annotations

import argparse
import sys

from canary.matrix.files import find_matrices


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("matrices", nargs="*", metavar="MATRIX", help="a .lock means its matrix")


def run(args: argparse.Namespace) -> int:
    from canary.matrix.validate import validate_main

    paths = [str(p) for p in find_matrices(args.matrices)]
    return validate_main(paths, sys.stdout, sys.stderr)
