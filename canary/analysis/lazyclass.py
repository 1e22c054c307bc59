"""A top-level class statement indexed with its methods parsed as a check reads them.

Big classes (a model's `PreTrainedModel`, a trainer) change in every release and were most of a
cold run's parsing, yet a check reads one or two of their methods. So the class body is outlined
at its indent (canary.analysis.outline) and parsed without its `def` statements (its "shell":
the header, the class-level assignments, compound statements, `__init_subclass__` and the last
statement, which ends the class's span); each method is parsed alone when its records are read.
The methods table holds the names a whole parse records, in its order, with the same rule: a
later `def` of a name at class level replaces the earlier one where it stood, and those in
compound statements are alternatives, all kept. A class body this reading cannot be sure of (a
one-line class, a line indented less than the body) is indexed whole, by the caller.

So a syntax error in a method's signature is met when that method is read, as one in another
top-level statement is met when that statement is read (canary.analysis.sparse).
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import replace
from typing import Any

from canary.analysis.indexer import index_text
from canary.analysis.model import ClassInfo, Decoded, FunctionInfo, ModuleInfo, ParseError
from canary.analysis.moved import moved, moved_module, relined_module
from canary.analysis.outline import Outline, kept, outline
from canary.analysis.skeleton import header_end
from canary.cache.memo import Memo

_BODY = re.compile(r"\n( +)(?=[^\s\0])")  # the body's first line of code, with its indent
_HOLDER = "class _:\n"  # a method is parsed alone inside a class of its own, on the line above
_INIT_SUBCLASS = "__init_subclass__"  # its body says what the class's subclasses are
_REBINDING = ("import", "from", "del")  # statements that may bind a method's name in the body
#: `g = f` (or `g: T = f`) in a class body: `g` is then the method `f` is
_ALIAS = re.compile(r"[ \t]*\w+[ \t]*(?::[^=\n]*)?=[ \t]*(\w+)[ \t]*$", re.M)


#: methods parsed alone, by their text and their file (their records before the move to their
#: line): a big class changes in a few methods per release, and its other methods were parsed
#: again with each new text of the file (3,017 method parses for 897 distinct methods in a
#: re-judge of the shipped matrices)
_PARSED: Memo[tuple[Any, ...], FunctionInfo] = Memo(2048, lambda _key, _value: 1)
#: class shells indexed from line 1, by their text, up to this many characters: a big class's
#: header, class-level statements and last method stay while its other methods change
_SHELLS: Memo[tuple[Any, ...], ModuleInfo] = Memo(2_000_000, lambda key, _: len(key[0]))


class _Body:
    """One class statement's text, its body's outline, and where each body statement starts."""

    def __init__(self, text: str, masked: str, body: int, shape: Outline):
        self.text = text  # the class statement's text (its first line is line 1)
        self.masked = masked  # its masked text after a newline (canary.analysis.outline)
        self.body = body  # text offset of the body's first line of code
        self.shape = shape
        ends = [body + at for at in shape.bounds]
        self.spans = list(itertools.pairwise(ends))
        first = text.count("\n", 0, body) + 1
        self.lines = [first]  # the line each body statement starts on
        for start_at, end_at in self.spans[:-1]:
            self.lines.append(self.lines[-1] + text.count("\n", start_at, end_at))

    def method(self, j: int, name: str, path: str, is_package: bool, lines: int) -> FunctionInfo:
        """The record of body statement `j`, a `def`, parsed alone, for the class `lines` lines
        down from line 1."""
        start, end = self.spans[j]
        key = (self.text[start:end], name, path, is_package)
        above = self.lines[j] - 2 + lines  # the holder's line stands where the `def`'s is
        function = _PARSED.made(key, lambda: self._parse(j, name, path, is_package, above + 1))
        return moved(function, above)

    def _parse(self, j: int, name: str, path: str, is_package: bool, line: int) -> FunctionInfo:
        """Body statement `j` parsed alone, its span counted from the line above it (an error
        names `line`'s file lines)."""
        start, end = self.spans[j]
        masked = "\n" + _HOLDER + self.masked[start + 1 : end + 1]
        held = index_text(
            _HOLDER + self.text[start:end],
            name,
            path,
            is_package=is_package,
            masked=masked,
            line=line,
        )
        return next(iter(held.classes["_"][0].methods.values()))[0]


def _body(text: str, masked: str, head: int) -> _Body | None:
    """The body of the class statement `text` (its `class` line at offset `head`), outlined,
    or None when this reading cannot be sure of it."""
    end = len(masked)
    colon = header_end(masked, head + 1)
    if colon is None or colon >= end:
        return None
    newline = masked.find("\n", colon, end)
    if newline == -1 or masked[colon + 1 : newline].strip():
        return None  # a one-line class, or a backslash after the colon
    first = _BODY.search(masked, newline, end)
    if first is None:
        return None
    body = outline(masked[first.start() : end], len(first.group(1)))
    if body is None:
        return None
    return _Body(text, masked, first.start(), body)


def _plan(
    body: _Body, functions: dict[int, str], shell: ClassInfo
) -> dict[str, list[FunctionInfo | int]]:
    """Each method name's records in a whole parse's order: a body `def` by its statement
    number (parsed when read), those of compound statements from the shell."""
    others: list[tuple[int, str, FunctionInfo]] = []  # the shell's, not of a body `def`
    for method, records in shell.methods.items():
        for record in records:
            j = bisect.bisect_right(body.lines, record.span.start) - 1
            if j not in functions:
                others.append((record.span.start, method, record))
    others.sort(key=lambda item: item[0])
    plan: dict[str, list[FunctionInfo | int]] = {}
    top: dict[str, int] = {}  # where the class's own block holds each name's definition
    at = 0
    count = len(body.spans)
    for j in range(count):
        if j in functions:
            slots = plan.setdefault(functions[j], [])
            if functions[j] in top:  # a later `def` replaces the earlier one where it stood
                slots[top[functions[j]]] = j
            else:
                top[functions[j]] = len(slots)
                slots.append(j)
            continue
        end = body.lines[j + 1] if j + 1 < count else None
        while at < len(others) and (end is None or others[at][0] < end):
            plan.setdefault(others[at][1], []).append(others[at][2])
            at += 1
    return plan


class LazyClass:
    """A class statement indexed from line 1, its methods parsed as they are read: the same
    class text stands on other lines in other releases of its file, and is indexed once."""

    def __init__(
        self,
        info: ModuleInfo,
        body: _Body,
        plan: dict[str, list[FunctionInfo | int]],
        is_package: bool,
    ):
        self._info = info  # the shell's index
        self._body = body
        self._plan = plan  # each method name's records (canary.analysis.lazyclass._plan)
        self._is_package = is_package

    def at(self, line: int) -> ModuleInfo:
        """The index of the class statement standing on `line` of its file."""
        lines = line - 1
        info, body, is_package = self._info, self._body, self._is_package
        ((defined, (cls,)),) = info.classes.items()

        def methods(_name: str, planned: list[FunctionInfo | int]) -> list[FunctionInfo]:
            """A name's methods, those not yet parsed (by class-level statement number)
            parsed alone the first time the name is read."""
            return [
                body.method(x, info.name, info.path, is_package, lines)
                if isinstance(x, int)
                else moved(x, lines)
                for x in planned
            ]

        cls = moved(replace(cls, methods=Decoded(self._plan, methods)), lines)
        return replace(moved_module(info, lines), classes={defined: [cls]})


def class_statement(
    text: str, masked: str, head: int, line: int, name: str, path: str, is_package: bool
) -> LazyClass | None:
    """The class statement `text` alone (its `masked` text after a newline, its `class` line at
    offset `head`) indexed from line 1; None when it must be indexed whole (raises ParseError
    when its shell does not parse, naming the lines of its file, where it stands on `line`)."""
    body = _body(text, masked, head)
    if body is None:
        return None
    inner = body.shape
    count = len(body.spans)
    heads = {j: inner.defined(j) for j in range(count) if inner.keyword(j) in ("def", "async")}
    functions = {j: method for j, method in heads.items() if method is not None}
    if len(functions) < len(heads):
        return None  # not a `def`: let the whole parse say what it is
    defined = set(functions.values())
    for j in range(count):
        if j in functions:
            continue
        word = inner.keyword(j)
        alias = _ALIAS.match(body.masked, body.spans[j][0] + 1, body.spans[j][1] + 1)
        if word in _REBINDING or word in defined or (alias and alias.group(1) in defined):
            return None  # binds a method's name in the body's own block: the whole parse orders
    shell = [
        j
        for j in range(count)
        if j not in functions or functions[j] == _INIT_SUBCLASS or j == count - 1
    ]
    spans = [(0, body.body), *(body.spans[j] for j in shell)]
    starts = [1, *(body.lines[j] for j in shell)]  # the line each span starts on
    info = _shell(text, masked, spans, starts, name, path, is_package, line)
    ((_, (cls,)),) = info.classes.items()
    if cls.borrowed:
        return None  # `g = f` may name a method the shell does not hold: the whole parse knows
    return LazyClass(info, body, _plan(body, functions, cls), is_package)


def _shell(
    text: str,
    masked: str,
    spans: list[tuple[int, int]],
    starts: list[int],
    name: str,
    path: str,
    is_package: bool,
    line: int,
) -> ModuleInfo:
    """The index of the class's shell, its statement `spans` (that start on lines `starts`)
    parsed together with nothing between them: a big class's shell stays the same across
    releases while its methods change, and is indexed once. Raises ParseError naming the lines
    of its file (where the class stands on `line`)."""
    shell = "".join(text[start:end] for start, end in spans)
    key = (shell, name, path, is_package)
    info = _SHELLS.get(key)
    if info is None:
        shell_masked = "\n" + "".join(masked[start + 1 : end + 1] for start, end in spans)
        try:
            info = index_text(shell, name, path, is_package=is_package, masked=shell_masked)
        except ParseError:  # parsed where it stands, so the error names its lines
            index_text(kept(text, spans), name, path, is_package=is_package, line=line)
            raise
        _SHELLS.put(key, info)
    firsts = [1]  # the line each span starts on in the shell
    for start, end in spans[:-1]:
        firsts.append(firsts[-1] + text.count("\n", start, end))

    def line_of(at: int) -> int:
        k = bisect.bisect_right(firsts, at) - 1
        return at - firsts[k] + starts[k]

    return relined_module(info, line_of)
