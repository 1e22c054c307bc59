"""Module indexes built name by name, from the statements that mention the name.

A check reads one class, one function or one name of a module that defines hundreds; parsing
and indexing the whole module was most of a cold run's CPU. Every record the indexer keeps
under a name (its bindings, its class with the methods, its function) comes from top-level
statements (canary.analysis.outline) whose text holds that name where a statement binds or
defines one (`class NAME`, `NAME =`, `import NAME`, `as NAME`, ...), so those statements alone
are parsed, from line 1, and indexed by the same indexer, their records then moved to the
module's real lines (canary.analysis.moved: a statement met again in another release's text is
not parsed again; errors name the real lines). The records are the ones a whole parse makes
(the oracle: `python -m bench.oracle` over the files the shipped matrices read, and property
tests on generated modules).

Listing every name of a table (a did-you-mean hint) takes the whole index. A module whose
exports may be served by statements that do not name what they serve (a lazy module, a
module-level `__getattr__`, an import hook, an alias maker) is indexed whole; `__all__` and
star imports are read from the statements that hold them.

So the statements a check reads decide `error`: a syntax error in a statement it does not read
is not seen (as one inside a function body never was), and a module check reads the text alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from canary.analysis.budget import check_cost
from canary.analysis.flight import Flights
from canary.analysis.indexer import index_text
from canary.analysis.lazyclass import LazyClass, class_statement
from canary.analysis.lines import Lines
from canary.analysis.model import ModuleInfo
from canary.analysis.moved import moved_module
from canary.analysis.outline import Outline, kept, outline
from canary.analysis.skeleton import mask_text, python_newlines
from canary.cache.memo import Memo

#: Words after which a module's exports may depend on statements that need not name what they
#: export (a lazy module, an import hook): such a module is indexed whole.
_LAZY_WORDS = ("LazyModule", "meta_path")
#: Words that together may make an alias maker (a def that fills `sys.modules[...]` through
#: `import_module`) whose calls add aliases: such a module is indexed whole too.
_ALIAS_WORDS = ("sys.modules", "import_module")
_GETATTR = re.compile("__getattr__")
#: a module may replace itself (`sys.modules[__name__] = ...`) in a statement of its own
_SYS_MODULES = re.compile(r"sys\.modules\[")
_FUNCTION_WORDS = ("def", "async", "class")
_ALL = re.compile("__all__")
_STAR = re.compile(r"import[\s\\]*\*")
#: After a name: an assignment, augmented assignment or annotation, or the name in a list.
_BOUND_AFTER = re.compile(r"[\s\\]*(?:(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)|[:,)\]])")
_GAP = " \t\n\\"  # whitespace, newlines and backslash continuations
_DEFINING = ("class", "def")
_BINDING = ("class", "def", "import", "as", "del", "type")


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _whole_word(masked: str, match: re.Match[str]) -> bool:
    start, end = match.span()
    return not _is_word_char(masked[start - 1]) and not (
        end < len(masked) and _is_word_char(masked[end])
    )


def _before(masked: str, at: int) -> tuple[str, bool]:
    """The word (or the punctuation character) before offset `at`, and whether a gap
    separates them."""
    end = at
    while masked[end - 1] in _GAP and end > 1:
        end -= 1
    start = end
    while _is_word_char(masked[start - 1]):
        start -= 1
    return (masked[start:end] if start < end else masked[end - 1]), end < at


def _defines(masked: str, match: re.Match[str]) -> bool:
    """Whether a class or def statement may define the name matched (`class NAME`)."""
    if not _whole_word(masked, match):
        return False
    word, gap = _before(masked, match.start())
    return gap and word in _DEFINING


def _binds(masked: str, match: re.Match[str]) -> bool:
    """Whether a statement may bind the name matched: defined, imported (`import NAME`,
    `as NAME`, in a list), or a target of an assignment or annotation, alone or in a tuple."""
    if not _whole_word(masked, match):
        return False
    word, gap = _before(masked, match.start())
    if word in ",([*" or (gap and word in _BINDING):
        return True
    return _BOUND_AFTER.match(masked, match.end()) is not None


def _star(masked: str, match: re.Match[str]) -> bool:
    return not _is_word_char(masked[match.start() - 1])


def _getattr(masked: str, match: re.Match[str]) -> bool:
    """A `def __getattr__` or a `__getattr__ = ...` (made by a factory)."""
    if not _whole_word(masked, match):
        return False
    return _before(masked, match.start()) == ("def", True) or bool(
        _BOUND_AFTER.match(masked, match.end())
    )


_ACCEPT = {"bindings": _binds, "classes": _defines, "functions": _defines}
#: statements indexed from line 1, by their text (and their module's name and file), up to
#: this many characters of text: a file changes between releases in a few statements
_MEMO: Memo[tuple[Any, ...], Any] = Memo(4_000_000, lambda key, _: len(key[1]))
_WHOLE = "whole"  # a class statement the lazy reading cannot be sure of: indexed whole
_BLANK = " \t\f\n"  # what Python's tokenizer skips on a line (comments are masked as spaces)


class _Statements:
    """One module's text and outline, and the indexes of the statements parsed so far."""

    def __init__(self, text: str, shape: Outline, name: str, path: str, is_package: bool):
        self.text = text
        self.outline = shape
        self.name = name
        self.path = path
        self.is_package = is_package
        # the statement sets parsed so far: one statement alone, or the exports' set (None:
        # the whole module)
        self._parsed: dict[tuple[int, ...] | None, ModuleInfo] = {}
        self._records: dict[tuple[str, str], list[Any] | None] = {}
        self._flights = Flights()  # releases judged at once read the same names of one file
        self._lines = Lines(text)  # where each statement parsed stands

    def index(self, chosen: tuple[int, ...]) -> ModuleInfo:
        """The index of the `chosen` statements alone (raises ParseError)."""
        return self._flights.once(
            chosen, lambda: self._parsed.get(chosen), lambda: self._of(chosen)
        )

    def _of(self, chosen: tuple[int, ...]) -> ModuleInfo:
        """The `chosen` statements indexed from the first one's line, found by their text
        when another text of the file (another release) held them too, wherever it stood and
        whatever blank lines and comments followed it."""
        shape = self.outline
        spans = shape.spans(chosen)
        start, end = (spans[0][0], spans[-1][1]) if spans else (0, 0)
        # the blank and comment lines after the last line of code count for nothing: cut
        # (blank as Python's tokenizer reads it: another character there is an error)
        last = start + len(shape.masked[start + 1 : end + 1].rstrip(_BLANK))
        end = min(end, self.text.find("\n", last) + 1 or end)
        spans[-1:] = [(spans[-1][0], end)] if spans else []
        line = self._lines.line_of(start)
        text = self.text[start:end]
        masked = shape.masked[start : end + 1]  # the newline before it, then its masked text
        cut = [(at - start, to - start) for at, to in spans]
        if len(chosen) == 1 and shape.keyword(chosen[0]) == "class":
            head = shape.heads[chosen[0]] - start
            found = self._memo(
                "class",
                text,
                lambda: (
                    class_statement(text, masked, head, line, self.name, self.path, self.is_package)
                    or _WHOLE
                ),
            )
            if isinstance(found, LazyClass):
                info = self._parsed[chosen] = found.at(line)
                return info
        text = kept(text, cut)
        found = self._memo(
            "statements",
            text,
            lambda: index_text(
                text,
                self.name,
                self.path,
                is_package=self.is_package,
                masked=kept(masked, [(at + 1, to + 1) for at, to in cut]),
                line=line,
            ),
        )
        info = self._parsed[chosen] = moved_module(found, line - 1)
        return info

    def _memo(self, kind: str, text: str, make: Callable[[], Any]) -> Any:
        """What `make` makes of the statements' `text` (read from line 1), made once in a run
        for this module name and file."""
        return _MEMO.made((kind, text, self.name, self.path, self.is_package), make)

    def records(self, table: str, key: str) -> list[Any] | None:
        """The `table` records of `key` (None: it has none), from the statements that may hold
        them, each indexed alone (once, whatever name it is read for: `bindings:X` and
        `classes:X` both read class X) and merged as one parse of them all records them."""
        if (table, key) in self._records:
            return self._records[table, key]
        pattern = re.compile(re.escape(key))
        shape = self.outline
        merged: list[Any] = []
        top = None  # where the module's own block holds its definition of `key`
        for i in shape.mentioning(pattern, _ACCEPT[table]):
            defined = shape.defined(i)
            if defined not in (None, key):
                # a class or def statement records its own name alone: one that defines
                # another name (a class whose body mentions `key`) holds none of its records
                continue
            found = getattr(self.index((i,)), table).get(key)
            if not found:
                continue
            if table != "bindings" and defined is not None:
                # a later definition in the module's block replaces the earlier one, where
                # it stood; those in compound statements' blocks are alternatives, all kept
                if top is None:
                    top = len(merged)
                    merged.append(found[0])
                else:
                    merged[top] = found[0]
            else:
                merged.extend(found)
        self._records[table, key] = merged or None
        return merged or None

    def whole(self) -> ModuleInfo:
        return self._flights.once(None, lambda: self._parsed.get(None), self._of_whole)

    def _of_whole(self) -> ModuleInfo:
        info = self._parsed[None] = index_text(
            self.text, self.name, self.path, is_package=self.is_package
        )
        return info


