"""Flights: of threads asking for one key at once, one makes it and the rest take what it made."""

from __future__ import annotations

import threading

import pytest

from canary.analysis.budget import MAX_TOKENS, over_budget
from canary.analysis.flight import Flights


def test_one_maker_while_others_wait() -> None:
    flights = Flights()
    made: dict[str, int] = {}
    calls: list[str] = []
    started, release = threading.Event(), threading.Event()

    def make() -> int:
        calls.append(threading.current_thread().name)
        started.set()
        release.wait(5)  # the others arrive while this one is making
        made["k"] = 7
        return 7

    results: list[int] = []
    first = threading.Thread(
        target=lambda: results.append(flights.once("k", lambda: made.get("k"), make))
    )
    first.start()
    started.wait(5)
    others = [
        threading.Thread(
            target=lambda: results.append(flights.once("k", lambda: made.get("k"), make))
        )
        for _ in range(3)
    ]
    for thread in others:
        thread.start()
    release.set()
    for thread in (first, *others):
        thread.join(5)
    assert results == [7, 7, 7, 7]
    assert len(calls) == 1


def test_a_failed_make_is_tried_again_by_the_next() -> None:
    flights = Flights()
    attempts: list[int] = []

    def failing() -> int:
        attempts.append(1)
        raise ValueError("does not parse")

    for _ in range(2):
        with pytest.raises(ValueError):
            flights.once("k", lambda: None, failing)
    assert len(attempts) == 2
    assert flights.once("k", lambda: None, lambda: 3) == 3


def test_budget_counts_only_texts_that_can_exceed_it() -> None:
    assert over_budget("x " * (MAX_TOKENS // 2)) is None  # MAX_TOKENS characters at most
    assert over_budget("x\n" * MAX_TOKENS) is None  # exactly the budget
    assert over_budget("x\n" * (MAX_TOKENS + 1)) == f"over {MAX_TOKENS} tokens, too costly to parse"
    assert over_budget(b"x\n" * (MAX_TOKENS + 1)) is not None
