"""Regexes compiled once, at module or class level, and applied to upstream source later.

`_KTO_RE = re.compile(r"..." r"...", re.S)` at the top of a file (or in a class body) is a
source fingerprint as much as `re.sub(r"...", ..., src)` is, but the function applying it
(`_KTO_RE.sub(repl, src)`, `self._KTO_RE.search(src)`) may come before the assignment in the
file, or reach it through `self`/`cls`. These tables are read before the walk, from the
statements alone: the pattern text (string constants, their concatenations, names of
string constants of the same body) and plain `re` flags.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from canary.scan.downstream.node_values import argument, constant, inline_flags, with_flags

#: the modules whose `compile` builds a pattern `matches` can state
_RE_MODULES = ("re", "regex")


def compiled_patterns(body: list[ast.stmt]) -> dict[str, str]:
    """NAME -> regex (flags inline) for each `NAME = re.compile(...)` directly in `body`."""
    texts: dict[str, str] = {}
    found: dict[str, str] = {}
    for name, value in _assignments(body):
        text = _text(value, texts)
        if text is not None:
            texts[name] = text
            continue
        regex = _compiled(value, texts, _compile_names(body))
        if regex is not None:
            found[name] = regex
    return found


def _assignments(body: list[ast.stmt]) -> Iterator[tuple[str, ast.expr]]:
    for statement in body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value
        else:
            continue
        if isinstance(target, ast.Name):
            yield target.id, value


def _compile_names(body: list[ast.stmt]) -> frozenset[str]:
    """Names `from re import compile` binds in `body` (`compile` itself, or its alias)."""
    names = set()
    for statement in body:
        if isinstance(statement, ast.ImportFrom) and statement.module in _RE_MODULES:
            names |= {a.asname or a.name for a in statement.names if a.name == "compile"}
    return frozenset(names)


def _compiled(value: ast.expr, texts: dict[str, str], compile_names: frozenset[str]) -> str | None:
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    is_compile = (
        isinstance(func, ast.Attribute)
        and func.attr == "compile"
        and isinstance(func.value, ast.Name)
        and func.value.id in _RE_MODULES
    ) or (isinstance(func, ast.Name) and func.id in compile_names)
    if not is_compile:
        return None
    regex = _text(argument(value, 0, "pattern"), texts)
    flags = inline_flags(argument(value, 1, "flags"))
    return with_flags(regex, flags) if regex else None


def _text(node: ast.expr | None, texts: dict[str, str]) -> str | None:
    """A string constant, a name of one bound earlier in the body, or their `+` concatenation."""
    if isinstance(node, ast.Name):
        return texts.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left, texts), _text(node.right, texts)
        return left + right if left is not None and right is not None else None
    return constant(node)


def class_attribute(expr: ast.expr, class_name: str) -> str | None:
    """The attribute `self.X`, `cls.X` or `ClassName.X` reads in a method of `class_name`."""
    if not isinstance(expr, ast.Attribute):
        return None
    owner = expr.value
    if isinstance(owner, ast.Name) and owner.id in ("self", "cls", class_name):
        return expr.attr
    return None
