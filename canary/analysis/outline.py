"""A module's top-level statements, found by one linear scan of its masked text, without a parse.

A top-level statement starts on a line whose first character is code (strings and comments are
masked, so a line inside a string or a comment never counts) outside brackets and not after a
backslash; `else`/`elif`/`except`/`finally` lines continue the statement above, and a decorator
belongs to the statement it decorates. A check that reads a few names of a module then parses
only the statements that mention them (canary.analysis.sparse). A text this scan cannot be sure
of (brackets that never balance) has no outline: it is indexed whole.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

#: Clauses that continue the compound statement above them.
_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b")
_FIRST_WORD = re.compile(r"\w+")
#: A `class` or `def` statement's head (after its decorators), with the name it defines.
_DEFINITION = re.compile(r" *(?:async[ \t\\\n]+)?(?:def|class)[ \t\\\n]+(\w+)")


@dataclass(frozen=True)
class Outline:
    masked: str  # a newline, then the masked text: masked offset i + 1 is text offset i
    bounds: tuple[int, ...]  # text offsets: statement i is text[bounds[i] : bounds[i + 1]]
    heads: tuple[int, ...]  # text offset of each statement's line after its decorators

    def mentioning(
        self, pattern: re.Pattern[str], accept: Callable[[str, re.Match[str]], bool] | None = None
    ) -> tuple[int, ...]:
        """The statements where `pattern` matches (and `accept(masked, match)` holds), in
        order; the search goes on at the next statement once one is found. Patterns that start
        with a literal are searched fastest (`re` skips to the literal)."""
        found = []
        match = pattern.search(self.masked)
        while match is not None:
            if accept is not None and not accept(self.masked, match):
                match = pattern.search(self.masked, match.start() + 1)
                continue
            i = bisect.bisect_right(self.bounds, match.start() - 1) - 1
            found.append(i)
            match = pattern.search(self.masked, self.bounds[i + 1] + 1)
        return tuple(found)

    def keyword(self, i: int) -> str:
        """The first word of statement `i` after its decorators (`class`, `def`, `if`...)."""
        match = _FIRST_WORD.search(self.masked, self.heads[i] + 1, self.bounds[i + 1] + 1)
        return match.group() if match else ""

    def defined(self, i: int) -> str | None:
        """The name statement `i` defines when it is a `class` or `def` statement, the one
        name such a statement binds in its module; None for any other statement."""
        match = _DEFINITION.match(self.masked, self.heads[i] + 1, self.bounds[i + 1] + 1)
        return match.group(1) if match else None

    def spans(self, chosen: tuple[int, ...]) -> list[tuple[int, int]]:
        """The text offsets of the `chosen` statements, for `kept`."""
        return [(self.bounds[i], self.bounds[i + 1]) for i in chosen]


def kept(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with only the (start, end) offset `spans` kept, in order: every other line
    blank."""
    parts = []
    at = 0
    for start, end in spans:
        parts.append("\n" * text.count("\n", at, start))
        parts.append(text[start:end])
        at = end
    return "".join(parts)


@functools.lru_cache(maxsize=64)
def _code_upto(indent: int) -> re.Pattern[str]:
    """A line that starts with code indented `indent` spaces or less (possessive: a line
    indented deeper fails at once)."""
    return re.compile(rf"\n {{0,{indent}}}+(?=[^\s\0])")


def outline(masked: str, indent: int = 0) -> Outline | None:
    """The outline of a masked text (canary.analysis.skeleton.mask_text), or None. With an
    `indent`, the statements of a block indented so (from the newline before its first line),
    or None when a line of code is indented less (even inside brackets, where it is legal)."""
    # every bracket as a round one: the depth of a stretch in two counts, where it took six
    brackets = masked.replace("[", "(").replace("{", "(").replace("]", ")").replace("}", ")")
    count = brackets.count
    bounds, heads = [0], [0]
    depth, counted = 0, 0
    head = ""  # first character of the statement the last line started or continued
    for match in _code_upto(indent).finditer(masked):
        at = match.start()
        if match.end() - at - 1 < indent:
            return None  # a line of code indented less (one pass finds both kinds of line)
        depth += count("(", counted, at) - count(")", counted, at)
        counted = at
        if depth < 0:
            return None
        if depth or (at and masked[at - 1] == "\\"):
            continue  # inside brackets, or a backslash continues the line above
        first = masked[at + 1 + indent]
        if at == 0 or _CONTINUES.match(masked, at + 1 + indent):
            head = head or first
            continue
        if head == "@":  # the decorated statement, or one more decorator
            head = first
            heads[-1] = at
            continue
        head = first
        bounds.append(at)
        heads.append(at)
    if depth + count("(", counted) - count(")", counted) != 0:
        return None
    bounds.append(len(masked) - 1)
    return Outline(masked, tuple(bounds), tuple(heads))
