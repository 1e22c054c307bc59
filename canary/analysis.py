"""A compact, static index of one Python module: what it binds, defines and where.

Upstream code is untrusted input: it is parsed with `ast`, never imported. A module is
parsed once per content (the index is cached by hash), and every check reads the index.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import io
import threading
import tokenize
from collections import OrderedDict
from dataclasses import dataclass, field

#: Largest source file we agree to parse; upstream files are well under 1 MB.
MAX_SOURCE_BYTES = 8 * 1024 * 1024


class ParseError(Exception):
    """The file exists but is not Python this interpreter can parse (an `error` outcome)."""


@dataclass(frozen=True)
class Span:
    start: int  # first line, decorators included (1-based)
    end: int  # last line, inclusive


@dataclass(frozen=True)
class Binding:
    """One way a module-level name gets bound."""

    kind: str  # "def", "class", "assign", "import"
    span: Span
    origin: str | None = None  # for imports: "package.module" or "package.module.name"


@dataclass(frozen=True)
class FunctionInfo:
    name: str
    params: tuple[str, ...]
    span: Span


@dataclass(frozen=True)
class ClassInfo:
    name: str
    bases: tuple[str, ...]
    methods: dict[str, list[FunctionInfo]]
    span: Span


@dataclass
class ModuleInfo:
    name: str
    path: str
    text: str
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    classes: dict[str, list[ClassInfo]] = field(default_factory=dict)
    functions: dict[str, list[FunctionInfo]] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)

    @functools.cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines(keepends=True)

    def segment(self, span: Span) -> str:
        return "".join(self.lines[span.start - 1 : span.end])


def _span(node: ast.stmt) -> Span:
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    return Span(start, node.end_lineno or node.lineno)


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if args.vararg:
        names.append(args.vararg.arg)
    names.extend(a.arg for a in args.kwonlyargs)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return tuple(names)


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> FunctionInfo:
    return FunctionInfo(node.name, _params(node), _span(node))


def _nested_bodies(node: ast.stmt) -> list[list[ast.stmt]]:
    """Statement blocks that run at the same scope: if/else, try/except/finally, with."""
    if isinstance(node, ast.If):
        return [node.body, node.orelse]
    if isinstance(node, ast.Try | getattr(ast, "TryStar", ast.Try)):
        return [node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody]
    if isinstance(node, ast.With | ast.AsyncWith):
        return [node.body]
    return []


def _flatten(body: list[ast.stmt]):
    """Statements of a scope with the block that holds each (if/else branches differ)."""
    for node in body:
        yield node, id(body)
        for block in _nested_bodies(node):
            yield from _flatten(block)


class _Definitions:
    """Definitions by name: a later `def` in the same block replaces the earlier one, as at
    run time; definitions in different if/else branches are alternatives, all kept."""

    def __init__(self) -> None:
        self.table: dict[str, list] = {}
        self._blocks: dict[str, list[int]] = {}

    def add(self, name: str, item: object, block: int) -> None:
        blocks = self._blocks.setdefault(name, [])
        items = self.table.setdefault(name, [])
        if block in blocks:
            items[blocks.index(block)] = item
        else:
            blocks.append(block)
            items.append(item)


def _target_names(target: ast.expr):
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _target_names(element)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


def _absolute(module: str | None, level: int, here: str, is_package: bool) -> str:
    """Resolve a (possibly relative) `from` import against the importing module."""
    if level == 0:
        return module or ""
    parts = here.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, module] if module else parts)


class _Indexer:
    def __init__(self, info: ModuleInfo, is_package: bool):
        self.info = info
        self.is_package = is_package
        self.functions = _Definitions()
        self.classes = _Definitions()

    def bind(self, name: str, binding: Binding) -> None:
        self.info.bindings.setdefault(name, []).append(binding)

    def run(self, tree: ast.Module) -> None:
        for node, block in _flatten(tree.body):
            self.statement(node, block)
        self.info.functions = self.functions.table
        self.info.classes = self.classes.table

    def statement(self, node: ast.stmt, block: int) -> None:
        span = _span(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self.functions.add(node.name, _function(node), block)
            self.bind(node.name, Binding("def", span))
        elif isinstance(node, ast.ClassDef):
            self.classes.add(node.name, self.class_info(node), block)
            self.bind(node.name, Binding("class", span))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name in _target_names(target):
                    self.bind(name, Binding("assign", span))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            for name in _target_names(node.target):
                self.bind(name, Binding("assign", span))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                origin = alias.name if alias.asname else bound
                self.bind(bound, Binding("import", span, origin))
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module, node.level, self.info.name, self.is_package)
            for alias in node.names:
                if alias.name == "*":
                    self.info.star_imports.append(base)
                else:
                    origin = f"{base}.{alias.name}"
                    self.bind(alias.asname or alias.name, Binding("import", span, origin))

    @staticmethod
    def class_info(node: ast.ClassDef) -> ClassInfo:
        methods = _Definitions()
        for child, block in _flatten(node.body):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                methods.add(child.name, _function(child), block)
        bases = tuple(ast.unparse(base) for base in node.bases)
        return ClassInfo(node.name, bases, methods.table, _span(node))


def decode(data: bytes, path: str) -> str:
    """Source bytes to text the way Python reads them (coding cookie, BOM, UTF-8)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        raise ParseError(f"{path}: cannot decode source: {exc}") from None


def index_module(data: bytes, name: str, path: str, *, is_package: bool) -> ModuleInfo:
    """Parse `data` (never executing it) into a ModuleInfo; raises ParseError."""
    if len(data) > MAX_SOURCE_BYTES:
        raise ParseError(f"{path}: {len(data)} bytes is over the {MAX_SOURCE_BYTES} byte limit")
    text = decode(data, path)
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise ParseError(f"{path}:{exc.lineno}: does not parse: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise ParseError(f"{path}: does not parse: {type(exc).__name__}: {exc}") from None
    info = ModuleInfo(name=name, path=path, text=text)
    try:
        _Indexer(info, is_package).run(tree)
    except RecursionError:
        raise ParseError(f"{path}: nested too deeply to index") from None
    return info


class ModuleCache:
    """Indexes keyed by (content hash, module name): identical files across releases parse once,
    and with a `store` (an IndexStore) once across runs too."""

    def __init__(self, capacity: int = 64, store=None, parse=index_module):
        self.capacity = capacity
        self.store = store
        self.parse = parse  # canary.parse_pool.ParsePool spreads parsing over processes
        self._items: OrderedDict[str, ModuleInfo] = OrderedDict()
        self._lock = threading.Lock()
        self.parses = 0

    def get(self, data: bytes, name: str, path: str, *, is_package: bool) -> ModuleInfo:
        digest = hashlib.sha256(data).hexdigest()
        key = hashlib.sha256(f"{digest}:{name}:{is_package}".encode()).hexdigest()
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        info = self.store.get(key, name, path, decode(data, path)) if self.store else None
        if info is None:
            info = self.parse(data, name, path, is_package=is_package)
            with self._lock:
                self.parses += 1
            if self.store:
                self.store.put(key, info)
        with self._lock:
            self._items[key] = info
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return info
