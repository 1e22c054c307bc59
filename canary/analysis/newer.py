"""Syntax newer than the running Python, read as the Python that runs it: PEP 695's type
parameters (`def f[T](x)`, `class C[T]:`) and `type` statements (`type Alias[T] = ...`, 3.12),
and PEP 758's `except A, B:` (3.14). An upstream may require a newer Python than canary runs
on; its module is valid where its users run it, so a check reads it as they would.

Only a text that does not parse is rewritten, in place (each line keeps its number, a name its
column), so the records keep their lines and the source a check reads stays the upstream's."""

from __future__ import annotations

import re

from canary.analysis.skeleton import mask_text

#: `def NAME[`, `class NAME[`: type parameters after the name
_PARAMETERS = re.compile(r"\b(?:def|class)[ \t]+\w+[ \t]*\[")
#: a `type NAME` statement (a soft keyword: followed by a name, then `=` or `[`)
_TYPE = re.compile(r"(?m)^[ \t]*(type[ \t]+(\w+))(?=[ \t]*[=\[])")
#: `except A, B:` without parentheses (`except*` too)
_EXCEPT = re.compile(r"(?m)^([ \t]*except\*?)[ \t]+([^(\n:][^\n:]*,[^\n:]*):")


def older_syntax(text: str) -> str | None:
    """`text` with the newer syntax it holds rewritten for this Python, None when it holds
    none (or its strings cannot be told from its code)."""
    masked = mask_text(text)
    if masked is None:
        return None
    code = masked[1:]  # offsets as in `text`
    chars = list(text)
    for match in _PARAMETERS.finditer(code):
        _blank(chars, code, match.end() - 1)
    for match in _TYPE.finditer(code):
        start, end = match.span(1)
        name = match.group(2)
        chars[start:end] = list(name + " " * (end - start - len(name)))  # `NAME = ...`
        after = end + len(code[end:]) - len(code[end:].lstrip(" \t"))
        if code[after : after + 1] == "[":
            _blank(chars, code, after)
    rewritten = "".join(chars)
    for match in reversed(list(_EXCEPT.finditer(code))):
        start, end = match.start(2), match.end()
        names = rewritten[start : end - 1]
        rewritten = f"{rewritten[:start]}({names}):{rewritten[end:]}"
    return rewritten if rewritten != text else None


def _blank(chars: list[str], code: str, at: int) -> None:
    """Blank the bracket at `at` and what it holds, up to its closing bracket (newlines kept)."""
    depth = 0
    for i in range(at, len(code)):
        depth += code[i] in "([{"
        depth -= code[i] in ")]}"
        if chars[i] != "\n":
            chars[i] = " "
        if depth == 0:
            return
