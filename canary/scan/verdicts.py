"""Judge proposed checks on the releases read, and say in the file which fail there.

A reviewer should tell real breakage from a misread at a glance: each proposed check that does
not pass on the newest release in range (or on the lowest supported one) gets a YAML comment
above it with the engine's own detail.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from canary.engine import VersionRun
from canary.matrix import Matrix
from canary.outcomes import Status

_ROLES = ("newest in range", "lowest in range")
_ID_LINE = re.compile(r"^(?P<pad> *)- id: (?P<id>[a-z0-9-]+)\s*$")


def judge(matrix: Matrix, runs: list[VersionRun], ids: Iterable[str]) -> dict[str, list[str]]:
    """Comment lines per check id: one per release read where the check does not pass."""
    wanted = set(ids)
    notes: dict[str, list[str]] = {}
    for role, run in zip(_ROLES, runs, strict=False):
        label = run.target.label if len(runs) > 1 or run.target.label != "local" else "--source"
        where = f"{label} ({role})" if len(runs) > 1 else label
        for check in matrix.checks:
            if check.id not in wanted:
                continue
            status, detail = run.judge(check)
            if status in (Status.PASS, Status.SKIP):
                continue
            detail = detail.removesuffix(f" -- {check.why}") if check.why else detail
            word = {Status.WARN: "WARNS", Status.ERROR: "ERROR"}.get(status, "FAILS")
            notes.setdefault(check.id, []).append(f"{word} on {where}: {detail}")
    return notes


def annotate(text: str, notes: dict[str, list[str]]) -> str:
    """`text` with each check's notes as comments right above its `- id:` line."""
    if not notes:
        return text
    lines = []
    for line in text.splitlines(keepends=True):
        found = _ID_LINE.match(line)
        if found and found["id"] in notes:
            pad = found["pad"]
            lines += [f"{pad}# {_one_line(note)}\n" for note in notes[found["id"]]]
        lines.append(line)
    return "".join(lines)


def _one_line(note: str) -> str:
    return " ".join(note.split())
