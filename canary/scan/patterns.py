"""Find the uses of upstream objects in one downstream file: imports, patches, source rewrites.

One pass over the AST in source order, tracking per scope which names are upstream aliases
and which hold (a rewrite of) an upstream object's source, so `src = inspect.getsource(X)`
followed by `src.replace("old", ...)` yields "X's source contains 'old'".
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

from canary.scan.callsites import CallSites
from canary.scan.findings import Finding, Role
from canary.scan.guards import Guard, conditions, tolerant, tolerant_handlers
from canary.scan.imports import Ref, Scopes, bind_import, resolve
from canary.scan.rewriters import ANY_CLASS, registrations, selected_methods
from canary.scan.source_helpers import argument, returned_source

# str methods whose result is still (a rewrite of) the same source text
_KEEPS_SOURCE = frozenset(
    {"replace", "strip", "lstrip", "rstrip", "expandtabs", "removeprefix", "removesuffix"}
)
# str methods that look for their first argument in the text: it must be there
_SEEKS_TEXT = frozenset(
    {"replace", "find", "rfind", "index", "rindex", "count", "split", "rsplit", "partition"}
    | {"rpartition", "startswith", "endswith"}
)
# most literals a name or a concatenation may stand for before scan stops following it
_MAX_TEXTS = 16
# re functions -> (position of the string argument, position of flags)
_RE_FUNCTIONS = {
    "search": (1, 2),
    "match": (1, 2),
    "fullmatch": (1, 2),
    "findall": (1, 2),
    "finditer": (1, 2),
    "split": (1, 3),
    "sub": (2, 4),
    "subn": (2, 4),
}
# the same as methods of a compiled pattern: position of the string argument
_PATTERN_METHODS = {"search": 0, "match": 0, "fullmatch": 0, "findall": 0, "finditer": 0}
_PATTERN_METHODS |= {"split": 0, "sub": 1, "subn": 1}
# re flags a check can carry inline; MULTILINE is how checks search anyway
_INLINE_FLAGS = {"IGNORECASE": "i", "I": "i", "DOTALL": "s", "S": "s", "VERBOSE": "x", "X": "x"}
_INLINE_FLAGS |= {"ASCII": "a", "A": "a", "MULTILINE": "", "M": ""}
# fewest characters (whitespace aside) a sought text needs to say anything about upstream
_INFORMATIVE = 4
# shortest shared edge between a literal and inserted text that counts as overlapping
_EDGE = 4


@dataclass(frozen=True)
class Source:
    """A string holding an upstream object's source; `inserted` is text the downstream added."""

    ref: Ref
    inserted: tuple[str, ...] = ()

    def plus(self, text: str | None) -> Source:
        return Source(self.ref, (*self.inserted, text)) if text else self

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
    """One contains the other, or they share an edge of a few characters."""
    if literal in inserted or inserted in literal:
        return True
    edge = min(_EDGE, len(inserted), len(literal))
    return any(
        literal.startswith(inserted[-n:]) or literal.endswith(inserted[:n])
        for n in range(edge, min(len(inserted), len(literal)) + 1)
    )


