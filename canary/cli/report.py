"""`canary report`: render saved JSON results, and what changed since a baseline."""

from __future__ import annotations

import argparse

from canary.reports.dispatch import FORMATS, default_format


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", metavar="RESULT.json", help="'-' reads stdin")
    parser.add_argument("--baseline", metavar="OLD.json", help="list what changed since it")
    parser.add_argument(
        "--format", choices=FORMATS, help="default: text; github under GitHub Actions"
    )
    parser.add_argument("--output", metavar="FILE", help="write the report to FILE")


def run(args: argparse.Namespace) -> int:
    from canary.reports.command import report_main

    return report_main(
        args.results, args.format or default_format(args.output), args.output, args.baseline
    )
