"""Parse upstream modules in worker processes: `ast.parse` holds the GIL, so a cold run over
hundreds of releases is CPU-bound in one core unless the parsing leaves the main process.

Workers only parse (never import or run upstream code) and send back the index in its
stored form; the text stays in the main process, which already holds the bytes.
"""

from __future__ import annotations

import os
import signal
import threading
from concurrent.futures import BrokenExecutor, CancelledError
from typing import TYPE_CHECKING

from canary.analysis import ModuleInfo, decode, index_module
from canary.analysis import store as index_store
from canary.analysis.modules import parse_here
from canary.errors import Stopped

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

#: Files smaller than this are parsed in place: shipping them costs more than parsing.
MIN_POOLED_BYTES = 16 * 1024


def _index(data: bytes, name: str, path: str, is_package: bool) -> bytes:
    """The index in its stored form: what the main process keeps anyway, and the cheapest
    thing to send back (it decodes only the records a check reads, where unpickling a whole
    index cost it more than all of its judging)."""
    return index_store.encode(index_module(data, name, path, is_package=is_package))


def _leave_interrupts_to_the_parent() -> None:
    """Ctrl-C reaches the whole process group: the main process ends the run (and these
    workers); a worker of its own would only print a KeyboardInterrupt traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class ParsePool:
    """A lazily started process pool with the `parse` signature ModuleCache expects."""

    def __init__(self, workers: int | None = None):
        self.workers = workers or os.cpu_count() or 1
        self._executor: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._stopped = False

    def _pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._stopped:  # never a new pool after Ctrl-C: its workers would outlive it
                raise Stopped
            if self._executor is None:
                # imported here: a warm run parses nothing and never pays for multiprocessing
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                # spawn, not fork: the main process runs fetch threads that may hold locks.
                context = multiprocessing.get_context("spawn")
                self._executor = ProcessPoolExecutor(
                    self.workers, mp_context=context, initializer=_leave_interrupts_to_the_parent
                )
            return self._executor

    def __call__(
        self, data: bytes, name: str, path: str, *, is_package: bool
    ) -> tuple[ModuleInfo, bytes | None]:
        if self._stopped:
            raise Stopped
        if len(data) < MIN_POOLED_BYTES or self.workers < 2:
            return parse_here(data, name, path, is_package=is_package)
        try:
            encoded = self._pool().submit(_index, data, name, path, is_package).result()
        except (BrokenExecutor, CancelledError):
            if self._stopped:  # ended by `stop`: parsing here would hold the GIL for seconds
                _end_workers()  # any the submit above was still starting when `stop` swept
                raise Stopped from None
            # a worker died (memory): parse here rather than fail
            return parse_here(data, name, path, is_package=is_package)
        return index_store.decode(encoded, name, path, decode(data, path)), encoded

    def close(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(cancel_futures=True)
                self._executor = None

    def stop(self) -> None:
        """After Ctrl-C: end the workers now rather than wait for what they parse (dropped:
        only whole indexes are ever stored)."""
        with self._lock:
            executor, self._executor = self._executor, None
            self._stopped = True
        if executor is None:
            return
        executor.shutdown(wait=False, cancel_futures=True)
        _end_workers()


def _end_workers() -> None:
    """End this process's worker processes now. Called by `stop` and again by a parse that
    `stop` interrupted: a submit starts the executor's workers one by one (spawn takes seconds
    on a loaded machine), so one may appear after `stop`'s sweep."""
    import multiprocessing

    workers = multiprocessing.active_children()
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join(timeout=1)