@dataclass(frozen=True)
class Texts:
    """A name bound to string constants: one literal, or the items a loop goes through."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class Rows:
    """A name bound to a dict of string keys or a list of tuples: what a loop goes through."""

    rows: tuple[tuple[str | None, ...], ...]


@dataclass(frozen=True)
class Lines:
    """A name bound to the pieces of an upstream source (`src.split("\\n")`): joined again
    (`"\\n".join(x[n:] for x in lines)`), they are that source."""

    source: Source


def _constant(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _absolute_imports(body: list[ast.stmt]) -> dict[str, tuple[ast.alias, Ref]]:
    """Name bound -> (its alias node, what it imports) for the `from m import n` statements
    directly in `body`."""
    found = {}
    for statement in body:
        if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            module = tuple(statement.module.split("."))
            for alias in statement.names:
                if alias.name != "*":
                    ref = Ref((*module, alias.name), len(module))
                    found[alias.asname or alias.name] = (alias, ref)
    return found


def _constant_int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _literal_rows(expr: ast.expr) -> tuple[tuple[str | None, ...], ...]:
    """(key, value) rows of a literal dict with string keys, or the tuples of a literal list."""
    if isinstance(expr, ast.Dict) and expr.keys and all(_constant(k) for k in expr.keys):
        return tuple(
            (_constant(k), _constant(v)) for k, v in zip(expr.keys, expr.values, strict=True)
        )
    if (
        isinstance(expr, ast.List | ast.Tuple)
        and expr.elts
        and all(isinstance(e, ast.Tuple) for e in expr.elts)
    ):
        rows = tuple(tuple(_constant(x) for x in e.elts) for e in expr.elts)
        return rows if any(any(r) for r in rows) else ()
    return ()


def _rewritten(module: str, method: str | None) -> Ref:
    """The source a registered rewriter receives: its module's, or one method's of a class."""
    parts = tuple(module.split("."))
    return Ref((*parts, ANY_CLASS, method) if method else parts, len(parts))


def _is_getsource(func: ast.expr, parts: tuple[str, ...], scopes: Scopes) -> bool:
    """`inspect.getsource`, also when `inspect` arrives by a star import scan cannot follow."""
    if parts:
        return parts == ("inspect", "getsource")
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.attr == "getsource" and func.value.id == "inspect"
    return False


def _keep_known(top: dict[str, object | None], other: dict[str, object | None]) -> None:
    """After alternative branches: a name one branch bound to something known keeps it."""
    for name, value in other.items():
        current = top.get(name)
        if value is not None and (current is None or _rank(value) > _rank(current)):
            top[name] = value


def _rank(value: object) -> int:
    """Upstream source text is what scan follows; it wins over any other binding."""
    return 1 if isinstance(value, Source) else 0


@dataclass(frozen=True)
class Pattern:
    """A compiled regex with a literal pattern: `re.compile("...")`."""

    regex: str


def _argument(call: ast.Call, position: int, name: str) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == name), None)


def _inline_flags(node: ast.expr | None) -> str | None:
    """`re.S | re.I` -> "si"; None when the flags are not all plain re constants."""
    if node is None:
        return ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _inline_flags(node.left), _inline_flags(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Attribute) and node.attr in _INLINE_FLAGS:
        return _INLINE_FLAGS[node.attr]
    return None


def _with_flags(regex: str, flags: str | None) -> str | None:
    if flags is None:
        return None
    letters = "".join(sorted(set(flags)))
    return f"(?{letters}){regex}" if letters else regex


def wrapper_params(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> tuple[str, ...]:
    """The named parameters a replacement passes on: no self/cls, no *args/**kwargs."""
    args = fn.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return (*names, *(a.arg for a in args.kwonlyargs))


def _local_functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every def of the file by name, and methods as `Class.method`, for wrapper lookup."""
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found[f"{node.name}.{item.name}"] = item
    return found


class FileScanner(ast.NodeVisitor):
    """Collects Findings about `upstreams` from one parsed file."""

    def __init__(
        self,
        tree: ast.Module,
        file: str,
        upstreams: frozenset[str],
        calls: CallSites | None = None,
        own: frozenset[str] = frozenset(),
    ) -> None:
        self.file = file
        self.own = own  # the downstream's own top-level names, lowercase
        self.calls = calls if calls is not None else CallSites()
        self.upstreams = upstreams
        self.scopes = Scopes()
        self._tree = tree
        self.findings: list[Finding] = []
        self.guards: list[Guard] = []  # the conditions the statement being visited runs under
        self.rewriter: tuple[str, str, str] | None = None  # selector, source param, module
        self.alternatives = False  # inside an `or`: a text tested there is one option of several
        self.modules: set[str] = set()  # dotted names the imports prove to be modules
        # `try: from a import X` / `except ImportError: from b import X`, by alias node id:
        # the first import's fallback (and whether outer guards tolerate both failing), and
        # the imports that are a fallback (part of the first's check, no check of their own)
        self.fallbacks: dict[int, tuple[Ref, bool]] = {}
        self.fallen_back: set[int] = set()

    # --- helpers ---------------------------------------------------------------------------

    @functools.cached_property
    def functions(self) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
        """The file's defs, walked for only when a patch needs its replacement."""
        return _local_functions(self._tree)

    def _upstream(self, expr: ast.expr) -> Ref | None:
        ref = resolve(expr, self.scopes)
        return ref if ref and ref.root in self.upstreams else None

    def _parts(self, expr: ast.expr) -> tuple[str, ...]:
        ref = resolve(expr, self.scopes)
        return ref.parts if ref else ()

    def _add(
        self,
        role: Role,
        ref: Ref,
        node: ast.AST,
        items: tuple[str, ...] = (),
        tolerated: bool = False,
        fallback: Ref | None = None,
    ) -> None:
        """Record a use; one with a `fallback` is tolerated exactly as `tolerated` says."""
        guards = [g for g in self.guards if g.covers(ref)]
        if role is Role.PATCH and any(g.kind == "shim" for g in guards):
            return  # `if not hasattr(X, "n"): X.n = ...` adds what upstream lacks
        if fallback is None:
            tolerated = (
                tolerated or role is Role.GUARD or any(g.kind == "tolerates" for g in guards)
            )
        gate = ",".join(dict.fromkeys(g.spec for g in guards if g.kind == "gate"))
        line = getattr(node, "lineno", 0)
        finding = Finding(role, ref, self.file, line, items, tolerated, gate, fallback)
        self.findings.append(finding)

    def _guarded(self, guards: list[Guard], body: list[ast.stmt]) -> None:
        """Visit `body` under these guards."""
        depth = len(self.guards)
        self.guards += guards
        for item in body:
            self.visit(item)
        del self.guards[depth:]

    def visit_Try(self, node: ast.Try) -> None:
        self._pair_fallbacks(node)
        tolerant = [Guard("tolerates")] if tolerant_handlers(node) else []
        self._guarded(tolerant, node.body)
        after_body = dict(self.scopes.top())
        for handler in node.handlers:
            self._guarded(tolerant, handler.body)
        self._guarded([], node.orelse + node.finalbody)
        _keep_known(self.scopes.top(), after_body)

    visit_TryStar = visit_Try

    def _pair_fallbacks(self, node: ast.Try) -> None:
        """`try: from a import X` then `except ImportError: from b import X` (the same name
        bound, the same upstream): the client needs one of the two."""
        first = _absolute_imports(node.body)
        for handler in node.handlers:
            if not tolerant(handler):
                continue
            for name, (alias, ref) in _absolute_imports(handler.body).items():
                primary = first.get(name)
                if primary is None or primary[1].root != ref.root or primary[1] == ref:
                    continue
                outer = any(g.kind == "tolerates" and g.covers(ref) for g in self.guards)
                self.fallbacks[id(primary[0])] = (ref, outer)
                self.fallen_back.add(id(alias))

    def visit_If(self, node: ast.If) -> None:
        """Both branches from the same bindings; what either binds to something known stays."""
        self.visit(node.test)
        body, orelse = conditions(node.test, self._upstream)
        top = self.scopes.top()
        before = dict(top)
        selected = self._select_method(node)
        if selected and selected[1][1]:
            self.scopes.bind(selected[0], selected[1][0])
        self._guarded(body, node.body)
        after_body = dict(top)
        top.clear()
        top.update(before)
        self._guarded(orelse, node.orelse)
        _keep_known(top, after_body)
        returns = bool(node.body) and isinstance(node.body[-1], ast.Return)
        if selected and not selected[1][1] and returns:
            self.scopes.bind(selected[0], selected[1][0])
        if returns and not node.orelse:  # `if not hasattr(X, "n"): return` guards the rest
            self.guards += orelse

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        """`for old, new in PAIRS:` binds old and new to the string constants they go through."""
        self.visit(node.iter)
        self.visit(node.target)
        rows = self._rows(node.iter)
        if rows and isinstance(node.target, ast.Name):
            self.scopes.bind(node.target.id, Texts(tuple(r[0] for r in rows if len(r) == 1)))
        elif rows and isinstance(node.target, ast.Tuple):
            for i, element in enumerate(node.target.elts):
                if isinstance(element, ast.Name):
                    column = tuple(r[i] for r in rows if len(r) > i and isinstance(r[i], str))
                    self.scopes.bind(element.id, Texts(column) if column else None)
        for item in (*node.body, *node.orelse):
            self.visit(item)

    visit_AsyncFor = visit_For

    def _rows(self, expr: ast.expr) -> tuple[tuple[str | None, ...], ...]:
        """What a loop goes through, when it is string constants: a list of them, a list of
        tuples of them, a dict (`d`, `d.items()`, `d.keys()`, `d.values()`)."""
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and not expr.args:
            rows = self._rows(expr.func.value)
            pick = {"items": slice(0, 2), "keys": slice(0, 1), "values": slice(1, 2)}
            return tuple(r[pick[expr.func.attr]] for r in rows) if expr.func.attr in pick else ()
        if isinstance(expr, ast.Name):
            bound = self.scopes.lookup(expr.id)
            if isinstance(bound, Rows):
                return bound.rows
            return tuple((t,) for t in bound.values) if isinstance(bound, Texts) else ()
        rows = _literal_rows(expr)
        return rows[:_MAX_TEXTS] if rows else ()

    def _texts(self, expr: ast.expr | None) -> tuple[str, ...]:
        """The string constants `expr` may be: a literal, a name bound to some, a tuple of
        them (`startswith((a, b))`), or a concatenation of those (f-strings are not)."""
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return (expr.value,)
        if isinstance(expr, ast.Name):
            bound = self.scopes.lookup(expr.id)
            return bound.values if isinstance(bound, Texts) else ()
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name):
            bound = self.scopes.lookup(expr.value.id)
            key = _constant(expr.slice)
            rows = bound.rows if isinstance(bound, Rows) else ()
            return tuple(r[1] for r in rows if len(r) > 1 and r[0] == key and r[1] is not None)
        if isinstance(expr, ast.Tuple | ast.List | ast.Set):  # of strings, not of tuples
            flat = [e for e in expr.elts if not isinstance(e, ast.Tuple | ast.List | ast.Set)]
            found = [t for element in flat for t in self._texts(element)]
            return tuple(found[:_MAX_TEXTS])
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            left, right = self._texts(expr.left), self._texts(expr.right)
            return tuple(a + b for a in left for b in right)[:_MAX_TEXTS]
        return ()

    def _text(self, expr: ast.expr | None) -> str | None:
        """The one string constant `expr` is, if it is exactly one."""
        found = self._texts(expr)
        return found[0] if len(found) == 1 else None

    def _source_of(self, expr: ast.expr | None) -> Source | None:
        """The upstream source `expr` evaluates to, if it is one (or a rewrite of one)."""
        if isinstance(expr, ast.Name):
            bound = self.scopes.lookup(expr.id)
            return bound if isinstance(bound, Source) else None
        if isinstance(expr, ast.Subscript):
            held = self._returned(expr.value)
            if held is not None and held[0] is not None:  # `read(X)[0]`, a tuple's item
                return held[1] if held[0] == _constant_int(expr.slice) else None
            return self._source_of(expr.value)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            left, right = self._source_of(expr.left), self._source_of(expr.right)
            if left:
                return left.plus(self._text(expr.right))
            return right.plus(self._text(expr.left)) if right else None
        if not isinstance(expr, ast.Call):
            return None
        held = self._returned(expr)
        if held is not None:
            return held[1] if held[0] is None else None
        parts = self._parts(expr.func)
        if _is_getsource(expr.func, parts, self.scopes) and expr.args:
            target = self._upstream(expr.args[0])
            return Source(target) if target else None
        if parts in (("textwrap", "dedent"), ("textwrap", "indent")) and expr.args:
            return self._source_of(expr.args[0])
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "join":
            return self._joined(expr)
        if len(parts) == 2 and parts[0] == "re" and parts[1] in ("sub", "subn"):
            source = self._source_of(_argument(expr, 2, "string"))
            return source.plus(self._text(_argument(expr, 1, "repl"))) if source else None
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in _KEEPS_SOURCE:
            source = self._source_of(expr.func.value)
            if source and expr.func.attr == "replace":
                return source.plus(self._text(_argument(expr, 1, "new")))
            return source
        if (
            isinstance(expr.func, ast.Attribute)
            and expr.func.attr in ("sub", "subn")
            and self._pattern_of(expr.func.value)
        ):
            source = self._source_of(_argument(expr, 1, "string"))
            return source.plus(self._text(_argument(expr, 0, "repl"))) if source else None
        return None

    def _returned(self, expr: ast.expr) -> tuple[int | None, Source] | None:
        """A call of the package's function that returns the source of the upstream object
        this call passes it: (the position in the returned tuple or None, that source)."""
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)):
            return None
        if self.scopes.lookup(expr.func.id) is not None:
            return None
        returned = self.calls.returned(expr.func.id)
        passed = argument(expr, returned) if returned is not None else None
        ref = self._upstream(passed) if passed is not None else None
        if returned is None or ref is None:
            return None
        for attr in returned.attrs:
            ref = ref.child(attr)
        return returned.position, Source(ref)

    def _pattern_of(self, expr: ast.expr) -> Pattern | None:
        if isinstance(expr, ast.Name):
            bound = self.scopes.lookup(expr.id)
            return bound if isinstance(bound, Pattern) else None
        if isinstance(expr, ast.Call) and self._parts(expr.func) == ("re", "compile"):
            regex = self._text(_argument(expr, 0, "pattern"))
            flags = _inline_flags(_argument(expr, 1, "flags"))
            regex = _with_flags(regex, flags) if regex else None
            return Pattern(regex) if regex else None
        return None

    def _binding_of(self, value: ast.expr) -> object | None:
        texts = self._texts(value)
        if texts:
            return Texts(texts)
        rows = _literal_rows(value)
        if rows:
            return Rows(rows)
        lines = self._lines_of(value)
        if lines is not None:
            return lines
        return self._source_of(value) or self._pattern_of(value) or resolve(value, self.scopes)

    def _lines_of(self, expr: ast.expr) -> Lines | None:
        """`src.split(...)`, `src.splitlines()` or a name bound to them."""
        if isinstance(expr, ast.Name):
            bound = self.scopes.lookup(expr.id)
            return bound if isinstance(bound, Lines) else None
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and expr.func.attr in ("split", "splitlines")
        ):
            source = self._source_of(expr.func.value)
            return Lines(source) if source else None
        return None

    def _joined(self, call: ast.Call) -> Source | None:
        """`"\\n".join(lines)` or `"\\n".join(f(x) for x in lines)` of a source's pieces."""
        if not (len(call.args) == 1 and isinstance(call.func, ast.Attribute)):
            return None
        if _constant(call.func.value) is None:
            return None
        pieces = call.args[0]
        if isinstance(pieces, ast.GeneratorExp | ast.ListComp) and len(pieces.generators) == 1:
            pieces = pieces.generators[0].iter
        lines = self._lines_of(pieces)
        return lines.source if lines else None

    def _replacement(self, value: ast.expr | None) -> ast.AST | None:
        """The local function (or lambda) a patch installs, if the file defines it."""
        if isinstance(value, ast.Lambda):
            return value
        if isinstance(value, ast.Name) and self.scopes.lookup(value.id) is None:
            return self.functions.get(value.id)
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
            return self.functions.get(f"{value.value.id}.{value.attr}")
        return None

    def _patch(self, target: Ref, value: ast.expr | None, node: ast.AST) -> None:
        self._add(Role.PATCH, target, node)
        replacement = self._replacement(value)
        if isinstance(replacement, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            params = wrapper_params(replacement)
            if params:
                self._add(Role.WRAPPER, target, node, params)

    def _assign(self, target: ast.expr, value: ast.expr | None, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.scopes.bind(target.id, self._binding_of(value) if value else None)
        elif isinstance(target, ast.Attribute) and (ref := self._upstream(target)):
            self._patch(ref, value, node)
        elif isinstance(target, ast.Tuple | ast.List):
            held = self._returned(value) if value is not None else None
            starred = any(isinstance(e, ast.Starred) for e in target.elts)
            for position, element in enumerate(target.elts):
                self._assign(element, None, node)
                if held and held[0] == position and not starred and isinstance(element, ast.Name):
                    self.scopes.bind(element.id, held[1])  # `src, fn = read(X)`
        else:
            self.visit(target)

    def _expects_texts(self, source: Source | None, texts: tuple[str, ...], node: ast.AST) -> None:
        for literal in texts if source else ():
            if source.expects(literal) and not self._own_marker(literal):
                self._add(Role.CONTAINS, source.ref, node, (literal,))

    def _own_marker(self, text: str) -> bool:
        """Text naming the downstream itself (`_mylib_patched`) is its marker, not upstream's."""
        lowered = text.lower()
        return any(name in lowered for name in self.own)

    def _expects_match(self, source: Source | None, regex: str | None, node: ast.AST) -> None:
        if source and regex and source.expects_match(regex) and not self._own_marker(regex):
            self._add(Role.MATCHES, source.ref, node, (regex,))

    # --- bindings --------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        self._imported(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._imported(node)

    def _imported(self, node: ast.Import | ast.ImportFrom) -> None:
        refs = bind_import(node, self.scopes)
        aliases = [alias for alias in node.names if alias.name != "*"] if refs else []
        for alias, ref in zip(aliases, refs, strict=True):
            if ref.root not in self.upstreams:
                continue
            self.modules.add(".".join(ref.parts[: ref.known]))
            if id(alias) in self.fallen_back:
                continue  # part of the check of the import it stands in for
            fallback = self.fallbacks.get(id(alias))
            if fallback is None:
                self._add(Role.IMPORT, ref, node)
            else:
                self._add(Role.IMPORT, ref, node, tolerated=fallback[1], fallback=fallback[0])

    def visit_Assign(self, node: ast.Assign) -> None:
        self._registers(node)
        self.visit(node.value)
        for target in node.targets:
            self._assign(target, node.value, node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value:
            self.visit(node.value)
        self._assign(node.target, node.value, node)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.scopes.bind(node.id, None)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for expr in (*node.decorator_list, *node.args.defaults, *node.args.kw_defaults):
            if expr:
                self.visit(expr)
        self.scopes.bind(node.name, None)
        self.calls.define(node.name)
        returned = None if self.calls.frozen else returned_source(node)
        if returned is not None:
            self.calls.returns(node.name, returned)
        passed: dict[str, object] = dict(self.calls.bound(node))
        module = self.calls.rewritten(node)
        params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
        outer = self.rewriter
        self.rewriter = None
        if module and len(params) >= 2:  # def fix(function_name, function) in a registry
            self.rewriter = (params[0], params[1], module)
            passed[params[1]] = Source(_rewritten(module, None))
        self._in_scope(node.body, node.args, passed)
        self.rewriter = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def _select_method(self, node: ast.If) -> tuple[str, object] | None:
        """In a registered rewriter, `if function_name == "m":` means the source is method m's
        in the body; `if function_name != "m": return` means it is in the rest."""
        if self.rewriter is None:
            return None
        selector, source, module = self.rewriter
        selected = selected_methods(node.test, selector)
        if selected is None or len(selected[0]) != 1:
            return None
        (method,), when_true = selected
        return source, (Source(_rewritten(module, method)), when_true)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._in_scope([node.body], node.args)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
            self.visit(expr)
        self.scopes.bind(node.name, None)
        self._in_scope(node.body, None)

    def _in_scope(
        self, body: list, args: ast.arguments | None, passed: dict[str, Ref] | None = None
    ) -> None:
        names: list[str] = []
        if args:
            every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
            names = [a.arg for a in every if a]
        self.scopes.push(names)
        for name, ref in (passed or {}).items():
            self.scopes.bind(name, ref)
        self._guarded([], body)
        self.scopes.pop()

    # --- uses ------------------------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> None:
        ref = self._upstream(node) if isinstance(node.ctx, ast.Load) else None
        if ref:
            self._add(Role.ACCESS, ref, node)
        else:
            self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            # `"a" in s or "b" in s` wants either; `"a" not in s or "b" not in s` wants both
            required = isinstance(op, ast.NotIn) or not self.alternatives
            if isinstance(op, ast.In | ast.NotIn) and required:
                self._expects_texts(self._source_of(right), self._texts(left), left)
            left = right
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        """`"a" in src or "b" in src` looks for either text: neither is required alone."""
        outer = self.alternatives
        self.alternatives = outer or isinstance(node.op, ast.Or)
        self.generic_visit(node)
        self.alternatives = outer

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._registers(node)
        self.generic_visit(node)

    def _registers(self, node: ast.AST) -> None:
        for function, module in registrations(node, self.calls.registries):
            self.calls.register(function, module)

    def visit_Call(self, node: ast.Call) -> None:
        self._registers(node)
        if self._attribute_builtin(node):
            return
        func = node.func
        if isinstance(func, ast.Name):
            self._passes(func.id, node)
        if isinstance(func, ast.Attribute) and func.attr in _SEEKS_TEXT and node.args:
            source = self._source_of(func.value)
            self._expects_texts(source, self._texts(node.args[0]), node.args[0])
        if isinstance(func, ast.Attribute) and func.attr in _PATTERN_METHODS:
            pattern = self._pattern_of(func.value)
            string = _argument(node, _PATTERN_METHODS[func.attr], "string")
            self._expects_match(self._source_of(string), pattern and pattern.regex, node)
        parts = self._parts(func)
        if len(parts) == 2 and parts[0] == "re" and parts[1] in _RE_FUNCTIONS:
            string_at, flags_at = _RE_FUNCTIONS[parts[1]]
            pattern_node = _argument(node, 0, "pattern")
            regex = self._text(pattern_node)
            flags = _inline_flags(_argument(node, flags_at, "flags"))
            string = _argument(node, string_at, "string")
            regex = regex and _with_flags(regex, flags)
            self._expects_match(self._source_of(string), regex, pattern_node or node)
        callee = self._upstream(func)
        keywords = tuple(dict.fromkeys(k.arg for k in node.keywords if k.arg))
        if callee and keywords:
            self._add(Role.KWARGS, callee, node, keywords)
        self.generic_visit(node)

    def _passes(self, function: str, node: ast.Call) -> None:
        """Record the upstream objects this call passes to a function (of the package)."""
        slots = [*enumerate(node.args), *((k.arg, k.value) for k in node.keywords if k.arg)]
        for slot, value in slots:
            ref = self._upstream(value)
            if ref is not None:
                self.calls.record(function, slot, ref)

    def _attribute_builtin(self, node: ast.Call) -> bool:
        """setattr/hasattr on an upstream object with a literal name; True when handled."""
        func = node.func
        if not isinstance(func, ast.Name) or func.id not in ("setattr", "hasattr", "getattr"):
            return False
        if self.scopes.lookup(func.id) is not None or len(node.args) < 2:
            return False
        owner, name = self._upstream(node.args[0]), _constant(node.args[1])
        if not owner or name is None:
            return False
        if func.id == "hasattr":
            self._add(Role.GUARD, owner.child(name), node)
        elif func.id == "getattr":  # with a default, absence is tolerated
            self._add(Role.ACCESS, owner.child(name), node, tolerated=len(node.args) > 2)
        else:
            value = node.args[2] if len(node.args) > 2 else None
            self._patch(owner.child(name), value, node)
        for expr in (*node.args[2:], *(k.value for k in node.keywords)):
            self.visit(expr)
        return True


def scan_tree(
    tree: ast.Module,
    file: str,
    upstreams: frozenset[str],
    calls: CallSites | None = None,
    own: frozenset[str] = frozenset(),
) -> FileScanner:
    """Run the scanner over one parsed file; its findings and proven modules are on the result.

    `calls` gathers what the file passes to the package's functions, and binds their
    parameters to what a previous pass gathered; `own` are the downstream's own package
    names, whose mentions in sought texts mark them as the downstream's.
    """
    scanner = FileScanner(tree, file, upstreams, calls, own)
    scanner.visit(tree)
    return scanner
