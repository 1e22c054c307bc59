"""A matrix's `ignore:` list: proposals the maintainer declined, so that scan keeps to it.

Deleting a proposed check is a decision. Recorded as an id (with an optional reason) under
`ignore:`, it holds: `canary scan --merge` and `canary init` never propose that id again. The
list is read with the matrix, so a typo in it is a load error like any other.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from canary.matrix import yamlmarks

KEYS = ("id", "reason")


@dataclass(frozen=True)
class Ignored:
    """One declined proposal: its id, why (optional) and the line it is on."""

    id: str
    reason: str
    line: int


def read_ignored(
    data: Any,
    line: int,
    check_ids: set[str],
    fail: Callable[[int, str], Exception],
    id_pattern: re.Pattern[str],
) -> tuple[Ignored, ...]:
    """The `ignore:` entries: `- id` or `- {id: ID, reason: TEXT}`; `fail(line, message)` makes
    the MatrixError to raise. An id that is also a check of the file is a contradiction."""
    if data is None:
        return ()
    if not isinstance(data, list):
        raise fail(
            line, "ignore: must be a list of check ids (`- ID` or `- {id: ID, reason: ...}`)"
        )
    found: dict[str, Ignored] = {}
    for index, item in enumerate(data):
        at = yamlmarks.line_of(data, index, line)
        if isinstance(item, yamlmarks.MarkedDict):
            unknown = [key for key in item if key not in KEYS]
            if unknown:
                raise fail(at, f"ignore: {unknown[0]}: unknown key (an entry has id and reason)")
            check_id, reason = item.get("id"), item.get("reason", "")
        else:
            check_id, reason = item, ""
        if not isinstance(check_id, str) or not id_pattern.fullmatch(check_id):
            raise fail(at, f"ignore: {check_id!r} is not a check id (lowercase, digits, dashes)")
        if not isinstance(reason, str):
            raise fail(at, f"ignore: {check_id}: reason must be text")
        if check_id in found:
            raise fail(
                at, f"ignore: {check_id} is listed twice (first on line {found[check_id].line})"
            )
        if check_id in check_ids:
            raise fail(at, f"ignore: {check_id} is also a check of this file; keep one of the two")
        found[check_id] = Ignored(check_id, reason, at)
    return tuple(found.values())
