"""Every error canary reports to a user derives from `CanaryError`, which carries the exit status
the command ends with, so the command line needs one handler and no table of exception types."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """What `canary` exits with (pytest's habit: named, documented, one place)."""

    #: every check holds (pass, skip, xfail, xpass, warn)
    OK = 0
    #: a check failed, or a source could not be read (fail or error)
    FAILED = 1
    #: a usage error or a matrix that does not load; nothing was run
    USAGE_ERROR = 2
    #: Ctrl-C
    INTERRUPTED = 130


class Stopped(KeyboardInterrupt):
    """Raised in a thread still at work after Ctrl-C stopped its run: it ends there rather than
    read and parse on while the process ends (a pytest session takes a second or more to)."""


class CanaryError(Exception):
    """A failure canary explains in words: the command prints `lines()` and exits `exit_code`,
    with no traceback."""

    #: a class's default; an instance may carry another (a step reporting a command's status)
    exit_code: int = ExitCode.USAGE_ERROR

    def lines(self) -> list[str]:
        """The message, one line per problem (a matrix reports all of its errors at once)."""
        return [str(self)]


class UsageError(CanaryError):
    """Bad command-line input: exit 2 with the message, no traceback."""


class SourceError(CanaryError):
    """The source could not be obtained (network, corrupt archive, offline miss).

    Always surfaces as the `error` outcome with this message; never as pass or fail.
    The message names the URL (or path) and the cause.
    """

    exit_code = ExitCode.FAILED
