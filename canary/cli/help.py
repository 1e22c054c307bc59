"""What `--help` shows beside every command: defaults, examples and the exit statuses."""

from __future__ import annotations

import argparse

EXIT_CODES = """exit status:
  0  every check holds (pass, skip, xfail, xpass, warn)
  1  a check failed, or a source could not be read (fail or error)
  2  a usage error or a matrix that does not load; nothing was run"""


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Defaults shown beside the options that have one; examples and exit codes as written."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default not in (None, False, 0, argparse.SUPPRESS) and "%(default)" not in text:
            text += " (default: %(default)s)"
        return text


def add_upstream(parser: argparse.ArgumentParser) -> None:
    """`--upstream`, shared by `canary scan` and `canary init`: repeated or comma-separated
    (a second `--upstream` adds to the first, never silently replaces it)."""
    parser.add_argument(
        "--upstream",
        action="append",
        help="upstream packages, comma-separated or repeated (default: trl,peft,transformers)",
    )


def split_names(given: list[str] | None) -> list[str] | None:
    """`--upstream a,b --upstream c` as one list; None when not given."""
    names = [p.strip() for value in given or [] for p in value.split(",") if p.strip()]
    return names or None
