"""Judge proposed checks on the releases read, and say in the file where each fails.

A reviewer should tell real breakage from a misread at a glance. Each proposal is judged by
the engine on the newest release in range and on the lowest: one that holds on only one end
is bisected over the releases between. One that appears later than the client's lowest
release is gated there (`since`) with a comment saying so; one that broke within the range
stays as it is, red, with a comment naming the first release it fails on. One that fails on
both ends is judged on the releases between, lowest first, until it holds: a module added
within the range and changed again is gated from where it appears, and bisected from there;
a name or a text that holds nowhere in range (an unguarded import of a name removed before
it, a rewrite written for older releases: `is_torch_tpu_available()`) is a patch broken on
every release the client supports: `severity: info`, a warning on every run, its comment
saying where it last held (last_held.py).
A method that stops holding on the release where a method of the same class with a near name
starts, which the client also uses (trl renamed `GRPOTrainer._get_per_token_logps` to
`_get_per_token_logps_and_entropies` in 0.20.0, unsloth rewrites both), was renamed under a
client that handles both: it is gated `until` there, not red.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial

from packaging.version import Version

from canary.analysis.similar import close_matches
from canary.engine.judge import VersionRun
from canary.engine.outcomes import Status
from canary.matrix.model import Check, Matrix
from canary.reports.grid import plural
from canary.scan.downstream.ranges import admits, conjoin
from canary.scan.proposing.last_held import Stale, mark_stale
from canary.scan.proposing.propose import Proposal
from canary.scan.upstream.releases import Reading

_OK = (Status.PASS, Status.SKIP)
_NEAR = 0.6  # how near a method's new name is to its old one (difflib's ratio)
#: how the comment above a check gated where it starts holding begins (explained once, atop)
GATED = "scan: holds"


@dataclass
class _Bisection:
    """Where between the ends a check starts (`rising`) or stops holding: labels[low] is on
    the old side, labels[high] on the new side."""

    check: Check
    proposal: Proposal
    rising: bool
    detail: str
    low: int
    high: int

    @property
    def middle(self) -> int:
        return (self.low + self.high) // 2

    def narrow(self, holds: bool) -> None:
        if holds == self.rising:
            self.high = self.middle
        else:
            self.low = self.middle


def settle(
    matrix: Matrix, proposals: list[Proposal], reading: Reading
) -> tuple[list[Proposal], list[Proposal], list[Proposal]]:
    """Gate or annotate each proposal (the checks of `matrix`, in the same order); return
    those to leave out, names the client guards (`severity: info`) that neither end has,
    which would warn on every release of the range; those broken on every release in range
    that the client does not guard, now `severity: info` with a comment (last_held.py); and
    the names the client attaches (attached.py) that no release read binds, its own.

    The bisections advance in step, each release between the ends read once per step and
    let go before the next, so memory holds the two ends and one release at a time.
    """
    if not reading.runs:
        return [], [], []
    ends = [reading.judging(matrix, run.target.label) for run in reading.runs]
    pending, absent, probes = [], [], []
    stale: list[Stale] = []
    for check, proposal in zip(matrix.checks, proposals, strict=True):
        verdicts = {run.target.label: run.judge(check) for run in ends}
        if _fails_on_both(verdicts) and len(reading.labels) > 2 and not proposal.gate:
            probes.append((check, proposal, verdicts))
            continue
        if _guarded_and_absent(proposal, verdicts):
            absent.append(proposal)
            continue
        every = _everywhere(verdicts, reading) and _broken(proposal, verdicts)
        if every and not proposal.gate and _unguarded(proposal):
            stale.append(Stale(check, proposal, next(iter(verdicts.values()))[1]))
            continue
        bisection = _judge_ends(check, proposal, verdicts, len(reading.labels))
        if bisection is not None:
            pending.append(bisection)
    _remember(ends)
    placing = _Placing(reading, matrix.upstream, len(probes) + len(_unsettled(pending)))
    first = _first_holding(matrix, [check for check, _, _ in probes], reading)
    for check, proposal, verdicts in probes:
        placing.placed(check.id not in first)
        if check.id in first:
            pending.append(_appears(check, proposal, verdicts, first[check.id], reading))
            placing.placed(not _unsettled(pending[-1:]))
        elif _guarded_and_absent(proposal, verdicts) or not _unguarded(proposal):
            absent.append(proposal)  # tolerated, and holding on no release: dead code here
        elif _broken(proposal, verdicts):
            stale.append(Stale(check, proposal, next(iter(verdicts.values()))[1]))
        else:  # warns (a name bound only once upstream code runs): said, kept
            _judge_ends(check, proposal, verdicts, len(reading.labels))
    while unsettled := _unsettled(pending):
        by_label: dict[str, list[_Bisection]] = {}
        for bisection in unsettled:
            by_label.setdefault(reading.labels[bisection.middle], []).append(bisection)
        for label, group in by_label.items():
            holding = _holding(matrix, [bisection.check for bisection in group], label, reading)
            for bisection in group:
                bisection.narrow(bisection.check.id in holding)
                placing.placed(not _unsettled([bisection]))
    renamed = _renamed(pending)
    for bisection in pending:
        if not _gate(bisection, reading, renamed.get(id(bisection))):
            absent.append(bisection.proposal)  # tolerated where it runs, absent there: dead
    own: list[Proposal] = []
    if stale:
        lowest, newest = reading.labels[0], reading.labels[-1]
        span = lowest if lowest == newest else f"{lowest} to {newest}"
        judged = partial(_holding, matrix, reading=reading)
        own = mark_stale(stale, reading.older(), judged, reading.runs[0], span)
    kept = [item.proposal for item in stale if all(item.proposal is not p for p in own)]
    return absent, kept, own


def _unsettled(bisections: list[_Bisection]) -> list[_Bisection]:
    """The bisections with a release left between their sides."""
    return [b for b in bisections if b.high - b.low > 1]


class _Placing:
    """The status line's phase while the checks that change between the ends are placed:
    `trl: bisecting 12 checks: 5/12 placed, 9 more releases read`, a count that ends (each
    check counted once it is placed, the releases the bisections open counted beside)."""

    def __init__(self, reading: Reading, upstream: str, checks: int) -> None:
        self.progress = reading.progress if checks else None
        if self.progress is not None:
            what = f"{upstream}: bisecting {plural(checks, 'check')}"
            self.progress.phase(what, checks, "placed")

    def placed(self, done: bool = True) -> None:
        if done and self.progress is not None:
            self.progress.advance()


def _method(proposal: Proposal) -> tuple[str, str, str] | None:
    """(module, class, method) of a check that a method exists (`function: C.m` with nothing
    more, or `class: C` with `methods: [m]`), else None."""
    subject = proposal.subject
    if subject.alternatives or not subject.name:
        return None
    if subject.key == "function" and proposal.assertion is None and "." in subject.name:
        owner, name = subject.name.rsplit(".", 1)
        return subject.module, owner, name
    if subject.key == "class" and proposal.assertion == "methods" and len(proposal.values) == 1:
        return subject.module, subject.name, proposal.values[0]
    return None


def _renamed(pending: list[_Bisection]) -> dict[int, _Bisection]:
    """id of the bisection of a method that stops holding -> that of the method of the same
    class with a near name (as the engine's did-you-mean finds it) starting on that release."""
    starting = [(b, m) for b in pending if b.rising and (m := _method(b.proposal))]
    found: dict[int, _Bisection] = {}
    for bisection in pending:
        old = None if bisection.rising else _method(bisection.proposal)
        if old is None:
            continue
        for successor, new in starting:
            same = new[:2] == old[:2] and successor.high == bisection.high
            if same and close_matches(old[2], [new[2]], 1, _NEAR):
                found[id(bisection)] = successor
    return found


def _holding(matrix: Matrix, checks: list[Check], label: str, reading: Reading) -> set[str]:
    """The ids of the `checks` that hold on release `label`, judged alone (remembered for
    those, the release stays closed on a second scan). Only the statuses are read: no "did
    you mean" hint is sought for a failure (a module's names listed, so indexed whole)."""
    run = reading.judging(dataclasses.replace(matrix, checks=tuple(checks)), label, hints=False)
    holding = {check.id for check in checks if run.judge(check, hints=False)[0] in _OK}
    _remember([run])
    if reading.progress is not None:
        reading.progress.read_one()
    return holding


def _broken(proposal: Proposal, verdicts: dict[str, tuple[Status, str]]) -> bool:
    """Fails on each end: `fail`, or `warn` of a check the client tolerates failing (a `warn`
    of another is the engine's: a name bound only once upstream code runs, no break)."""
    failing = (Status.FAIL, Status.WARN) if proposal.severity == "info" else (Status.FAIL,)
    return all(status in failing for status, _ in verdicts.values())


def _everywhere(verdicts: dict[str, tuple[Status, str]], reading: Reading) -> bool:
    """Fails (or warns) on each end when the ends are every release in range."""
    statuses = [status for status, _ in verdicts.values()]
    every = 0 < len(reading.labels) <= 2 and len(statuses) == len(reading.labels)
    return every and all(s in (Status.FAIL, Status.WARN) for s in statuses)


def _fails_on_both(verdicts: dict[str, tuple[Status, str]]) -> bool:
    """Fails (or warns) on the newest and the lowest release, no source fault on either."""
    statuses = [status for status, _ in verdicts.values()]
    return len(statuses) == 2 and all(s in (Status.FAIL, Status.WARN) for s in statuses)


def _first_holding(matrix: Matrix, checks: list[Check], reading: Reading) -> dict[str, int]:
    """Check id -> the index in `reading.labels` of the first release between the ends it
    holds on, for the checks failing on both ends (a module added, then changed again):
    one release at a time from the lowest up, each judging only the checks still unplaced."""
    found: dict[str, int] = {}
    for index in range(1, len(reading.labels) - 1):
        left = [check for check in checks if check.id not in found]
        if not left:
            break
        found |= dict.fromkeys(_holding(matrix, left, reading.labels[index], reading), index)
    return found


def _appears(
    check: Check,
    proposal: Proposal,
    verdicts: dict[str, tuple[Status, str]],
    first: int,
    reading: Reading,
) -> _Bisection:
    """Gate a check that holds from release `first` on (not on the lowest) there, and
    bisect where it stops holding again before the newest."""
    lowest = reading.labels[0]
    detail = verdicts[lowest][1]
    proposal.gate = f">={reading.labels[first]}"
    proposal.notes.append(_gated(reading.labels[first], lowest, detail))
    newest = next(iter(verdicts))
    return _Bisection(check, proposal, False, verdicts[newest][1], first, len(reading.labels) - 1)


def _guarded_and_absent(proposal: Proposal, verdicts: dict[str, tuple[Status, str]]) -> bool:
    """A name (no text sought in it) the client tolerates missing, missing on both ends (its
    `severity: info` failing; a `warn` of a name bound only as the upstream runs is no
    absence); not one it sets itself (attached.py), which older releases tell from its own."""
    statuses = {status for status, _ in verdicts.values()}
    tolerated = proposal.severity == "info" and proposal.assertion is None
    missing = tolerated and len(verdicts) == 2 and statuses == {Status.WARN}
    return missing and not proposal.attached


def _unguarded(proposal: Proposal) -> bool:
    """A use the client does not tolerate failing, or a name it sets (attached.py): either
    broken on every release in range is said where it last held (last_held.py)."""
    return proposal.severity != "info" or proposal.attached


def _remember(runs: list[VersionRun]) -> None:
    """Keep what the runs concluded, so scanning again answers from it (as `canary check`)."""
    for run in runs:
        if run.verdicts is not None:
            run.verdicts.save()


def _judge_ends(
    check: Check, proposal: Proposal, verdicts: dict[str, tuple[Status, str]], releases: int
) -> _Bisection | None:
    """Annotate what fails on the ends (`verdicts`, newest first); a check holding on one end
    only is to be bisected over the `releases` in range."""
    ends = list(verdicts)
    failing = {label: v for label, v in verdicts.items() if v[0] not in _OK}
    if not failing:
        return None
    newest, lowest = ends[0], ends[-1]
    if len(failing) == 1 and len(ends) == 2:  # within the client's own gate, if it has one
        (label, (status, detail)) = next(iter(failing.items()))
        if status is not Status.ERROR:
            return _Bisection(check, proposal, label == lowest, detail, 0, releases - 1)
    for label, (status, detail) in failing.items():
        role = "newest in range" if label == newest else "lowest in range"
        where = label if len(ends) == 1 else f"{label} ({role})"
        word = {Status.WARN: "WARNS", Status.ERROR: "ERROR"}.get(status, "FAILS")
        proposal.notes.append(f"{word} on {where}: {detail}")
    return None


def _gate(bisection: _Bisection, reading: Reading, successor: _Bisection | None = None) -> bool:
    """Gate or annotate the bisected check; False when it is dead code: the client runs it
    only on releases without the contract and tolerates its absence there."""
    first = reading.labels[bisection.high]
    lowest = reading.labels[0]
    proposal = bisection.proposal
    if successor is not None:  # renamed on a release where the client uses the new name
        gate = conjoin([proposal.gate, f"<{first}"])
        if not _admitted(gate, reading):
            return _runs_without(bisection, reading)
        proposal.gate = gate
        name = successor.proposal.subject.name
        if successor.proposal.assertion == "methods":
            name = f"{name}.{successor.proposal.values[0]}"
        proposal.notes.append(
            f"scan: holds until {reading.labels[bisection.low]}; from {first} on the class has"
            f" {name} instead, which your code also uses ({successor.check.id}) -- gated"
        )
    elif bisection.rising:  # the client's own gate (`< 5.0` of its code) is kept beside it
        gate = conjoin([f">={first}", proposal.gate])
        if not _admitted(gate, reading):
            return _runs_without(bisection, reading)
        proposal.gate = gate
        proposal.notes.append(_gated(first, lowest, bisection.detail))
    else:  # broke within the client's range: exactly what canary is for, so it stays red
        _held_until(proposal, reading.labels[bisection.low])
        proposal.notes.append(
            f"FAILS from {first} on (newest in range {reading.labels[-1]}), held before:"
            f" {bisection.detail}"
        )
    return True


def _admitted(gate: str, reading: Reading) -> bool:
    return any(admits(gate, Version(label)) for label in reading.labels)


def _runs_without(bisection: _Bisection, reading: Reading) -> bool:
    """A check the client's own gate confines to releases that lack its contract (where it
    starts holding, the gate skips it): no gate joins the two, which no release would
    satisfy. The client's code runs there and breaks, a real red on each of them, unless it
    tolerates the absence (then it is dead code: False, for the head of the file)."""
    proposal = bisection.proposal
    if proposal.severity == "info":
        return False
    runs = [label for label in reading.labels if admits(proposal.gate, Version(label))]
    where = runs[0] if len(runs) == 1 else f"{runs[0]} to {runs[-1]}"
    proposal.notes.append(
        f"FAILS on every release your code gates it to ({proposal.gate}: {where}), where it"
        f" runs: {bisection.detail}"
    )
    return True


def _gated(first: str, lowest: str, detail: str) -> str:
    """The note above a check gated where it starts holding (`_held_until` may narrow it)."""
    return f"{GATED} from {first} on, not on {lowest} (lowest in range): {detail} -- gated"


def _held_until(proposal: Proposal, last: str) -> None:
    """A check gated where it appears (`holds from V on`) that stops holding again: its
    note says the releases it holds on (`holds from V to W`, `holds only on V`), not more."""
    for index, note in enumerate(proposal.notes):
        start = note.removeprefix(f"{GATED} from ").split(" ", 1)[0]
        if note.startswith(f"{GATED} from {start} on,"):
            held = f"only on {start}" if start == last else f"from {start} to {last}"
            proposal.notes[index] = note.replace(f"from {start} on,", f"{held},", 1)
