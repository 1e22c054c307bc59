"""Judge proposed checks on the releases read, and say in the file where each fails.

A reviewer should tell real breakage from a misread at a glance. Each proposal is judged by
the engine on the newest release in range and on the lowest: one that holds on only one end
is bisected over the releases between. One that appears later than the client's lowest
release is gated there (`since`) with a comment saying so; one that broke within the range
stays as it is, red, with a comment naming the first release it fails on; one that fails on
both ends keeps a comment with the engine's own detail.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from canary.engine.judge import VersionRun
from canary.engine.outcomes import Status
from canary.matrix.model import Check, Matrix
from canary.scan.propose import Proposal
from canary.scan.releases import Reading

_OK = (Status.PASS, Status.SKIP)


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


def settle(matrix: Matrix, proposals: list[Proposal], reading: Reading) -> list[Proposal]:
    """Gate or annotate each proposal (the checks of `matrix`, in the same order); return
    those to leave out: names the client guards (`severity: info`) that neither end has,
    which would warn on every release of the range.

    The bisections advance in step, each release between the ends read once per step and
    let go before the next, so memory holds the two ends and one release at a time.
    """
    if not reading.runs:
        return []
    ends = [reading.judging(matrix, run.target.label) for run in reading.runs]
    pending, absent = [], []
    for check, proposal in zip(matrix.checks, proposals, strict=True):
        verdicts = {run.target.label: _verdict(run, check) for run in ends}
        if _guarded_and_absent(proposal, verdicts):
            absent.append(proposal)
            continue
        bisection = _judge_ends(check, proposal, verdicts, len(reading.labels))
        if bisection is not None:
            pending.append(bisection)
    _remember(ends)
    while unsettled := [b for b in pending if b.high - b.low > 1]:
        by_label: dict[str, list[_Bisection]] = {}
        for bisection in unsettled:
            by_label.setdefault(reading.labels[bisection.middle], []).append(bisection)
        for label, group in by_label.items():
            # only the checks bisected here: remembered for those, the release stays closed
            checks = tuple(bisection.check for bisection in group)
            run = reading.judging(dataclasses.replace(matrix, checks=checks), label)
            for bisection in group:
                bisection.narrow(_verdict(run, bisection.check)[0] in _OK)
            _remember([run])
    for bisection in pending:
        _gate(bisection, reading)
    return absent


def _guarded_and_absent(proposal: Proposal, verdicts: dict[str, tuple[Status, str]]) -> bool:
    """A name (no text sought in it) the client tolerates missing, missing on both ends."""
    statuses = {status for status, _ in verdicts.values()}
    return len(verdicts) == 2 and statuses == {Status.WARN} and proposal.assertion is None


def _remember(runs: list[VersionRun]) -> None:
    """Keep what the runs concluded, so scanning again answers from it (as `canary check`)."""
    for run in runs:
        if run.verdicts is not None:
            run.verdicts.save()


def _verdict(run: VersionRun, check: Check) -> tuple[Status, str]:
    status, detail = run.judge(check)
    return status, detail.removesuffix(f" -- {check.why}") if check.why else detail


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
    if len(failing) == 1 and len(ends) == 2 and not proposal.gate:
        (label, (status, detail)) = next(iter(failing.items()))
        if status is not Status.ERROR:
            return _Bisection(check, proposal, label == lowest, detail, 0, releases - 1)
    for label, (status, detail) in failing.items():
        role = "newest in range" if label == newest else "lowest in range"
        where = label if len(ends) == 1 else f"{label} ({role})"
        word = {Status.WARN: "WARNS", Status.ERROR: "ERROR"}.get(status, "FAILS")
        proposal.notes.append(f"{word} on {where}: {detail}")
    return None


def _gate(bisection: _Bisection, reading: Reading) -> None:
    first = reading.labels[bisection.high]
    lowest = reading.labels[0]
    proposal = bisection.proposal
    if bisection.rising:
        proposal.gate = f">={first}"
        proposal.notes.append(
            f"scan: holds from {first} on, not on {lowest} (lowest in range):"
            f" {bisection.detail} -- gated; unless the client only reaches it on newer"
            " releases, its range is wrong"
        )
    else:  # broke within the client's range: exactly what canary is for, so it stays red
        proposal.notes.append(
            f"FAILS from {first} on (newest in range {reading.labels[-1]}), held before:"
            f" {bisection.detail}"
        )
