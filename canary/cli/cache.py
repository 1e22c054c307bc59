"""`canary cache`: show, empty or prune the on-disk cache."""

from __future__ import annotations

import argparse

from canary.errors import ExitCode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["info", "clear", "prune"])
    parser.add_argument(
        "--older-than",
        type=_days,
        metavar="DAYS",
        help="with prune: remove entries neither written nor read for DAYS days",
    )


def _days(value: str) -> float:
    try:
        days = float(value)
    except ValueError:
        days = -1.0
    if not days >= 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of days (0 or more)")
    return days


def run(args: argparse.Namespace) -> int:
    from canary.cache.sweep import cache_clear, cache_info, cache_prune

    if args.action == "prune":
        if args.older_than is None:
            args.parser.error("cache prune needs --older-than DAYS")
        print(cache_prune(args.older_than))
    elif args.older_than is not None:
        args.parser.error(f"--older-than applies to cache prune, not cache {args.action}")
    else:
        print(cache_info() if args.action == "info" else cache_clear())
    return ExitCode.OK
