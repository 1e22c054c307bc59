"""`canary check -k EXPR`: choose check x versions by name, as pytest's `-k` chooses items.

The grammar is pytest's (`not`, `and`, `or`, parentheses; an identifier is a run of word
characters and `:+-.[]\\/`), and so is the match: an identifier holds when it is a
case-insensitive substring of one of the names pytest gives the same check item -- the
folders of the matrix below the current one, the matrix's file name, the upstream and
`CHECK[VERSION]`. pytest's own parser is private (`_pytest.mark.expression`) and pytest is an
optional extra, so this is a small parser of the same grammar.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from canary.errors import UsageError
from canary.matrix.model import Check, Matrix
from canary.matrix.targets import Target

_TOKEN = re.compile(r"\s*(?:(?P<paren>[()])|(?P<ident>(?:\w|:|\+|-|\.|\[|\]|\\|/)+))")
_KEYWORDS = ("and", "or", "not")
#: the deepest nesting of parentheses and `not`s an expression may have: each level is a
#: frame of the parser and of the match (real ones nest two or three)
MAX_DEPTH = 100
#: how much of an expression an error quotes
_SHOWN = 80

#: a parsed expression: given a name matcher, whether it holds
Matcher = Callable[[str], bool]
Predicate = Callable[[Matcher], bool]


@dataclass(frozen=True)
class Keywords:
    """A compiled `-k` expression."""

    text: str
    holds: Predicate

    @classmethod
    def compile(cls, text: str) -> Keywords:
        """Parse `text`; a UsageError that points at the column of a mistake."""
        return cls(text, _Parser(text).expression())

    def selects(self, matrix: Matrix, check: Check, target: Target) -> bool:
        names = [name.lower() for name in item_names(matrix, check, target)]
        return self.holds(lambda part: any(part.lower() in name for name in names))


def item_names(matrix: Matrix, check: Check, target: Target) -> list[str]:
    """The names pytest matches `-k` against for this check item: the matrix's folders (below
    the current one, as below pytest's rootdir), its file name, the upstream, `CHECK[VERSION]`."""
    path = Path(os.path.abspath(matrix.path))
    here = Path.cwd()
    folders = path.parent.relative_to(here).parts if here in path.parents else ()
    return [*folders, path.name, matrix.upstream, f"{check.id}[{target.label}]"]


class _Parser:
    """Recursive descent over pytest's grammar:
    expr: and_expr ('or' and_expr)*; and_expr: not_expr ('and' not_expr)*;
    not_expr: 'not' not_expr | '(' expr ')' | ident."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = [*self._lex(), ("", len(text))]  # ("", end): the end of the text
        self.at = 0
        self.depth = 0

    def _lex(self) -> Iterator[tuple[str, int]]:
        pos = 0
        while self.text[pos:].strip():
            found = _TOKEN.match(self.text, pos)
            if found is None or found.lastgroup is None:
                start = len(self.text) - len(self.text[pos:].lstrip())
                self._fail(start, f'unexpected character "{self.text[start]}"')
            yield found.group(found.lastgroup), found.start(found.lastgroup)
            pos = found.end()

    def _fail(self, pos: int, why: str) -> NoReturn:
        shown = self.text if len(self.text) <= _SHOWN else f"{self.text[:_SHOWN]}..."
        raise UsageError(f"-k {shown!r}: column {pos + 1}: {why}")

    def _expected(self, what: str) -> NoReturn:
        token, pos = self.tokens[self.at]
        self._fail(pos, f"expected {what}; got {repr(token) if token else 'the end'}")

    def _accept(self, token: str) -> bool:
        if self.tokens[self.at][0] != token:
            return False
        self.at += 1
        return True

    def expression(self) -> Predicate:
        if self._accept(""):
            return lambda _: False  # as in pytest, an empty expression selects nothing
        found = self._or()
        if not self._accept(""):
            self._expected("`and`, `or` or the end")
        return found

    def _or(self) -> Predicate:
        parts = [self._and()]
        while self._accept("or"):
            parts.append(self._and())
        return parts[0] if len(parts) == 1 else lambda m: any(p(m) for p in parts)

    def _and(self) -> Predicate:
        parts = [self._not()]
        while self._accept("and"):
            parts.append(self._not())
        return parts[0] if len(parts) == 1 else lambda m: all(p(m) for p in parts)

    def _not(self) -> Predicate:
        token, pos = self.tokens[self.at]
        if token not in ("not", "("):
            if token in ("", ")", *_KEYWORDS):
                self._expected("a name, `not` or `(`")
            self.at += 1
            return lambda m: m(token)
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self._fail(pos, f"nested deeper than {MAX_DEPTH} levels of `not` and parentheses")
        self.at += 1
        if token == "not":
            inner = self._not()
            self.depth -= 1
            return lambda m: not inner(m)
        inner = self._or()
        if not self._accept(")"):
            self._expected("`)`")
        self.depth -= 1
        return inner
