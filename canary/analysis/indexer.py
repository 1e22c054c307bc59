"""The module indexer: one pass over a parsed module records what it binds and defines.

Upstream code is untrusted input: it is parsed with `ast`, never imported.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from canary.analysis.budget import check_cost
from canary.analysis.classbody import body_records, generator, subclass_generator
from canary.analysis.exports import ExportsCollector
from canary.analysis.model import (
    MAX_SOURCE_BYTES,
    Binding,
    ClassInfo,
    FunctionInfo,
    ModuleInfo,
    ParseError,
    Span,
)
from canary.analysis.parameters import (
    FunctionNode,
    decorator_names,
    parameters,
    renames,
    source_text,
)
from canary.analysis.parselock import parse_locked
from canary.analysis.skeleton import blank_bodies, python_newlines


def _span(node: ast.stmt, ends: dict[int, int]) -> Span:
    """Lines of `node`, decorators included; `ends` restores the end of a blanked body."""
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    end = node.end_lineno or node.lineno
    return Span(start, ends.get(end, end))


def _nested_bodies(node: ast.stmt) -> list[list[ast.stmt]]:
    """Statement blocks that run at the same scope: if/else, try/except/finally, with."""
    if isinstance(node, ast.If):
        return [node.body, node.orelse]
    if isinstance(node, ast.Try | getattr(ast, "TryStar", ast.Try)):
        return [node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody]
    if isinstance(node, ast.With | ast.AsyncWith):
        return [node.body]
    return []


def _type_checking(test: ast.expr) -> bool | None:
    """True for `if TYPE_CHECKING:`, False for `if not TYPE_CHECKING:`, else None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _type_checking(test.operand)
        return None if inner is None else not inner
    if ast.unparse(test).rsplit(".", 1)[-1] == "TYPE_CHECKING":
        return True
    return None


