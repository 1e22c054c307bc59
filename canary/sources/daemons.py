"""A thread pool of daemon threads, so that Ctrl-C ends a run at once.

`concurrent.futures` joins its worker threads when the interpreter exits, so one request stuck
on a slow server held an interrupted run for that request's whole timeout (80-104 s on a cold
run). These threads are daemons: what they were reading is dropped with the process (the cache
only ever holds whole entries), and nothing waits for them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any, TypeVar

_T = TypeVar("_T")
_Task = tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]


class DaemonPool:
    """`submit` and `map` as an executor has them; threads start as work arrives."""

    def __init__(self, workers: int, name: str) -> None:
        self.workers = max(1, workers)
        self.name = name
        self._tasks: queue.SimpleQueue[_Task | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[..., _T], *args: Any) -> Future[_T]:
        future: Future[_T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self.name}: submit after shutdown")
            self._tasks.put((future, fn, args))
            if len(self._threads) < self.workers:
                thread = threading.Thread(
                    target=self._work, name=f"{self.name}-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
        return future

    def map(self, fn: Callable[[Any], _T], items: Iterable[Any]) -> list[_T]:
        """Every result in order; the first error raised, the rest of the work cancelled."""
        futures = [self.submit(fn, item) for item in items]
        try:
            return [future.result() for future in futures]
        finally:
            for future in futures:
                future.cancel()

    def _work(self) -> None:
        while (task := self._tasks.get()) is not None:
            future, fn, args = task
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args)
            except BaseException as exc:  # the caller sees it, as with an executor
                future.set_exception(exc)
            else:
                future.set_result(result)

    def shutdown(self) -> None:
        """Cancel what has not started and let the threads end; never waits for them."""
        with self._lock:
            self._closed = True
            threads = len(self._threads)
        while True:
            try:
                task = self._tasks.get_nowait()
            except queue.Empty:
                break
            if task is not None:
                task[0].cancel()
        for _ in range(threads):
            self._tasks.put(None)
