"""The global names a function reads, as Python's own scoping decides, without running it.

A client that copies a function's source (`inspect.getsource`) and compiles it in another
module's namespace needs every global the function reads to be bound there. Which names those
are is Python's scoping: parameters, local bindings, comprehension variables and names bound
by an enclosing function are not globals; `symtable` (the compiler's own pass, no execution)
says so for each scope. Decorators, defaults and annotations are read where the `def` stands,
so the names of an enclosing class body are not globals there.
"""

from __future__ import annotations

import ast
import symtable
import textwrap
from collections.abc import Collection

from canary.analysis.model import FunctionInfo, ModuleInfo
from canary.analysis.parselock import parse_locked, symtable_locked


def function_tree(module: ModuleInfo, fn: FunctionInfo, source: str) -> tuple[ast.AST, int]:
    """The function's syntax tree and the offset of its line numbers: its own `source`
    dedented, else (a string literal that does not dedent) the whole module's definition at
    its line."""
    try:
        return parse_locked(textwrap.dedent(source)), fn.span.start - 1
    except (SyntaxError, ValueError):
        pass
    tree = parse_locked(module.text)  # parsed before, when the module was indexed
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if start == fn.span.start and node.name == fn.name:
                return node, 0
    return ast.Module(body=[], type_ignores=[]), 0


def global_reads(
    module: ModuleInfo, fn: FunctionInfo, enclosing: Collection[str] = ()
) -> list[str]:
    """The names `fn`'s def reads from its module's globals, sorted: in its decorators,
    defaults and annotations (but those `enclosing`, its class body, binds) and in its body
    and every scope nested in it; a name declared `global` is read where it is loaded or
    augmented (`X += 1`), not where it is only declared or assigned. Builtins are included:
    whether the module binds them decides."""
    tree, _ = function_tree(module, fn, module.segment(fn.span))
    node = tree.body[0] if isinstance(tree, ast.Module) and tree.body else tree
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return []
    top = symtable_locked(ast.unparse(node))
    found = {s.get_name() for s in top.get_symbols() if s.is_referenced()} - set(enclosing)
    declared: set[str] = set()
    for child in top.get_children():
        _globals_in(child, found, declared)
    augmented = {
        target.id
        for inner in ast.walk(node)
        if isinstance(inner, ast.AugAssign) and isinstance(target := inner.target, ast.Name)
    }
    return sorted(found | (augmented & declared))


def _globals_in(table: symtable.SymbolTable, found: set[str], declared: set[str]) -> None:
    """Add the globals `table` and the scopes nested in it read (and those they declare)."""
    for symbol in table.get_symbols():
        if symbol.is_declared_global():
            declared.add(symbol.get_name())
        if symbol.is_global() and symbol.is_referenced():
            found.add(symbol.get_name())
    for child in table.get_children():
        _globals_in(child, found, declared)