class _ByName(Mapping[str, Any]):
    """One record table (bindings, classes or functions) of a module, looked up name by name;
    listing it takes the whole index."""

    __slots__ = ("_statements", "_table")

    def __init__(self, statements: _Statements, table: str):
        self._statements = statements
        self._table = table

    def __getitem__(self, key: str) -> Any:
        records = self._statements.records(self._table, key)
        if records is None:
            raise KeyError(key)
        return records

    def get(self, key: str, default: Any = None) -> Any:
        records = self._statements.records(self._table, key)
        return default if records is None else records

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._statements.records(self._table, key) is not None

    def _all(self) -> Mapping[str, Any]:
        table: Mapping[str, Any] = getattr(self._statements.whole(), self._table)
        return table

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def _lazy_exports(shape: Outline) -> bool:
    """Whether the module's exports may be served lazily (canary.analysis.exports), or the
    module replace itself in `sys.modules` outside a function."""
    masked = shape.masked
    if any(w in masked for w in _LAZY_WORDS) or all(w in masked for w in _ALIAS_WORDS):
        return True
    defined = shape.mentioning(_GETATTR, _getattr)
    if any(shape.keyword(i) != "class" for i in defined):
        return True
    return any(shape.keyword(i) not in _FUNCTION_WORDS for i in shape.mentioning(_SYS_MODULES))


def sparse_module(text: str, name: str, path: str, *, is_package: bool) -> ModuleInfo | None:
    """The module indexed name by name, or None when it must be indexed whole (its text is one
    the outline cannot be sure of, or its exports may be lazy); raises ParseError when the
    statements its exports come from do not parse."""
    check_cost(text, path)  # the budget is the file's, whatever a check reads of it
    source = python_newlines(text)
    masked = mask_text(source)
    shape = outline(masked) if masked is not None else None
    if shape is None or _lazy_exports(shape):
        return None
    statements = _Statements(source, shape, name, path, is_package)
    chosen = {*shape.mentioning(_ALL, _whole_word), *shape.mentioning(_STAR, _star)}
    exports = statements.index(tuple(sorted(chosen)))
    return ModuleInfo(
        name=name,
        path=path,
        text=text,
        bindings=_ByName(statements, "bindings"),
        classes=_ByName(statements, "classes"),
        functions=_ByName(statements, "functions"),
        star_imports=exports.star_imports,
        star_lines=exports.star_lines,
        typing_star_imports=exports.typing_star_imports,
        all_names=exports.all_names,
    )
