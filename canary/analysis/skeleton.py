"""Function bodies blanked before `ast.parse`.

Building `ast` objects for function bodies is about three quarters of a parse's cost, and the
index reads none of them: a function is known by its signature, decorators and line span, and
fingerprints search the text. So each body is replaced by `pass` on its first line and blank
lines after it (line numbers stay), and the real last line of every blanked body is kept to
restore the spans.

The blanking is exact or not done. Strings and comments are masked first; a body ends at the
first logical line (outside brackets, not after a backslash) indented no deeper than its `def`.
Line breaks are made \n first, as Python's tokenizer reads them. A file this reading cannot be
sure of (tabs or form feeds in indentation, an unterminated string) is parsed whole, and so is
any skeleton that does not parse.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

#: Comments, then strings (triple-quoted first): what may hide quotes, brackets and newlines;
#: each in a group, then the code after it up to the next quote or `#` in another, for `split`.
#: Spelled for `re`'s speed (the same tokens, tests/unit/test_masking.py says): classes as ranges
#: (a negated class costs twice as much per character), and the code taken by the match, where
#: the search for the next token tested each character at twice the cost.
_TOKENS = re.compile(
    r"(#[^\n]*"
    r"|'''[\0-&(-\[\]-\U0010ffff]*(?:(?:\\.|'(?!''))[\0-&(-\[\]-\U0010ffff]*)*'''"
    r'|"""[\0-!#-\[\]-\U0010ffff]*(?:(?:\\.|"(?!""))[\0-!#-\[\]-\U0010ffff]*)*"""'
    r"|'[\0-\t\x0b-&(-\[\]-\U0010ffff]*(?:\\.[\0-\t\x0b-&(-\[\]-\U0010ffff]*)*'"
    r'|"[\0-\t\x0b-!#-\[\]-\U0010ffff]*(?:\\.[\0-\t\x0b-!#-\[\]-\U0010ffff]*)*")'
    r"([\0-!$-&(-\U0010ffff]*)",
    re.DOTALL,
)
#: Every byte as `x` but the newline.
_EXES = b"x" * 10 + b"\n" + b"x" * 245
_DEF = re.compile(r"( *)(?:async +)?def +(\w+)")
_HEADER = re.compile(r"[()\[\]{}:]")
_UNSURE_INDENT = re.compile(r"\n *[\t\f]")  # from a newline: `re` tries `^` at every offset
_BODY_START = re.compile(r"\n( *)(?=[^\s\0])")
_OPEN = "([{"

#: Bodies the index reads: a module's `__getattr__` serves names lazily (PEP 562), a class's
#: `__init_subclass__` may make its subclasses dataclasses (transformers 5's configs), and a
#: function that puts modules into `sys.modules` makes alias modules (transformers 5.14's
#: `_create_module_alias`).
_KEPT = frozenset({"__getattr__", "__init_subclass__"})
_KEPT_WHEN = "sys.modules["


@dataclass(frozen=True)
class Skeleton:
    text: str  # the source with bodies blanked, same lines as the original
    ends: dict[int, int]  # line of a blanked body's `pass` -> the body's real last line


def _lines(token: str) -> str:
    """A string token over lines masked: same length and newlines, and a line that starts inside
    the string starts with NUL, so it is never taken for the start of a statement."""
    if token.isascii():  # most are: a byte table masks them in one pass, a third faster
        return token.encode().translate(_EXES).decode().replace("\nx", "\n\0")
    first, *rest = token.split("\n")
    return "\n".join(["x" * len(first), *("\0" + "x" * (len(p) - 1) if p else "" for p in rest)])


@functools.lru_cache(maxsize=64)
def _dedent_at(indent: int) -> re.Pattern[str]:
    """A line that starts with code indented `indent` spaces or less (possessive: a line
    indented deeper fails at once, where backtracking tried each shorter indent)."""
    return re.compile(rf"\n(?= {{0,{indent}}}+[^\s\0])")


def _balance(masked: str, start: int, end: int) -> int:
    """Brackets opened less brackets closed in masked[start:end]."""
    count = masked.count
    return (
        count("(", start, end)
        + count("[", start, end)
        + count("{", start, end)
        - count(")", start, end)
        - count("]", start, end)
        - count("}", start, end)
    )


