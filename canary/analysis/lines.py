"""Lines as `ast` counts them.

`str.splitlines` also breaks on form feed, U+2028, U+0085, \\x1c and friends, which Python's
tokenizer does not count: a span cut with it starts at the wrong line, so `contains` fails and
`not_contains` passes on the wrong text.
"""

from __future__ import annotations

import bisect
import re

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_BREAK = re.compile(r"\r\n|\r|\n")


#: characters per block whose newlines are counted ahead: a span's lines are then found from
#: its block's start by a few `str.find`s
_BLOCK = 2048


class Lines:
    """A text whose spans a check reads cut at the only breaks Python's tokenizer counts (\n,
    \r\n, a lone \r). Cutting every line of a module to read one or two spans was most of
    the cost (2,300 texts, 150 MB, per re-judge): a text without \r has only its newlines
    counted per block, once."""

    __slots__ = ("_marks", "_parts", "_text")

    def __init__(self, text: str):
        self._text = text
        # a text with \r (rare) is cut into lines once, as the regex defines them
        self._parts = _LINE.findall(text) if "\r" in text else None
        self._marks: list[int] | None = None  # the newlines before each block, so far

    def segment(self, start: int, end: int) -> str:
        """Lines `start` to `end` (1-based, inclusive), line endings kept."""
        if start > end:
            return ""
        if self._parts is not None:
            return "".join(self._parts[start - 1 : end])
        return self._text[self._offset(start) : self._offset(end + 1)]

    def line_of(self, offset: int) -> int:
        """The 1-based line `offset` is on (of a text without \r)."""
        block = offset // _BLOCK
        marks = self._counted(block)
        block = min(block, len(marks) - 1)
        return marks[block] + self._text.count("\n", block * _BLOCK, offset) + 1

    def _offset(self, line: int) -> int:
        """Where `line` starts (the text's length past its last line)."""
        text = self._text
        wanted = line - 1  # the newlines before it
        marks = self._counted(None, wanted)
        block = max(bisect.bisect_left(marks, wanted) - 1, 0)
        at = block * _BLOCK
        for _ in range(wanted - marks[block]):
            at = text.find("\n", at) + 1
            if at == 0:
                return len(text)
        return at

    def _counted(self, block: int | None, newlines: int = 0) -> list[int]:
        """The newlines before each block, counted up to `block` (or past `newlines`), and
        no further: a check reads a few spans of a module, often near its top."""
        marks = self._marks
        if marks is None:
            marks = self._marks = [0]
        text, size = self._text, len(self._text)
        while (len(marks) - 1) * _BLOCK < size and (
            len(marks) <= block if block is not None else marks[-1] <= newlines
        ):
            at = (len(marks) - 1) * _BLOCK
            marks.append(marks[-1] + text.count("\n", at, at + _BLOCK))
        return marks


def line_at(text: str, offset: int) -> int:
    """1-based line of `offset` in `text`, counted like `Lines`."""
    return len(_BREAK.findall(text, 0, offset)) + 1
