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


def scan(
    path: str,
    upstreams: list[str] | None,
    output: str | None,
    merge: str | None,
    source: str | None = None,
    exclude: list[str] | None = None,
) -> tuple[int, str]:
    """`canary scan PATH` with these options: (exit status, stdout)."""
    options = [("--upstream", ",".join(upstreams or [])), ("--output", output), ("--merge", merge)]
    options += [("--source", source), *(("--exclude", glob) for glob in exclude or [])]
    return canary("scan", path, *(arg for key, value in options if value for arg in (key, value)))
