"""`matches` patterns run with bounded work, so an upstream's source cannot hang a run.

Python's `re` backtracks without limit and holds the interpreter while it does: a pattern such
as `(x+x+)+y` on a long run of `x` never returns, and Ctrl-C waits for it. The `regex` module
(re's syntax and semantics, as its VERSION0 default) takes a timeout per match and can release
the interpreter while matching; in the main thread the match runs on a helper thread, so the
main thread keeps waiting interruptibly and Ctrl-C stops the run at once.
"""

from __future__ import annotations

import functools
import queue
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from canary.errors import CanaryError, ExitCode

if TYPE_CHECKING:
    import regex

#: seconds one pattern may spend on one source; real patterns on real sources take milliseconds.
#: regex checks its clock between backtracking steps, so a hopeless match ends within a few
#: times this (measured: about 3.5x), never later.
TIMEOUT = 1.0
_FLAGS = ("IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "ASCII")


class RegexError(CanaryError):
    """A pattern that could not be judged: over its time limit, or not compilable by regex."""

    exit_code = ExitCode.FAILED


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str, flags: int) -> regex.Pattern[str]:
    import regex  # here: only a `matches` contract judged afresh needs it, a warm run none

    bounded = 0
    for name in _FLAGS:  # the flag values differ between re and regex (ASCII)
        if flags & getattr(re, name):
            bounded |= getattr(regex, name)
    try:
        return regex.compile(pattern, bounded)
    except regex.error as exc:
        raise RegexError(f"matches /{pattern}/: not supported: {exc}") from None


def search(pattern: re.Pattern[str], text: str, timeout: float = TIMEOUT) -> bool:
    """Whether `pattern` matches somewhere in `text`; RegexError past `timeout` seconds."""
    compiled = _compiled(pattern.pattern, pattern.flags)

    def run() -> bool:
        return compiled.search(text, timeout=timeout, concurrent=True) is not None

    try:
        if threading.current_thread() is threading.main_thread():
            return _off_main_thread(run)
        return run()
    except TimeoutError:
        raise RegexError(
            f"matches /{pattern.pattern}/ went over its {timeout:g} s limit "
            "(the pattern backtracks without end on this source)"
        ) from None


_jobs: queue.SimpleQueue[tuple[Callable[[], bool], list[object], threading.Event]] = (
    queue.SimpleQueue()
)
_helper: threading.Thread | None = None
_helper_lock = threading.Lock()


def _off_main_thread(run: Callable[[], bool]) -> bool:
    """Run on the helper thread; the main thread's wait is one a signal interrupts."""
    global _helper
    with _helper_lock:
        if _helper is None or not _helper.is_alive():
            _helper = threading.Thread(target=_serve, name="canary-regex", daemon=True)
            _helper.start()
    box: list[object] = []
    done = threading.Event()
    _jobs.put((run, box, done))
    while not done.wait(0.1):
        pass
    (outcome,) = box
    if isinstance(outcome, BaseException):
        raise outcome
    return bool(outcome)


def _serve() -> None:
    while True:
        run, box, done = _jobs.get()
        try:
            box.append(run())
        except BaseException as exc:  # handed to the waiting thread, which raises it
            box.append(exc)
        done.set()
