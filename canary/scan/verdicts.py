"""Judge proposed checks on the releases read, and say in the file where each fails.

A reviewer should tell real breakage from a misread at a glance. Each proposal is judged by
the engine on the newest release in range and on the lowest: one that holds on only one end
is bisected over the releases between to find where it starts (or stops) holding, gated there
(`since`/`until`) with a comment saying so; one that fails on both ends keeps a comment with
the engine's own detail.
"""

from __future__ import annotations

from collections.abc import Callable

from canary.matrix import Check, Matrix
from canary.outcomes import Status
from canary.scan.propose import Proposal
from canary.scan.releases import Reading

_OK = (Status.PASS, Status.SKIP)


def settle(matrix: Matrix, proposals: list[Proposal], reading: Reading) -> None:
    """Gate or annotate each proposal (the checks of `matrix`, in the same order)."""
    if not reading.runs:
        return
    for check, proposal in zip(matrix.checks, proposals, strict=True):
        _settle(check, proposal, reading)


def _verdict(reading: Reading, label: str, check: Check) -> tuple[Status, str]:
    status, detail = reading.run(label).judge(check)
    return status, detail.removesuffix(f" -- {check.why}") if check.why else detail


def _settle(check: Check, proposal: Proposal, reading: Reading) -> None:
    ends = [run.target.label for run in reading.runs]
    verdicts = {label: _verdict(reading, label, check) for label in ends}
    failing = {label: v for label, v in verdicts.items() if v[0] not in _OK}
    if not failing:
        return
    newest, lowest = ends[0], ends[-1]
    one_sided = len(failing) == 1 and len(ends) == 2 and not proposal.gate
    if one_sided and (status := failing.get(lowest)) and status[0] is not Status.ERROR:
        first = _first(reading.labels, lambda label: _holds(reading, label, check))
        proposal.gate = f">={first}"
        proposal.notes.append(
            f"scan: holds from {first} on, not on {lowest} (lowest in range): {status[1]}"
            " -- gated; unless the client only reaches it on newer releases, its range is wrong"
        )
        return
    if one_sided and (status := failing.get(newest)) and status[0] is not Status.ERROR:
        first = _first(reading.labels, lambda label: not _holds(reading, label, check))
        proposal.gate = f"<{first}"
        proposal.notes.append(
            f"scan: holds until {first}: {status[1]} -- gated; a real break if the client"
            f" still relies on it from {first} on"
        )
        return
    for label, (status, detail) in failing.items():
        where = label if len(ends) == 1 else f"{label} ({_role(label, ends)})"
        word = {Status.WARN: "WARNS", Status.ERROR: "ERROR"}.get(status, "FAILS")
        proposal.notes.append(f"{word} on {where}: {detail}")


def _role(label: str, ends: list[str]) -> str:
    return "newest in range" if label == ends[0] else "lowest in range"


def _holds(reading: Reading, label: str, check: Check) -> bool:
    return _verdict(reading, label, check)[0] in _OK


def _first(labels: list[str], condition: Callable[[str], bool]) -> str:
    """The first label (oldest first) where `condition` holds, given that it holds on the last
    and not on the first: a bisection, reading a handful of releases."""
    low, high = 0, len(labels) - 1
    while high - low > 1:
        middle = (low + high) // 2
        if condition(labels[middle]):
            high = middle
        else:
            low = middle
    return labels[high]
