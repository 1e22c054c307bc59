"""The defs of a name that reach a statement, branch by branch.

`if old: def forward(self, x)` / `else: def forward(self, x, top_k)` defines two variants, and a
patch below the `if` installs whichever ran: both reach it. The last def above the patch in the
text (the `else` one) is only one of them (unsloth_zoo's qwen3_vl_moe patch installs the first).
A def in the same branch sequence as a later one is replaced by it; one in a loop or a try body
may or may not have run, so what came before stays possible too.
"""

from __future__ import annotations

import ast

Function = ast.FunctionDef | ast.AsyncFunctionDef
Defs = frozenset[Function]


def reaching(body: list[ast.stmt], name: str, at: ast.AST) -> list[Function]:
    """The defs of `name` in `body` (a scope's statements) that may be bound when `at` runs,
    in source order; empty when none is above it."""
    found, _ = _walk(body, name, at, frozenset())
    return sorted(found, key=lambda d: d.lineno)


def _holds(stmt: ast.stmt, at: ast.AST) -> bool:
    line = getattr(at, "lineno", 0)
    return stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno)


def _walk(body: list[ast.stmt], name: str, at: ast.AST, defs: Defs) -> tuple[Defs, bool]:
    """(the defs bound after `body`, or when `at` is reached in it; whether it was reached)."""
    for stmt in body:
        if _holds(stmt, at):
            return _into(stmt, name, at, defs), True
        defs = _after(stmt, name, defs)
    return defs, False


def _into(stmt: ast.stmt, name: str, at: ast.AST, defs: Defs) -> Defs:
    """The defs bound where `at` runs inside `stmt`."""
    if isinstance(stmt, ast.Try):
        for part, start in _try_parts(stmt, name, defs):
            found, reached = _walk(part, name, at, start)
            if reached:
                return found
        return defs
    parts = _branches(stmt)
    looped = isinstance(stmt, ast.For | ast.AsyncFor | ast.While)
    for part in parts:
        start = defs | _after_all(part, name, defs) if looped else defs
        found, reached = _walk(part, name, at, start)
        if reached:
            return found
    return defs  # in the statement's test or header, or a def or class body of its own


def _try_parts(stmt: ast.Try, name: str, defs: Defs) -> list[tuple[list, Defs]]:
    """Each part of a try with the defs bound where it starts: a handler may follow any point
    of the body (what it bound or not), `else` its end, `finally` any of their ends."""
    done = _after_all(stmt.body, name, defs)
    parts = [(stmt.body, defs), *((h.body, defs | done) for h in stmt.handlers)]
    parts.append((stmt.orelse, done))
    ends = [_after_all(part, name, start) for part, start in parts[1:]]
    return [*parts, (stmt.finalbody, frozenset().union(*ends))]


def _branches(stmt: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(stmt, ast.If | ast.For | ast.AsyncFor | ast.While):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, ast.With | ast.AsyncWith):
        return [stmt.body]
    if isinstance(stmt, ast.ClassDef):
        return [stmt.body]
    if isinstance(stmt, ast.Match):
        return [case.body for case in stmt.cases]
    return []


def _after_all(body: list[ast.stmt], name: str, defs: Defs) -> Defs:
    for stmt in body:
        defs = _after(stmt, name, defs)
    return defs


def _after(stmt: ast.stmt, name: str, defs: Defs) -> Defs:
    """The defs of `name` bound after `stmt` runs, from those bound before it."""
    if isinstance(stmt, Function):
        return frozenset({stmt}) if stmt.name == name else defs
    if isinstance(stmt, ast.ClassDef):
        return defs  # a def in a class body binds a class attribute
    if isinstance(stmt, ast.Try):
        final, start = _try_parts(stmt, name, defs)[-1]
        return _after_all(final, name, start)
    if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
        return defs | _after_all(stmt.body, name, defs) | _after_all(stmt.orelse, name, defs)
    if isinstance(stmt, ast.If):
        return _after_all(stmt.body, name, defs) | _after_all(stmt.orelse, name, defs)
    if isinstance(stmt, ast.Match):
        ends = [_after_all(case.body, name, defs) for case in stmt.cases]
        return frozenset().union(defs, *ends)
    if isinstance(stmt, ast.With | ast.AsyncWith):
        return _after_all(stmt.body, name, defs)
    return defs
