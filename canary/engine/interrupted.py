"""Ctrl-C during a run: one line saying how far it got, exit 130, no traceback.

What was read stays valid (the cache only ever holds whole entries), so the line says so: the
next run starts where this one stopped.
"""

from __future__ import annotations

from canary.errors import CanaryError, ExitCode


class Interrupted(CanaryError):
    """The run was interrupted; `judged` of `planned` versions had their verdicts."""

    exit_code = ExitCode.INTERRUPTED

    def __init__(self, judged: int = 0, planned: int = 0) -> None:
        self.judged, self.planned = judged, planned
        done = f"{judged} of {planned} versions judged; " if planned else ""
        super().__init__(f"interrupted: {done}what was read is cached")
