"""Which values a downstream expression holds: string constants, rows a loop goes through,
compiled patterns, and (a rewrite of) an upstream object's source.

The visitor (patterns.py) binds names to these values as it walks; this module evaluates an
expression against those bindings, so `src = inspect.getsource(X)` followed by
`src.replace("old", ...)` is known to seek "old" in X's source.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from canary.scan.downstream.callsites import CallSites
from canary.scan.downstream.compiled import class_attribute
from canary.scan.downstream.findings import UNKNOWN
from canary.scan.downstream.folders import Column, column_of, yielded_by
from canary.scan.downstream.guards import Guard
from canary.scan.downstream.imports import Ref, Scopes, resolve
from canary.scan.downstream.node_values import (
    argument,
    constant,
    constant_int,
    inline_flags,
    literal_rows,
    rewritten,
    with_flags,
)
from canary.scan.downstream.rewriters import selected_methods
from canary.scan.downstream.source_helpers import KEEPS_SOURCE
from canary.scan.downstream.source_helpers import argument as passed_argument
from canary.scan.downstream.spelled import (
    MAX_TEXTS,
    Derived,
    Listed,
    Names,
    NamesIn,
    PathPattern,
    Texts,
    builds_names,
    listing,
    path_pattern,
)
from canary.scan.downstream.spread import Spread, gathered
from canary.scan.downstream.version_tests import binding

# a loop variable and what it holds in the loop's body
_Bound = tuple[str, Texts | Listed | Column | None]
# fewest characters (whitespace aside) a sought text needs to say anything about upstream
_INFORMATIVE = 4
# shortest shared edge between a literal and inserted text that counts as overlapping
_EDGE = 4
# a word shorter than this (`model`, `False`, `pass`) shared with inserted text is coincidence
_SHORT_WORD = 10
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Source:
    """A string holding an upstream object's source; `inserted` is text the downstream added;
    `others` the objects whose source it may be instead (a rewriter that selects several
    methods gets each one's in turn: what it seeks need be in one of them only); `listed`
    the column of classes a loop unpacks and the attributes read from each, when it is the
    source of those (`inspect.getsource(function.forward)`, folders.py): which, scan places
    no text on, only the namespace it is compiled in (namespaces.py)."""

    ref: Ref
    inserted: tuple[str, ...] = ()
    others: tuple[Ref, ...] = ()
    listed: tuple[Column, tuple[str, ...]] | None = None

    def plus(self, text: str | None) -> Source:
        return dataclasses.replace(self, inserted=(*self.inserted, text)) if text else self

    def plus_all(self, texts: tuple[str, ...]) -> Source:
        added = tuple(text for text in texts if text)
        return dataclasses.replace(self, inserted=(*self.inserted, *added)) if added else self

    def expects(self, literal: str) -> bool:
        """Whether finding `literal` says something about upstream, not about text added here.

        A few characters (`def`, whitespace, a lone newline) say nothing; a literal that
        overlaps inserted text may match only thanks to it.
        """
        informative = len(literal.strip()) >= _INFORMATIVE
        return informative and not any(_overlap(literal, t) for t in self.inserted)

    def expects_match(self, regex: str) -> bool:
        """A valid regex that does not already match the inserted text."""
        try:
            compiled = re.compile(regex, re.MULTILINE)
        except (re.error, RecursionError, OverflowError):
            return False
        informative = len(regex.strip()) >= _INFORMATIVE
        return informative and not any(compiled.search(text) for text in self.inserted)


def _overlap(literal: str, inserted: str) -> bool:
    """Whether `literal` may be found only thanks to `inserted`: it lies within it, or what
    they share (`inserted` inside it, or an edge of a few characters) says something."""
    if literal in inserted:
        return True
    shared = [inserted] if inserted in literal else []
    longest = min(len(inserted), len(literal))
    for n in range(min(_EDGE, longest), longest + 1):
        shared += [inserted[-n:]] if literal.startswith(inserted[-n:]) else []
        shared += [inserted[:n]] if literal.endswith(inserted[:n]) else []
    return any(_telling(text, literal) for text in shared)


def _telling(shared: str, literal: str) -> bool:
    """Shared text that ties a literal to the insertion: not a few characters or one short
    word (upstream code is full of `model`, `False`, `pass`), unless it is half the literal."""
    core = shared.strip()
    coincidence = len(core) < _INFORMATIVE or (
        _WORD.fullmatch(core) is not None and len(core) < _SHORT_WORD
    )
    return not coincidence or 2 * len(core) >= len(literal.strip())


@dataclass(frozen=True)
class Rows:
    """A name bound to a dict of string keys or a list of tuples: what a loop goes through."""

    rows: tuple[tuple[str | None, ...], ...]


@dataclass(frozen=True)
class SplitSource:
    """A name bound to the pieces of an upstream source (`src.split("\\n")`): joined again
    (`"\\n".join(x[n:] for x in lines)`), they are that source."""

    source: Source


@dataclass(frozen=True)
class Pattern:
    """A compiled regex with a literal pattern: `re.compile("...")`."""

    regex: str


def _texts(values: Iterable[str | None]) -> tuple[str, ...]:
    """The strings among `values` (a row's cell is None where it is no string constant)."""
    return tuple(v for v in values if isinstance(v, str))


def rank(value: object) -> int:
    """Upstream source text is what scan follows; it wins over any other binding, and over a
    source scan cannot tell of what."""
    if isinstance(value, Source):
        return 1 if value.ref == UNKNOWN else 2
    return 0


def _is_getsource(func: ast.expr, parts: tuple[str, ...]) -> bool:
    """`inspect.getsource`, also when `inspect` arrives by a star import scan cannot follow."""
    if parts:
        return parts == ("inspect", "getsource")
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.attr == "getsource" and func.value.id == "inspect"
    return False


class TextFlow:
    """Evaluates expressions over the visitor's `scopes`; `upstream` says which Ref an
    expression is when it is one of the scanned upstreams."""

    names_in: NamesIn | None = None  # what an upstream module's dir() names, when read

    def __init__(
        self, scopes: Scopes, calls: CallSites, upstream: Callable[[ast.expr], Ref | None]
    ) -> None:
        self.scopes = scopes
        self.calls = calls
        self.upstream = upstream
        # the enclosing classes, innermost last: (name, its class-level compiled patterns)
        self.classes: list[tuple[str, dict[str, str]]] = []

    def parts(self, expr: ast.expr) -> tuple[str, ...]:
        ref = resolve(expr, self.scopes)
        return ref.parts if ref else ()

    def rows(self, expr: ast.expr) -> tuple[tuple[str | None, ...], ...]:
        """What a loop goes through, when it is string constants: a list of them, a list of
        tuples of them, a dict (`d`, `d.items()`, `d.keys()`, `d.values()`)."""
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and not expr.args:
            rows = self.rows(expr.func.value)
            pick = {"items": slice(0, 2), "keys": slice(0, 1), "values": slice(1, 2)}
            return tuple(r[pick[expr.func.attr]] for r in rows) if expr.func.attr in pick else ()
        if isinstance(expr, ast.Name):
            bound = self.scopes.lookup(expr.id)
            if isinstance(bound, Rows):
                return bound.rows
            if isinstance(bound, Spread):  # a dict of no texts: its keys
                return tuple((name, None) for name in dict.fromkeys(e[0] for e in bound.entries))
            return tuple((t,) for t in bound.values) if isinstance(bound, Texts) else ()
        rows = literal_rows(expr)
        if not rows and isinstance(expr, ast.List | ast.Tuple) and expr.elts:
            strings = [constant(e) for e in expr.elts]  # `for name in ("llama", "gemma"):`
            rows = tuple((v,) for v in strings) if None not in strings else ()
        return rows[:MAX_TEXTS] if rows else ()

    def loop_bindings(self, target: ast.expr, iterated: ast.expr) -> list[_Bound]:
        """`for old, new in PAIRS:` binds old and new to the string constants they go through;
        `for name in names:` over names read from `dir(X)` binds name to one of them;
        `for cls, module in listed():` over the rows a package's function yields binds each
        to its column."""
        yielded = yielded_by(iterated, self.scopes.lookup, self.calls.yielded)
        if yielded is not None and isinstance(target, ast.Tuple):
            elements = enumerate(target.elts)
            return [(e.id, Column(yielded, i)) for i, e in elements if isinstance(e, ast.Name)]
        listed = self.scopes.lookup(iterated.id) if isinstance(iterated, ast.Name) else None
        if isinstance(listed, Listed | Names) and isinstance(target, ast.Name):
            return [(target.id, listed)]
        rows = self.rows(iterated)
        if rows and isinstance(target, ast.Name):
            return [(target.id, Texts(_texts(r[0] for r in rows if len(r) == 1)))]
        found: list[_Bound] = []
        for i, element in enumerate(target.elts if rows and isinstance(target, ast.Tuple) else []):
            if isinstance(element, ast.Name):
                column = _texts(r[i] for r in rows if len(r) > i)
                found.append((element.id, Texts(column) if column else None))
        return found

    def walked_rows(
        self, loop: ast.For | ast.AsyncFor, bindings: list[_Bound]
    ) -> list[list[_Bound]]:
        """The rows a loop's body is walked with, one at a time, where it builds a name from
        the loop's variables (`eval(f"trl.trainer.{name}")`); none elsewhere."""
        looped = {name for name, value in bindings if value is not None}
        if not looped or not builds_names(loop.body, looped):
            return []
        return self.loop_rows(loop.target, loop.iter)

    def loop_rows(self, target: ast.expr, iterated: ast.expr) -> list[list[_Bound]]:
        """`for name in ("a", "b"):` or `for a, b in PAIRS:` one row at a time: each loop
        variable bound to the one string it holds in that row."""
        names = [target] if isinstance(target, ast.Name) else getattr(target, "elts", [])
        found: list[list[_Bound]] = []
        for row in self.rows(iterated):
            if len(row) == len(names):
                found.append(
                    [
                        (n.id, Texts((v,)))
                        for n, v in zip(names, row, strict=True)
                        if isinstance(n, ast.Name) and isinstance(v, str)
                    ]
                )
        return found

    def texts(self, expr: ast.expr | None) -> tuple[str, ...]:
        """The string constants `expr` may be: a literal, a name bound to some, a tuple of
        them (`startswith((a, b))`), or a concatenation of those (f-strings are not)."""
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return (expr.value,)
        if isinstance(expr, ast.Name):
            bound = self.scopes.lookup(expr.id)
            return bound.values if isinstance(bound, Texts) else ()
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name):
            bound = self.scopes.lookup(expr.value.id)
            key = constant(expr.slice)
            rows = bound.rows if isinstance(bound, Rows) else ()
            return tuple(r[1] for r in rows if len(r) > 1 and r[0] == key and r[1] is not None)
        if isinstance(expr, ast.Tuple | ast.List | ast.Set):  # of strings, not of tuples
            flat = [e for e in expr.elts if not isinstance(e, ast.Tuple | ast.List | ast.Set)]
            found = [t for element in flat for t in self.texts(element)]
            return tuple(found[:MAX_TEXTS])
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            left, right = self.texts(expr.left), self.texts(expr.right)
            return tuple(a + b for a in left for b in right)[:MAX_TEXTS]
        return ()

    def text(self, expr: ast.expr | None) -> str | None:
        """The one string constant `expr` is, if it is exactly one."""
        found = self.texts(expr)
        return found[0] if len(found) == 1 else None

    def source_of(self, expr: ast.expr | None) -> Source | None:
        """The upstream source `expr` evaluates to, if it is one (or a rewrite of one)."""
        if isinstance(expr, ast.Name):
            bound = self.scopes.lookup(expr.id)
            return bound if isinstance(bound, Source) else None
        if isinstance(expr, ast.Subscript):
            held = self.returned(expr.value)
            if held is not None and held[0] is not None:  # `read(X)[0]`, a tuple's item
                return held[1] if held[0] == constant_int(expr.slice) else None
            return self.source_of(expr.value)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            left, right = self.source_of(expr.left), self.source_of(expr.right)
            if left:
                return left.plus(self.text(expr.right))
            return right.plus(self.text(expr.left)) if right else None
        if isinstance(expr, ast.JoinedStr):  # `f"# fixed\n{src}"`; not `{src!r}`
            filled = [v for v in expr.values if isinstance(v, ast.FormattedValue)]
            if any(v.conversion != -1 or v.format_spec for v in filled):
                return None
            literals = tuple(t for v in expr.values for t in self.texts(v))
            return self._filled([v.value for v in filled], literals)
        if not isinstance(expr, ast.Call):
            return None
        held = self.returned(expr)
        if held is not None:
            return held[1] if held[0] is None else None
        return self._source_of_call(expr)

    def rewrite_compared(self, op: ast.cmpop, left: ast.expr, right: ast.expr) -> Source | None:
        """The rewrite in `new != src` (also `==`, `is`, `is not`) of a source and its
        original, which tells the client whether its latest `.replace` found its text."""
        if not isinstance(op, ast.Eq | ast.NotEq | ast.Is | ast.IsNot):
            return None
        one, other = self.source_of(left), self.source_of(right)
        if one is None or other is None or one.ref != other.ref:
            return None
        return one if one.inserted else other

    def _source_of_call(self, expr: ast.Call) -> Source | None:
        """`inspect.getsource(X)`, and the str and re calls that keep a source a source."""
        parts = self.parts(expr.func)
        if _is_getsource(expr.func, parts) and expr.args:  # of something scan cannot tell
            ref, listed = self.upstream(expr.args[0]), column_of(expr.args[0], self.scopes.lookup)
            return Source(ref) if ref else Source(UNKNOWN, listed=listed)
        if parts in (("textwrap", "dedent"), ("textwrap", "indent")) and expr.args:
            return self.source_of(expr.args[0])
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "join":
            return self._joined(expr)
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "format":
            values = [*expr.args, *(k.value for k in expr.keywords)]
            return self._filled(values, self.inserted(expr.func.value))
        if len(parts) == 2 and parts[0] == "re" and parts[1] in ("sub", "subn"):
            source = self.source_of(argument(expr, 2, "string"))
            return source.plus_all(self.inserted(argument(expr, 1, "repl"))) if source else None
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in KEEPS_SOURCE:
            source = self.source_of(expr.func.value)
            if source and expr.func.attr == "replace":
                return source.plus_all(self.inserted(argument(expr, 1, "new")))
            return source
        if (
            isinstance(expr.func, ast.Attribute)
            and expr.func.attr in ("sub", "subn")
            and self.pattern_of(expr.func.value)
        ):
            source = self.source_of(argument(expr, 1, "string"))
            return source.plus_all(self.inserted(argument(expr, 0, "repl"))) if source else None
        return None

    def _filled(self, values: Sequence[ast.expr], template: tuple[str, ...]) -> Source | None:
        """A template filled with a source (`TEMPLATE.format(body=src)`, an f-string): that
        source, with the template's text and the other values' inserted around it."""
        sources = [self.source_of(value) for value in values]
        known = [s for s in sources if s is not None and s.ref != UNKNOWN]
        found = next(iter(known or [s for s in sources if s is not None]), None)
        if found is None:
            return None
        others = (
            t
            for v, s in zip(values, sources, strict=True)
            if s is not found
            for t in self.inserted(v)
        )
        return found.plus_all((*template, *others))

    def returned(self, expr: ast.expr) -> tuple[int | None, Source] | None:
        """A call of the package's function that returns the source of the upstream object
        this call passes it: (the position in the returned tuple or None, that source)."""
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)):
            return None
        if self.scopes.lookup(expr.func.id) is not None:
            return None
        returned = self.calls.returned(expr.func.id)
        passed = passed_argument(expr, returned) if returned is not None else None
        ref = self.upstream(passed) if passed is not None else None
        if returned is None or ref is None:
            return None
        for attr in returned.attrs:
            ref = ref.child(attr)
        return returned.position, Source(ref)

    def pattern_of(self, expr: ast.expr) -> Pattern | None:
        if isinstance(expr, ast.Name):
            bound = self.scopes.lookup(expr.id)
            return bound if isinstance(bound, Pattern) else None
        if isinstance(expr, ast.Attribute) and self.classes:  # `self._RE`, `cls._RE`
            name, patterns = self.classes[-1]
            regex = patterns.get(class_attribute(expr, name) or "")
            return Pattern(regex) if regex else None
        if isinstance(expr, ast.Call) and self.parts(expr.func) == ("re", "compile"):
            regex = self.text(argument(expr, 0, "pattern"))
            flags = inline_flags(argument(expr, 1, "flags"))
            regex = with_flags(regex, flags) if regex else None
            return Pattern(regex) if regex else None
        return None

    def binding_of(self, value: ast.expr, guards: Sequence[Guard] = ()) -> object | None:
        """What a name assigned `value` (under `guards`) is bound to."""
        held = binding(value, self.upstream, self.scopes.lookup, self.calls.comparison)
        if held is not None:  # a version test or a version (version_tests.py)
            return held
        keywords = gathered(value, guards, self.scopes.lookup)
        if keywords is not None:
            return keywords
        if (yielded := yielded_by(value, self.scopes.lookup, self.calls.yielded)) is not None:
            return yielded
        names = listing(
            value, self.scopes.lookup, lambda e: getattr(self.upstream(e), "parts", None)
        )
        if names is not None:
            return modules_named(names, self.names_in, self.calls)
        texts = self.texts(value)
        if texts:
            return Texts(texts)
        rows = literal_rows(value)
        if rows:
            return Rows(rows)
        lines = self._lines_of(value)
        if lines is not None:
            return lines
        found = (
            self.source_of(value)
            or self.pattern_of(value)
            or resolve(value, self.scopes)
            or self.upstream(value)
        )
        return found if found is not None else derived(value, self.scopes.lookup)

    def inserted(self, expr: ast.expr | None) -> tuple[str, ...]:
        """The text `expr` puts into a source: its literals, or what it was made from."""
        if isinstance(expr, ast.Name):
            bound = self.scopes.lookup(expr.id)
            if isinstance(bound, Derived):
                return bound.values
        found = derived(expr, self.scopes.lookup) if expr is not None else None
        return self.texts(expr) or (found.values if found else ())

    def _lines_of(self, expr: ast.expr) -> SplitSource | None:
        """`src.split(...)`, `src.splitlines()` or a name bound to them."""
        if isinstance(expr, ast.Name):
            bound = self.scopes.lookup(expr.id)
            return bound if isinstance(bound, SplitSource) else None
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and expr.func.attr in ("split", "splitlines")
        ):
            source = self.source_of(expr.func.value)
            return SplitSource(source) if source else None
        return None

    def _joined(self, call: ast.Call) -> Source | None:
        """`"\\n".join(lines)` or `"\\n".join(f(x) for x in lines)` of a source's pieces."""
        if not (len(call.args) == 1 and isinstance(call.func, ast.Attribute)):
            return None
        if constant(call.func.value) is None:
            return None
        pieces = call.args[0]
        if isinstance(pieces, ast.GeneratorExp | ast.ListComp) and len(pieces.generators) == 1:
            pieces = pieces.generators[0].iter
        lines = self._lines_of(pieces)
        return lines.source if lines else None


