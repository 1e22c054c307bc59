"""Lines as `ast` counts them.

`str.splitlines` also breaks on form feed, U+2028, U+0085, \\x1c and friends, which Python's
tokenizer does not count: a span cut with it starts at the wrong line, so `contains` fails and
`not_contains` passes on the wrong text.
"""

from __future__ import annotations

import re

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_BREAK = re.compile(r"\r\n|\r|\n")


def source_lines(text: str) -> list[str]:
    """`text` cut after each \\n, \\r\\n or lone \\r (line endings kept), the only breaks
    Python's tokenizer counts."""
    if "\r" in text:
        return _LINE.findall(text)
    *lines, last = text.split("\n")  # str.split is several times faster than the regex
    return [line + "\n" for line in lines] + ([last] if last else [])


def line_at(text: str, offset: int) -> int:
    """1-based line of `offset` in `text`, counted like `source_lines`."""
    return len(_BREAK.findall(text, 0, offset)) + 1
