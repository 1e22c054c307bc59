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
import threading
from collections import OrderedDict
from dataclasses import replace

from canary.analysis.indexer import index_text
from canary.analysis.model import (
    ClassInfo,
    Decoded,
    FunctionInfo,
    ModuleInfo,
    ParseError,
    Span,
)
from canary.analysis.outline import Outline, kept, outline
from canary.analysis.skeleton import header_end

_BODY = re.compile(r"\n( +)(?=[^\s\0])")  # the body's first line of code, with its indent
_HOLDER = "class _:\n"  # a method is parsed alone inside a class of its own, on the line above
_INIT_SUBCLASS = "__init_subclass__"  # its body says what the class's subclasses are


class _Parsed:
    """Methods parsed alone, by their text and their file (its record before the shift to its
    line): a big class changes in a few methods per release, and its other methods were parsed
    again with each new text of the file (3,017 method parses for 897 distinct methods in a
    re-judge of the shipped matrices)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: OrderedDict[tuple[str, str, str, bool], FunctionInfo] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, str, bool]) -> FunctionInfo | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, str, str, bool], function: FunctionInfo) -> None:
        with self._lock:
            self._items[key] = function
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)


_PARSED = _Parsed(2048)


class _Body:
    """One class statement's text, its body's outline, and where each body statement starts."""

    def __init__(self, text: str, masked: str, start: int, body: int, shape: Outline):
        self.text = text
        self.masked = masked  # the module's masked text (canary.analysis.outline.Outline)
        self.start = start  # text offset of the class statement
        self.body = body  # text offset of the body's first line of code
        self.shape = shape
        ends = [body + at for at in shape.bounds]
        self.spans = list(itertools.pairwise(ends))
        first = text.count("\n", 0, body) + 1
        self.lines = [first]  # the line each body statement starts on
        for start_at, end_at in self.spans[:-1]:
            self.lines.append(self.lines[-1] + text.count("\n", start_at, end_at))

    def method(self, j: int, name: str, path: str, is_package: bool) -> FunctionInfo:
        """The record of body statement `j`, a `def`, parsed alone."""
        start, end = self.spans[j]
        key = (self.text[start:end], name, path, is_package)
        function = _PARSED.get(key)
        if function is None:
            function = self._parse(j, name, path, is_package)
            _PARSED.put(key, function)
        shift = self.lines[j] - 2
        return replace(function, span=Span(function.span.start + shift, function.span.end + shift))

    def _parse(self, j: int, name: str, path: str, is_package: bool) -> FunctionInfo:
        """Body statement `j` parsed alone, its span counted from the line above it."""
        start, end = self.spans[j]
        masked = "\n" + _HOLDER + self.masked[start + 1 : end + 1]
        try:
            held = index_text(
                _HOLDER + self.text[start:end], name, path, is_package=is_package, masked=masked
            )
        except ParseError:  # parsed again where it stands, so the error names its real line
            index_text(
                "\n" * (self.lines[j] - 2) + _HOLDER + self.text[start:end],
                name,
                path,
                is_package=is_package,
            )
            raise
        return next(iter(held.classes["_"][0].methods.values()))[0]


def _body(text: str, shape: Outline, i: int) -> _Body | None:
    """The body of top-level class statement `i`, outlined, or None when this reading cannot be
    sure of it."""
    masked = shape.masked
    end = shape.bounds[i + 1] + 1  # masked offsets are one past the text's
    colon = header_end(masked, shape.heads[i] + 1)
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
    return _Body(text, masked, shape.bounds[i], first.start(), body)


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


def class_statement(
    text: str, shape: Outline, i: int, name: str, path: str, *, is_package: bool
) -> ModuleInfo | None:
    """The index of top-level class statement `i` alone, its methods parsed as they are read;
    None when it must be indexed whole (raises ParseError when its shell does not parse)."""
    body = _body(text, shape, i)
    if body is None:
        return None
    inner = body.shape
    count = len(body.spans)
    heads = {j: inner.defined(j) for j in range(count) if inner.keyword(j) in ("def", "async")}
    functions = {j: method for j, method in heads.items() if method is not None}
    if len(functions) < len(heads):
        return None  # not a `def`: let the whole parse say what it is
    shell = [
        j
        for j in range(count)
        if j not in functions or functions[j] == _INIT_SUBCLASS or j == count - 1
    ]
    spans = [(body.start, body.body), *(body.spans[j] for j in shell)]
    masked = shape.masked_of(spans)
    info = index_text(kept(text, spans), name, path, is_package=is_package, masked=masked)
    ((defined, (cls,)),) = info.classes.items()
    plan = _plan(body, functions, cls)

    def methods(_name: str, planned: list[FunctionInfo | int]) -> list[FunctionInfo]:
        """A name's methods, those not yet parsed (by class-level statement number) parsed
        alone the first time the name is read."""
        return [
            body.method(x, name, path, is_package) if isinstance(x, int) else x for x in planned
        ]

    info.classes = {defined: [replace(cls, methods=Decoded(plan, methods))]}
    return info
