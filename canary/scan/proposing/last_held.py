"""Checks broken on every release in range: where each last held, and what is closest now.

A use that no release the client supports satisfies (a `.replace` anchor written for older
releases, an unguarded import of a name upstream removed before the range) is a patch that
does nothing, or fails, wherever the client runs: the loudest thing scan can say, yet red on
every release it would block every pull request without saying what changed. It is proposed
as `severity: info` (every run warns), its comment naming the last release before the range
it held on and, for a text, the closest line on the newest release, so the maintainer fixes
the patch or puts its id under `ignore:`.

The last release is found as bisection finds where a check starts holding in range: the
newest release of each minor series below the range, newest first (24 of them, then series
at doubling distances and the oldest), until one holds, then bisection between it and the
release walked before it, every check still pending on one release judged together and each
release read once (what it concluded remembered in the cache, as for bisection in range).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from packaging.version import Version

from canary.analysis.model import ParseError
from canary.engine.became import explain, held_contract
from canary.engine.judge import VersionRun
from canary.errors import SourceError
from canary.matrix.model import Check
from canary.scan.proposing.propose import Proposal

#: how the comment above such a check begins (explained once, atop the file)
BROKEN = "scan: broken on every release in range"
#: the minor series below the range each walked (their newest release), before doubling steps
NEAR_SERIES = 24

#: the ids of the checks (of those given) that hold on one release
Holding = Callable[[list[Check], str], set[str]]


@dataclass
class Stale:
    """A check failing on both ends and on every release between them."""

    check: Check
    proposal: Proposal
    detail: str  # what the engine says on the newest release in range
    last: str = ""  # the last release before the range it holds on ("": none read)
    low: int = -1  # bisection: older[low] holds (the last found so far) ...
    high: int = 0  # ... older[high] fails (len(older): the lowest in range)

    @property
    def middle(self) -> int:
        return (self.low + self.high) // 2


def mark_stale(
    stale: list[Stale], older: list[str], holding: Holding, newest: VersionRun, span: str
) -> list[Proposal]:
    """Make each check `severity: info` with its comment: the releases in range (`span`),
    the engine's detail there, the last release of `older` (oldest first) it held on, and
    for a text the closest line on `newest`. Return the names the client attaches
    (attached.py) that held on none of them: its own, not upstream's."""
    _find_last(stale, older, holding)
    own = [item for item in stale if item.proposal.attached and not item.last]
    for item in stale:
        if item in own:
            continue
        item.proposal.severity = "info"
        if item.last:
            after = older[item.high] if item.high < len(older) else "the range"
            held = f"last held on {item.last} (gone from {after} on)"
        elif older:
            looked = _series(older)
            reach = f"{looked[-1]} to {looked[0]}" if len(looked) > 1 else looked[0]
            held = f"held on none of {len(looked)} earlier releases read ({reach})"
        else:
            held = "no earlier release on the index"
        closest = _closest(item.check, newest) if item.proposal.assertion in _TEXTS else ""
        item.proposal.notes.append(
            f"{BROKEN} ({span}): {item.detail}; {held}{closest} -- severity info: a warning on"
            " every run; fix the patch, or put the id under `ignore:`"
        )
    return [item.proposal for item in own]


_TEXTS = ("contains", "matches")


def _series(older: list[str]) -> list[str]:
    """The releases before the range looked at, newest first: the newest of each of the
    `NEAR_SERIES` minor series below the range, then of series at doubling distances beyond
    (and the oldest), so a name gone a year ago is reached in a handful of reads and one that
    lived only a few minor series back (a module global from 4.46 to 4.5x) is not skipped."""
    newest: dict[tuple[int, ...], str] = {}
    for label in older:  # oldest first: the last of a series wins
        newest[Version(label).release[:2]] = label
    series = list(reversed(newest.values()))
    far = [NEAR_SERIES - 1 + (1 << step) for step in range(len(series).bit_length())]
    picked = [*series[:NEAR_SERIES], *(series[at] for at in far if at < len(series))]
    return list(dict.fromkeys([*picked, *series[-1:]]))


def _find_last(stale: list[Stale], older: list[str], holding: Holding) -> None:
    """Set each check's last release holding: a walk down the series, then bisection."""
    if not older:
        return
    index = {label: at for at, label in enumerate(older)}
    pending = list(stale)
    for item in pending:
        item.high = len(older)
    for label in _series(older):
        if not pending:
            break
        held = holding([item.check for item in pending], label)
        for item in pending:
            if item.check.id in held:
                item.low = index[label]
            else:
                item.high = index[label]
        pending = [item for item in pending if item.low < 0]
    while unsettled := [i for i in stale if i.low >= 0 and i.high - i.low > 1]:
        by_label: dict[str, list[Stale]] = {}
        for item in unsettled:
            by_label.setdefault(older[item.middle], []).append(item)
        for label, group in by_label.items():
            held = holding([item.check for item in group], label)
            for item in group:
                if item.check.id in held:
                    item.low = item.middle
                else:
                    item.high = item.middle
    for item in stale:
        item.last = older[item.low] if item.low >= 0 else ""


def _closest(check: Check, newest: VersionRun) -> str:
    """`; closest now on V: `line` (path:N)` for a text the newest release lacks, when a line
    of its subject there is alike (canary.engine.became), else nothing."""
    with contextlib.suppress(SourceError, ParseError):
        became = explain(held_contract(check, newest), newest, newest).became
        if became is not None and became.what == "line" and became.places:
            place, label = became.places[0], newest.target.label
            return f"; closest now on {label}: `{place.text}` ({place.path}:{place.line})"
    return ""
