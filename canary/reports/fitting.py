"""Text cut to a width: ids and URLs in the middle (they differ at either end), details in whole
words (they read from the start).

A log or a pipe gets one line per finding (canary.reports.text), at most LINE_MAX characters:
a person scrolling a CI log reads a line, a tool greps one. What a line leaves out is in `-v`,
the JSON and the HTML report.
"""

from __future__ import annotations

#: a finding's line in a log or a pipe
LINE_MAX = 200


def shortened(text: str, width: int) -> str:
    """`text` in `width` characters, cut in the middle: ids that share a long prefix (or a
    long suffix) still differ where they differ most often, at either end."""
    if len(text) <= width:
        return text
    head = width // 2
    return f"{text[:head]}…{text[len(text) - (width - 1 - head) :]}" if width > 1 else text[:width]


def in_words(text: str, limit: int) -> str:
    """`text` on one line in at most `limit` characters: whole words, then ` …` when cut (a
    single word longer than that is cut in it)."""
    words = " ".join(text.split())
    if len(words) <= limit:
        return words
    kept = words[: max(0, limit - 2)]
    return f"{kept.rsplit(' ', 1)[0] if ' ' in kept else kept} …"
