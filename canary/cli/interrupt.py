"""How a command ends after Ctrl-C: at once, with its child processes, never waiting for a
thread that is still blocked on a slow server (Python joins some threads at exit, and one read
stuck on a 30 s timeout held the whole command for it)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import NoReturn


def end_now(code: int) -> NoReturn:
    """Exit with `code` now: a second Ctrl-C is ignored, the children (parse workers) are
    ended, what was printed is flushed. Every file canary writes is whole or absent (the
    cache replaces entries atomically), so nothing is left half-written to be believed."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if "multiprocessing" in sys.modules:  # only a run that parsed started any
        import multiprocessing

        children = multiprocessing.active_children()
        for child in children:
            child.terminate()
        for child in children:
            child.join(timeout=1)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
