"""Lines as `ast` counts them.

`str.splitlines` also breaks on form feed, U+2028, U+0085, \\x1c and friends, which Python's
tokenizer does not count: a span cut with it starts at the wrong line, so `contains` fails and
`not_contains` passes on the wrong text.
"""

from __future__ import annotations

import re

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_BREAK = re.compile(r"\r\n|\r|\n")


class Lines:
    """A text cut into lines once (after each \\n, \\r\\n or lone \\r: the only breaks
    Python's tokenizer counts), then sliced for each span a check reads."""

    __slots__ = ("_ends_kept", "_parts")

    def __init__(self, text: str):
        self._ends_kept = "\r" in text
        # str.split is several times faster than the regex; joining a span's parts with "\n"
        # spares putting one back on every line of the module
        self._parts = _LINE.findall(text) if self._ends_kept else text.split("\n")

    def segment(self, start: int, end: int) -> str:
        """Lines `start` to `end` (1-based, inclusive), line endings kept."""
        if start > end:
            return ""
        if self._ends_kept:
            return "".join(self._parts[start - 1 : end])
        joined = "\n".join(self._parts[start - 1 : end])
        # every part but the last (what follows the text's last "\n") ended with a "\n"
        return joined + "\n" if end < len(self._parts) else joined


def line_at(text: str, offset: int) -> int:
    """1-based line of `offset` in `text`, counted like `Lines`."""
    return len(_BREAK.findall(text, 0, offset)) + 1
