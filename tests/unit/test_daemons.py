"""DaemonPool: an executor's answers (order, errors, cancellation) from daemon threads."""

from __future__ import annotations

import threading

import pytest

from canary.sources.daemons import DaemonPool


def test_map_keeps_order_and_uses_daemon_threads():
    pool = DaemonPool(3, "t")
    seen: list[bool] = []

    def square(n: int) -> int:
        seen.append(threading.current_thread().daemon)
        return n * n

    try:
        assert pool.map(square, range(20)) == [n * n for n in range(20)]
    finally:
        pool.shutdown()
    assert seen and all(seen)
    assert len({t.name for t in threading.enumerate() if t.name.startswith("t-")}) <= 3


def test_the_first_error_is_raised_and_the_rest_cancelled():
    pool = DaemonPool(1, "e")
    gate = threading.Event()
    ran: list[int] = []

    def work(n: int) -> int:
        if n == 0:
            gate.wait()
            raise ValueError("boom")
        ran.append(n)
        return n

    futures = [pool.submit(work, n) for n in range(5)]
    assert futures[3].cancel()  # not started: one worker is held by the first
    gate.set()
    with pytest.raises(ValueError, match="boom"):
        futures[0].result()
    assert [f.result() for f in (futures[1], futures[2], futures[4])] == [1, 2, 4]
    assert ran == [1, 2, 4]
    pool.shutdown()
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(work, 9)


def test_shutdown_cancels_what_has_not_started():
    pool = DaemonPool(1, "s")
    started, gate = threading.Event(), threading.Event()

    def hold() -> bool:
        started.set()
        return gate.wait()

    first = pool.submit(hold)
    waiting = [pool.submit(int, "1") for _ in range(3)]
    started.wait()
    pool.shutdown()
    gate.set()
    assert first.result() is True
    assert all(f.cancelled() for f in waiting)
