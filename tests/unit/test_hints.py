"""Hints across versions: a check that never passes, a check whose failures are a prefix."""

from __future__ import annotations

import pytest

from canary.engine.hints import NEVER_PASSES, with_absorption_warnings, with_hints
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


NAMED, RENAMED = "", "k renamed to keep by @deprecate_kwarg"
ABSORBED = "k absorbed by **kwargs"


def accepts_row(*cells: tuple[str, Status, str]) -> list[Result]:
    return [Result("up", "c", version, status, detail) for version, status, detail in cells]


@pytest.mark.parametrize(
    ("cells", "warned"),
    [
        (  # transformers 4.51.3 -> 4.52.0: renamed by a decorator, then only absorbed
            (("1.0", P, NAMED), ("1.1", P, RENAMED), ("1.2", P, ABSORBED), ("1.3", P, ABSORBED)),
            {"1.2": f"{ABSORBED}; {RENAMED} on 1.1", "1.3": f"{ABSORBED}; {RENAMED} on 1.1"},
        ),
        (  # named, then a version not judged, then absorbed: in check order, not list order
            (("1.2", P, ABSORBED), ("1.0", P, NAMED), ("1.1", S, "outside")),
            {"1.2": f"{ABSORBED}; k was a parameter on 1.0"},
        ),
        ((("1.0", P, ABSORBED), ("1.1", P, ABSORBED)), {}),  # never named: nothing changed
        ((("1.0", P, NAMED), ("1.1", F, "gone"), ("1.2", P, NAMED)), {}),
        ((("1.0", P, ABSORBED), ("1.1", P, NAMED)), {}),  # the other way is no loss
        (  # the note is read for the name asked, not for a name it starts with
            (("1.0", P, NAMED), ("1.1", P, "kk absorbed by **kwargs")),
            {},
        ),
    ],
)
def test_a_keyword_gone_from_named_to_absorbed_warns_from_then_on(cells, warned):
    row = accepts_row(*cells)
    order = {"up": ["1.0", "1.1", "1.2", "1.3"]}
    out = with_absorption_warnings(row, {("up", "c"): ("k",)}, order)
    for before, after in zip(row, out, strict=True):
        if before.version in warned:
            assert after.status is W
            assert after.detail == (
                f"{warned[before.version]}: a value passed for it is likely ignored now"
            )
        else:
            assert after == before
    assert with_absorption_warnings(row, {}, order) == row  # a check with no accepts