def modules_named(listed: Listed, names_in: NamesIn | None, calls: CallSites) -> Listed | Names:
    """A listing of an upstream package filtered to lowercase names is of its modules (and
    functions): those the newest release read has there that the filter keeps."""
    if names_in is None or not listed.lowercase:
        return listed
    found = names_in(listed.parts)
    kept = listed.kept(found) if found else None
    return kept if kept is not None and kept.values else listed


def derived(expr: ast.expr, lookup: Callable[[str], object | None]) -> Derived | None:
    """Text computed from names bound to literals: `"\\n".join(x[8:] for x in text.split())`;
    a dotted path built so, with pieces scan cannot spell, is a PathPattern."""
    if not isinstance(expr, ast.Call | ast.BinOp | ast.Subscript | ast.JoinedStr):
        return None
    values: list[str] = []
    for node in ast.walk(expr):
        bound = lookup(node.id) if isinstance(node, ast.Name) else None
        if isinstance(bound, Texts | Derived):
            values.extend(bound.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            values.append(node.value)
    informative = tuple(v for v in dict.fromkeys(values) if len(v.strip()) >= _INFORMATIVE)
    if path := path_pattern(expr, lookup):  # a module path built at run time
        return PathPattern(informative[:MAX_TEXTS], pattern=path)
    return Derived(informative[:MAX_TEXTS]) if informative else None


def keep_known(top: dict[str, object | None], other: dict[str, object | None]) -> None:
    """After alternative branches: a name one branch bound to something known keeps it."""
    for name, value in other.items():
        current = top.get(name)
        if isinstance(value, Spread) and isinstance(current, Spread):
            top[name] = current.union(value)
        elif value is not None and (current is None or rank(value) > rank(current)):
            top[name] = value


def rewriter_selection(
    test: ast.expr, rewriter: tuple[str, str, str] | None
) -> tuple[str, tuple[Source, bool]] | None:
    """In a registered rewriter (selector, source parameter, module), `if function_name ==
    "m":` means the source is method m's in the body; `if function_name != "m": return`
    means it is in the rest: (the source parameter, (that source, whether in the body)).
    Several names (`not in ("a", "b")`) make it the source of any one of those methods."""
    if rewriter is None:
        return None
    selector, source, module = rewriter
    selected = selected_methods(test, selector)
    if selected is None:
        return None
    (method, *others), when_true = selected
    alternatives = tuple(rewritten(module, o) for o in dict.fromkeys(others) if o != method)
    return source, (Source(rewritten(module, method), others=alternatives), when_true)
