"""Commands a test interrupts, started so that they take SIGINT as Ctrl-C on a terminal would.

A test run started with SIGINT ignored (a background job of a non-interactive shell, `nohup`)
passes that to its children, and Python installs no KeyboardInterrupt handler where SIGINT is
ignored: the interrupt tests would then wait for a signal that is dropped. An ignored signal
stays ignored across `exec`, a default one stays default, so a small launcher restores the
default and execs the command (thread-safe, unlike `preexec_fn` beside the tests' servers).
"""

from __future__ import annotations

import sys

_LAUNCHER = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


def interruptible(command: list[str]) -> list[str]:
    """`command`, run with SIGINT at its default whatever this process was started with."""
    return [sys.executable, "-c", _LAUNCHER, *command]
