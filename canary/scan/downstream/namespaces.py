"""Upstream source compiled in an upstream module's namespace: what it reads must be bound there.

zoo copies the source of each `Linear*.forward` it lists from `peft.tuners.lora.*` and
compiles it with the names of the module it listed the class from (`create_new_function(...,
source, parent, dir(eval(parent)))`); `exec(src, vars(m))` and `exec(src, m.__dict__)` do the
same. Where the function reads a global its home module binds and that module does not (peft
0.18's `VARIANT_KWARG_KEYS`, read by `layer.Linear.forward`, not bound in `inc`, which imports
`Linear`), the compiled copy raises NameError. Each (module, function) pair is one
`globals_bound` check; names the client imports itself in text it adds (`prepend = "from
peft.tuners.lora.layer import VARIANT_KWARG_KEYS\\n"`) are `globals_given`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Protocol

from canary.scan.downstream.findings import UNKNOWN, wild
from canary.scan.downstream.folders import Column, ListedClass
from canary.scan.downstream.recorder import Recorder
from canary.scan.downstream.spelled import Derived, Texts, one_spelled
from canary.scan.downstream.text_flow import Source, TextFlow

# an import statement on a line of text the client compiles: `from a.b import (x, y as z)`,
# `import a.b`, `import a.b as c`
_FROM = re.compile(r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+\(?([\w \t,]+)\)?[ \t]*$", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w. \t,]+)$", re.M)
# most literals read for import statements, per call
_MAX_LITERALS = 256


class _Scanning(Protocol):
    """What the visitor knows where it meets the call (patterns.FileScanner)."""

    flow: TextFlow
    upstreams: frozenset[str]
    record: Recorder


def compiled_in(call: ast.Call, at: _Scanning) -> list[tuple[str, str, tuple[str, ...]]]:
    """(module, function, names given) for each upstream function whose source `call`
    compiles in the namespace of a module of the upstreams scanned."""
    flow, upstreams, within = at.flow, at.upstreams, at.record.within
    values = [*call.args, *(k.value for k in call.keywords)]
    namespaces = [
        (value, n) for value in values if (n := _namespace(value, flow, upstreams)) is not None
    ]
    sources = [s for value in values if (s := flow.source_of(value)) is not None]
    if not namespaces or not sources:
        return []
    given = _given([v for v in values if v is not namespaces[0][0]], flow, within)
    pairs = {pair for source in sources for _, n in namespaces for pair in _pairs(source, n)}
    return [(module, function, given) for module, function in sorted(pairs)]


# the calls whose result holds a module's names: `dir(m)`, `vars(m)`
_NAMES_OF = frozenset({"dir", "vars"})


def _namespace(node: ast.expr, flow: TextFlow, upstreams: frozenset[str]) -> str | Column | None:
    """The upstream module whose names `node` holds (`dir(m)`, `vars(m)`, `m.__dict__`; `m`
    also `eval(name)`), or the column of listed rows naming it (`dir(eval(parent))`)."""
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        module = node.value
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _NAMES_OF
        and len(node.args) == 1
        and flow.scopes.lookup(node.func.id) is None
    ):
        module = node.args[0]
    else:
        return None
    if isinstance(module, ast.Call) and _called(module.func) in ("eval", "import_module"):
        named = module.args[0] if len(module.args) == 1 else None
        bound = flow.scopes.lookup(named.id) if isinstance(named, ast.Name) else None
        if isinstance(bound, Column):
            return bound
        text = one_spelled(named, flow.scopes.lookup)
        return text if text and text.split(".")[0] in upstreams else None
    ref = flow.upstream(module)  # a module when the source compiled in it is of it
    return ".".join(ref.parts) if ref else None


def _called(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def _pairs(source: Source, namespace: str | Column) -> Iterator[tuple[str, str]]:
    """(module, function) pairs: the source's function, compiled in the module."""
    if source.listed is not None:
        column, attrs = source.listed
        for row in column.yielded.rows:
            cls = row[column.index] if len(row) > column.index else None
            if isinstance(cls, ListedClass) and attrs and _module(row, namespace) == cls.module:
                yield cls.module, ".".join((cls.name, *attrs))
        return
    ref = source.ref
    if ref == UNKNOWN or wild(ref) or isinstance(namespace, Column):
        return
    module, path = ".".join(ref.parts[: ref.known]), ref.parts[ref.known :]
    if module == namespace and path:
        yield module, ".".join(path)


def _module(row: tuple[object, ...], namespace: str | Column) -> str:
    """The module a row's text names in the namespace's column, or the fixed module."""
    if not isinstance(namespace, Column):
        return namespace
    cell = row[namespace.index] if len(row) > namespace.index else None
    return cell if isinstance(cell, str) else ""


def _given(values: list[ast.expr], flow: TextFlow, within: ast.AST | None) -> tuple[str, ...]:
    """The names import statements in the client's literals bind, where those literals reach
    the call's values: directly, through names bound to them, or assigned them anywhere in
    the enclosing function (`x = ""` then `if ...: x = "from m import N\\n"`)."""
    assigned = _assignments(within) if within else {}
    queue, seen, literals = list(values), set(), list[str]()
    while queue and len(literals) < _MAX_LITERALS:
        for node in ast.walk(queue.pop()):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                literals.append(node.value)
            elif isinstance(node, ast.Name) and node.id not in seen:
                seen.add(node.id)
                bound = flow.scopes.lookup(node.id)
                literals += bound.values if isinstance(bound, Texts | Derived) else ()
                queue += assigned.get(node.id, [])
    names = {name for text in literals for name in imported(text)}
    return tuple(sorted(name for name in names if name.isidentifier()))


def _assignments(fn: ast.AST) -> dict[str, list[ast.expr]]:
    found: dict[str, list[ast.expr]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and node.value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(node.value)
    return found


def imported(text: str) -> Iterator[str]:
    """The names the import statements on the lines of `text` bind."""
    for match in _FROM.finditer(text):
        yield from (_bound(item, tail=True) for item in match.group(1).split(",") if item.split())
    for match in _IMPORT.finditer(text):
        yield from (_bound(item, tail=False) for item in match.group(1).split(",") if item.split())


def _bound(item: str, tail: bool) -> str:
    """`x as y` binds y; `a.b` imported binds a; a name of `from m import` binds itself."""
    words = item.split()
    if len(words) == 3 and words[1] == "as":
        return words[2]
    return words[0] if tail else words[0].split(".")[0]
