"""Hints across versions: a check that never passes, a check whose failures are a prefix."""

from __future__ import annotations

import pytest

from canary.engine.hints import NEVER_PASSES, with_hints
from canary.engine.outcomes import Result, Status

P, F, S, E, W, X = Status.PASS, Status.FAIL, Status.SKIP, Status.ERROR, Status.WARN, Status.XFAIL


def results(*cells: tuple[str, Status], check: str = "c") -> list[Result]:
    return [Result("up", check, version, status, "why") for version, status in cells]


@pytest.mark.parametrize(
    ("cells", "hint"),
    [
        ((("1.0", F), ("1.1", F), ("main", F)), NEVER_PASSES),
        ((("1.0", S), ("1.1", F), ("1.2", W)), NEVER_PASSES),
        ((("1.0", F),), ""),  # one version says nothing about the others
        (
            (("1.2", P), ("1.0", F), ("1.10", P), ("1.1", F)),
            'passes from 1.2 on: add since: "1.2"?',
        ),
        ((("1.0", F), ("1.1", P), ("1.2", F)), ""),  # a gap, not a prefix
        ((("1.0", F), ("1.1", P), ("main", F)), 'passes from 1.1 on: add since: "1.1"?'),
        ((("1.0", F), ("1.1", E), ("1.2", P)), ""),  # an unreadable version: unknown
        ((("1.0", X), ("1.1", P)), ""),  # an acknowledged break is not a failure
        ((("1.0", P), ("1.1", P)), ""),
    ],
)
def test_hint_goes_on_every_failure_of_the_check(cells, hint):
    other = results(("1.0", F), ("1.1", P), check="other")
    hinted = with_hints(results(*cells) + other)
    mine = [r for r in hinted if r.check == "c"]
    for before, after in zip(results(*cells), mine, strict=True):
        if hint and before.status in (F, W):
            assert after.detail == f"why; {hint}"
        else:
            assert after == before
    assert hinted[-2:] == [
        Result("up", "other", "1.0", F, 'why; passes from 1.1 on: add since: "1.1"?'),
        other[1],
    ]
