"""Proposed matrices written to disk: a new file (never over one), or the missing checks
merged into the upstream's matrix in the merge folder, in that file's own line ends.
"""

from __future__ import annotations

import re
from pathlib import Path

from canary.safety.writes import replace_file
from canary.scan.proposing.matrices import Proposed
from canary.scan.upstream.names import matrix_file
from canary.scan.writing.merging import Existing, merge_target

_LONE_LF = re.compile(r"(?<!\r)\n")


def write_new(folder: Path, proposed: Proposed) -> Path:
    """Write `proposed` as a new matrix file in `folder`; the path written."""
    target = folder / matrix_file(proposed.upstream)
    replace_file(folder, target, proposed.text())
    return target


def merge_into(existing: list[Existing], proposed: Proposed) -> tuple[Path, int]:
    """Append the missing proposals to the matrix of `existing` they belong in; that file's
    path and how many checks were added."""
    target, others = merge_target(proposed.upstream, existing)
    with open(target.path, encoding="utf-8", newline="") as handle:  # its own line ends
        text = handle.read()
    merged, added = proposed.merged(text, str(target.path), others)
    if added:
        replace_file(target.path.parent, target.path, in_line_ends_of(text, merged))
    return target.path, added


def in_line_ends_of(original: str, merged: str) -> str:
    """`merged` with the new lines ended as every line of `original` is, when that is CRLF."""
    if "\r\n" in original and not _LONE_LF.search(original):
        return _LONE_LF.sub("\r\n", merged)
    return merged
