"""The module indexer: one pass over a parsed module records what it binds and defines.

Upstream code is untrusted input: it is parsed with `ast`, never imported.
"""

from __future__ import annotations

import ast
import io
import tokenize

from canary.analysis.model import (
    MAX_SOURCE_BYTES,
    Binding,
    ClassInfo,
    FunctionInfo,
    ModuleInfo,
    ParseError,
    Span,
)
from canary.analysis.parameters import FunctionNode, parameters, renames


def _span(node: ast.stmt) -> Span:
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    return Span(start, node.end_lineno or node.lineno)


def _function(node: FunctionNode) -> FunctionInfo:
    return FunctionInfo(
        node.name,
        parameters(node.args),
        _span(node),
        renames(node),
        ast.unparse(node.returns) if node.returns else None,
    )


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