def _main_guard(test: ast.expr) -> bool:
    """`if __name__ == "__main__":`, whose body never runs when the module is imported."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    sides = {ast.unparse(test.left), ast.unparse(test.comparators[0])}
    return isinstance(test.ops[0], ast.Eq) and sides in ({"__name__", "'__main__'"},)


def _flatten(
    body: list[ast.stmt], typing_only: bool = False
) -> Iterator[tuple[ast.stmt, int, bool]]:
    """Statements of a scope with the block that holds each (if/else branches differ), and
    whether they run for type checkers only (under `if TYPE_CHECKING:`). The body of `if
    __name__ == "__main__":` does not run on import: it binds nothing."""
    for node in body:
        yield node, id(body), typing_only
        if isinstance(node, ast.If) and _main_guard(node.test):
            yield from _flatten(node.orelse, typing_only)
            continue
        if isinstance(node, ast.If) and (checking := _type_checking(node.test)) is not None:
            yield from _flatten(node.body, typing_only or checking)
            yield from _flatten(node.orelse, typing_only or not checking)
            continue
        for block in _nested_bodies(node):
            yield from _flatten(block, typing_only)


class _Definitions:
    """Definitions by name: a later `def` in the same block replaces the earlier one, as at
    run time; definitions in different if/else branches are alternatives, all kept."""

    def __init__(self) -> None:
        self.table: dict[str, list[Any]] = {}
        self._blocks: dict[str, list[int]] = {}

    def drop(self, name: str, block: int) -> None:
        """A later binding in `block` replaces the definition there (`forward = _other`)."""
        blocks = self._blocks.get(name, [])
        if block in blocks:
            at = blocks.index(block)
            del blocks[at], self.table[name][at]
            if not blocks:
                del self.table[name], self._blocks[name]

    def add(self, name: str, item: object, block: int) -> None:
        blocks = self._blocks.setdefault(name, [])
        items = self.table.setdefault(name, [])
        if block in blocks:
            items[blocks.index(block)] = item
        else:
            blocks.append(block)
            items.append(item)


def _target_names(target: ast.expr) -> Iterator[str]:
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
    def __init__(self, info: ModuleInfo, is_package: bool, ends: dict[int, int]):
        self.info = info
        self.is_package = is_package
        self.ends = ends
        self.bindings: dict[str, list[Binding]] = {}
        self.functions = _Definitions()
        self.classes = _Definitions()

        self.exports = ExportsCollector()
        self.typing_only = False

    def bind(self, name: str, binding: Binding) -> None:
        if self.typing_only:
            binding = replace(binding, typing_only=True)
        self.bindings.setdefault(name, []).append(binding)

    def run(self, tree: ast.Module) -> None:
        for node, block, typing_only in _flatten(tree.body):
            self.typing_only = typing_only
            self.statement(node, block)
            if not typing_only:
                self.exports.statement(node)
        self.info.bindings = self.bindings
        self.info.functions = self.functions.table
        self.info.classes = self.classes.table
        package = self.info.name if self.is_package else self.info.name.rpartition(".")[0]
        self.info.all_names = self.exports.dunder_all()
        self.info.lazy = self.exports.lazy(package)
        self.info.aliases = self.exports.aliases(package)

    def function(self, node: FunctionNode) -> FunctionInfo:
        return FunctionInfo(
            node.name,
            parameters(node.args),
            _span(node, self.ends),
            renames(node),
            source_text(node.returns),
            decorator_names(node),
        )

    def statement(self, node: ast.stmt, block: int) -> None:
        span = _span(node, self.ends)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if not self.typing_only:  # a definition for type checkers does not exist at run time
                self.functions.add(node.name, self.function(node), block)
            self.bind(node.name, Binding("def", span))
        elif isinstance(node, ast.ClassDef):
            if not self.typing_only:
                self.classes.add(node.name, self.class_info(node), block)
            self.bind(node.name, Binding("class", span))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name in _target_names(target):
                    self.bind(name, Binding("assign", span))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            for name in _target_names(node.target):
                self.bind(name, Binding("assign", span))
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                for name in _target_names(target):
                    self.bind(name, Binding("del", span))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                origin = alias.name if alias.asname else bound
                self.bind(bound, Binding("import", span, origin))
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module, node.level, self.info.name, self.is_package)
            for alias in node.names:
                if alias.name == "*":
                    if self.typing_only:
                        self.info.typing_star_imports.append(base)
                    else:
                        self.info.star_imports.append(base)
                        self.info.star_lines.append(span.start)
                else:
                    origin = f"{base}.{alias.name}"
                    self.bind(alias.asname or alias.name, Binding("import", span, origin))

    def class_info(self, node: ast.ClassDef) -> ClassInfo:
        """The class as its body leaves it once run: a `def` rebound later in the body's own
        block (`forward = _other`, an import, `del`) is gone, `name = method` is that method,
        and a function imported in the body (`from .utils import log_metrics`) is a method
        too, kept by where it comes from (`borrowed`)."""
        methods = _Definitions()
        borrowed: dict[str, str] = {}
        applies = None
        own = id(node.body)
        for child, block, typing_only in _flatten(node.body):
            if typing_only:
                continue  # a method for type checkers only: the class has none at run time
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                methods.add(child.name, self.function(child), block)
                applies = subclass_generator(child) or applies
                if block == own:
                    borrowed.pop(child.name, None)
            elif block == own:
                self.class_binding(child, methods, borrowed, own)
        bases = tuple(ast.unparse(base) for base in node.bases)
        fields, assigned, slots = body_records(node.body)
        return ClassInfo(
            node.name,
            bases,
            methods.table,
            _span(node, self.ends),
            fields,
            assigned,
            slots,
            generator(node),
            applies,
            borrowed,
        )

    def class_binding(
        self, node: ast.stmt, methods: _Definitions, borrowed: dict[str, str], block: int
    ) -> None:
        """A statement of the class body's own `block` that binds names: each replaces the
        `def` of its name above it, but `f = wrap(f)` (a decorator's way). `g = f` makes `g`
        the method `f` is; an import, or a name of the module replacing a `def` (`forward =
        _fast`), is borrowed from where it comes from; any other value replacing a `def` is
        computed at run time (borrowed from "")."""
        bound: list[tuple[str, str | None]] = []  # each name, and where it is borrowed from
        if isinstance(node, ast.Import):
            bound = [(a.asname or a.name.split(".")[0], a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module, node.level, self.info.name, self.is_package)
            bound = [(a.asname or a.name, f"{base}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            value = node.value
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for name in (n for target in targets for n in _target_names(target)):
                if isinstance(value, ast.Call) and any(
                    isinstance(a, ast.Name) and a.id == name for a in value.args
                ):
                    continue  # `f = wrap(f)`: the def, wrapped as by a decorator
                if isinstance(value, ast.Name) and value.id in methods.table:
                    borrowed.pop(name, None)
                    methods.drop(name, block)
                    methods.add(name, methods.table[value.id][-1], block)
                elif name not in methods.table:
                    bound.append((name, None))  # a class attribute, no method replaced
                elif isinstance(value, ast.Name):
                    bound.append((name, f"{self.info.name}.{value.id}"))
                else:
                    bound.append((name, ""))
        elif isinstance(node, ast.Delete):
            bound = [(name, None) for t in node.targets for name in _target_names(t)]
        for name, origin in bound:
            methods.drop(name, block)
            if origin is not None and origin != "*":
                borrowed[name] = origin
            else:
                borrowed.pop(name, None)


def decode(data: bytes, path: str) -> str:
    """Source bytes to text the way Python reads them (coding cookie, BOM, UTF-8)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        raise ParseError(f"{path}: cannot decode source: {exc}") from None


def _parse(text: str, path: str) -> ast.Module:
    check_cost(text, path)
    try:
        return parse_locked(text, path)
    except SyntaxError as exc:  # a NUL byte's has no line number: the first NUL's is said
        line = exc.lineno or (text.count("\n", 0, text.find("\0")) + 1 if "\0" in text else None)
        where = f"{path}:{line}" if line else path
        raise ParseError(f"{where}: does not parse: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise ParseError(f"{path}: does not parse: {type(exc).__name__}: {exc}") from None


def index_module(data: bytes, name: str, path: str, *, is_package: bool) -> ModuleInfo:
    """Parse `data` (never executing it) into a ModuleInfo; raises ParseError."""
    if len(data) > MAX_SOURCE_BYTES:
        raise ParseError(f"{path}: {len(data)} bytes is over the {MAX_SOURCE_BYTES} byte limit")
    return index_text(decode(data, path), name, path, is_package=is_package)


def index_text(
    text: str,
    name: str,
    path: str,
    *,
    is_package: bool,
    masked: str | None = None,
    line: int = 1,
) -> ModuleInfo:
    """The index of decoded source (whose `mask_text` may be given); raises ParseError, naming
    the lines of the file the text starts on `line` of (statements cut from a module are
    indexed from line 1, canary.analysis.moved, and an error names where they stand)."""
    skeleton = blank_bodies(python_newlines(text), masked)
    try:
        tree = _parse(skeleton.text, path) if skeleton else None
    except ParseError:
        tree = None  # parsed whole below, so the error names the real line
    if tree is None:
        skeleton = None
        try:
            tree = _parse(text, path)
        except ParseError:
            if line == 1:
                raise
            # parsed where it stands: a message may name lines (an unclosed bracket's)
            _parse("\n" * (line - 1) + text, path)
            raise
    info = ModuleInfo(name=name, path=path, text=text)
    try:
        _Indexer(info, is_package, skeleton.ends if skeleton else {}).run(tree)
    except RecursionError:
        raise ParseError(f"{path}: nested too deeply to index") from None
    return info
