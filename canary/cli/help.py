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


def split_names(names: str | None) -> list[str] | None:
    """`--upstream a,b` as a list; None when not given."""
    return [p.strip() for p in names.split(",") if p.strip()] if names else None