def header_end(masked: str, start: int) -> int | None:
    """Offset of the colon that ends the `def` or `class` header starting at `start`."""
    depth = 0
    for match in _HEADER.finditer(masked, start):
        char = match.group()
        if char == ":":
            if depth == 0:
                return match.start()
        elif char in _OPEN:
            depth += 1
        else:
            depth -= 1
            if depth < 0:
                return None
    return None


def _body_end(masked: str, body: int, indent: int) -> int | None:
    """Offset of the newline before the first logical line indented `indent` or less after
    `body` (the text's end when there is none); None when brackets never balance."""
    pattern = _dedent_at(indent)
    search_from = body
    while True:
        match = pattern.search(masked, search_from)
        end = match.start() if match else len(masked)
        if _balance(masked, body, end) == 0 and (match is None or masked[end - 1] != "\\"):
            return end
        if match is None:
            return None
        search_from = end + 1


def _defs(masked: str) -> Iterator[re.Match[str]]:
    """`def` statements, found with str.find: a regex tries every offset, 20x slower here."""
    at = masked.find("def ")
    while at != -1:
        start = masked.rfind("\n", 0, at) + 1
        if masked[start:at].strip(" ") in ("", "async"):
            match = _DEF.match(masked, start)
            if match is not None:
                yield match
        at = masked.find("def ", at + 4)


def python_newlines(text: str) -> str:
    """`text` with every line break a \\n: Python's tokenizer reads \\r\\n and a lone \\r as one,
    so the text parses to the same tree on the same lines, and the masking reads one kind of
    break (the module's own text, kept in its index, still gives the spans a check reads)."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def mask_text(text: str) -> str | None:
    """`text` with comments blanked and strings masked, after a newline (so offsets are one
    past the text's); None when this reading cannot be sure of the text's lines."""
    if "\r" in text or "\0" in text:
        return None
    # code, then token, code after it and code up to the next token (empty but after an open
    # quote), ...: no call back per token
    parts = _TOKENS.split(text)
    parts[1::3] = [
        " " * len(t) if t[0] == "#" else "x" * len(t) if "\n" not in t else _lines(t)
        for t in parts[1::3]
    ]
    parts[0] = "\n" + parts[0]
    masked = "".join(parts)
    if "'" in masked or '"' in masked:
        return None
    if ("\t" in masked or "\f" in masked) and _UNSURE_INDENT.search(masked):
        return None
    return masked


def blank_bodies(text: str, masked: str | None = None) -> Skeleton | None:
    """The skeleton of `text` (whose `mask_text` may be given), or None when it cannot be
    made exactly (parse `text` whole)."""
    masked = masked or mask_text(text)
    if masked is None:
        return None
    lines = text.split("\n")
    ends: dict[int, int] = {}
    counted, line = 0, 0  # `line` is the line number of offset `counted`
    resume = 0
    for match in _defs(masked):
        if match.start() < resume:
            continue  # nested in a body already blanked (or kept)
        colon = header_end(masked, match.end())
        if colon is None:
            return None
        newline = masked.find("\n", colon)
        if newline == -1 or masked[colon + 1 : newline].strip():
            continue  # a one-line `def f(): ...`, or a backslash after the colon
        first = _BODY_START.search(masked, newline)
        indent = len(match.group(1))
        if first is None or len(first.group(1)) <= indent:
            return None  # no indented body: not Python, let the parser say so
        end = _body_end(masked, first.start(), indent)
        if end is None:
            return None
        resume = end
        if match.group(2) in _KEPT or masked.find(_KEPT_WHEN, first.start(), end) != -1:
            continue
        last = len(masked[first.start() : end].rstrip()) + first.start()
        line += masked.count("\n", counted, first.start() + 1)
        body_line = line
        line += masked.count("\n", first.start() + 1, last)
        counted = last
        ends[body_line] = line
        lines[body_line - 1] = first.group(1) + "pass"
        lines[body_line:line] = [""] * (line - body_line)
    return Skeleton("\n".join(lines), ends)
