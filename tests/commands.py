"""`canary ARGV` in this process, as the tests run the commands: (exit status, stdout)."""

from __future__ import annotations

import contextlib
import io

from canary.cli.main import main


def canary(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(list(argv))
    return status, out.getvalue()
