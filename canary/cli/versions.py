"""`canary versions`: the version list one matrix resolves to."""

from __future__ import annotations

import argparse
import sys

from canary.errors import UsageError
from canary.matrix.files import find_matrices


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("matrix", metavar="MATRIX")


def run(args: argparse.Namespace) -> int:
    from canary.matrix.versions import versions_main

    found = find_matrices([args.matrix])
    if len(found) != 1:
        raise UsageError(f"{args.matrix}: holds {len(found)} matrices; name one")
    return versions_main(str(found[0]), sys.stdout)
