"""Which upstream object a downstream name or dotted expression denotes, through its aliases."""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Ref:
    """A dotted path into a package; the first `known` parts are certainly a module."""

    parts: tuple[str, ...]
    known: int

    @property
    def root(self) -> str:
        return self.parts[0]

    def child(self, name: str) -> Ref:
        return Ref((*self.parts, name), self.known)


class Scopes:
    """Name bindings of one file: module scope plus one layer per enclosing def/class.

    A binding is whatever the caller stores (a Ref, a tainted source, ...); None marks a name
    that is bound locally to something unknown, so it hides an outer alias of the same name.
    """

    def __init__(self) -> None:
        self._stack: list[dict[str, object | None]] = [{}]

    def push(self, shadowed: list[str]) -> None:
        self._stack.append(dict.fromkeys(shadowed))

    def pop(self) -> None:
        self._stack.pop()

    def bind(self, name: str, value: object | None) -> None:
        self._stack[-1][name] = value

    def lookup(self, name: str) -> object | None:
        for scope in reversed(self._stack):
            if name in scope:
                return scope[name]
        return None


def bind_import(node: ast.Import | ast.ImportFrom, scopes: Scopes) -> list[Ref]:
    """Bind the names an import statement creates; return what it imports.

    Relative imports are the downstream's own code and bind nothing upstream.
    """
    refs: list[Ref] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            parts = tuple(alias.name.split("."))
            ref = Ref(parts, len(parts))
            refs.append(ref)
            if alias.asname:
                scopes.bind(alias.asname, ref)
            else:
                scopes.bind(parts[0], Ref(parts[:1], 1))
        return refs
    if node.level or not node.module:
        for alias in node.names:
            scopes.bind(alias.asname or alias.name, None)
        return refs
    module = tuple(node.module.split("."))
    for alias in node.names:
        if alias.name == "*":
            continue
        ref = Ref((*module, alias.name), len(module))
        refs.append(ref)
        scopes.bind(alias.asname or alias.name, ref)
    return refs


def resolve(expr: ast.expr, scopes: Scopes) -> Ref | None:
    """The Ref a Name or Attribute chain denotes, or None when its root is not an import."""
    if isinstance(expr, ast.Name):
        bound = scopes.lookup(expr.id)
        return bound if isinstance(bound, Ref) else None
    if isinstance(expr, ast.Attribute):
        base = resolve(expr.value, scopes)
        return base.child(expr.attr) if base else None
    return None
