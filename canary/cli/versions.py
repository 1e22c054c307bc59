"""`canary versions`: the version list one matrix resolves to."""

from __future__ import annotations

import argparse
import sys

from canary import api
from canary.errors import ExitCode, UsageError
from canary.matrix.files import find_matrices
from canary.matrix.model import load_matrix


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "matrix", metavar="MATRIX", help="a matrix file or a name (trl: matrices/trl.yaml)"
    )


def run(args: argparse.Namespace) -> int:
    from canary.matrix.versions import version_listing

    found = find_matrices([args.matrix])
    if len(found) != 1:
        raise UsageError(f"{args.matrix}: holds {len(found)} matrices; name one")
    matrix = load_matrix(found[0])
    lines = version_listing(matrix, api.resolve(matrix))
    sys.stdout.writelines(f"{line}\n" for line in lines)
    return ExitCode.OK
