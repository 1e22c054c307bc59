"""How a client says it can do without an upstream name: the guard carries to its later uses.

`try: from X import f` / `except ImportError: return` at function scope, or a handler that
binds a stand-in (`f = None`, `class f: ...`), means every later use of `f` runs only when
the import worked: those uses are tolerated, as the import is. The same holds for a name
read with a default (`orig = getattr(X, "f", None)` then `if orig is None: return`), and a
patch of a name read that way is the client injecting what is missing, not a contract.
"""

from __future__ import annotations

import ast

from canary.scan.downstream.guards import tolerant
from canary.scan.downstream.imports import Ref

_GIVES_UP = (ast.Return, ast.Continue, ast.Break)


def imported(body: list[ast.stmt]) -> dict[str, Ref]:
    """Name bound -> what it imports, for the absolute imports directly in `body`."""
    found: dict[str, Ref] = {}
    for statement in body:
        if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            module = tuple(statement.module.split("."))
            for alias in statement.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = Ref((*module, alias.name), len(module))
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                parts = tuple(alias.name.split("."))
                found[alias.asname or parts[0]] = Ref(parts, len(parts))
    return found


def done_without(node: ast.Try) -> list[Ref]:
    """What the try imports when a handler that catches its failure gives up (returns,
    continues, breaks) or binds a stand-in for each name: the rest runs only with them."""
    names = imported(node.body)
    if not names:
        return []
    for handler in node.handlers:
        if not tolerant(handler) or not handler.body:
            continue
        if isinstance(handler.body[-1], _GIVES_UP):
            return list(names.values())
        bound = _bound(handler.body)
        if set(names) <= bound:
            return list(names.values())
    return []


def _bound(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for statement in body:
        if isinstance(statement, ast.Assign):
            names |= {t.id for t in statement.targets if isinstance(t, ast.Name)}
        elif isinstance(statement, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(statement.name)
    return names
