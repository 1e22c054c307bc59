"""Functions of the package that return the source of what they are passed.

`def _source(fn): return inspect.getsource(fn)` and `def read(cls): src =
inspect.getsource(cls.forward); return src, cls` are how a library shares the reading of
upstream source; `_source(Trainer.train)` and `src, _ = read(LlamaAttention)` then hold that
source at the call. Read from the def alone (its parameters, its `return`s), so what a call
returns is decided by what that call passes, not by what other calls pass.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

# str methods whose result is still (a rewrite of) the same source text
KEEPS_SOURCE = frozenset(
    {"replace", "strip", "lstrip", "rstrip", "expandtabs", "removeprefix", "removesuffix"}
)

#: what a function returns a source with (`inspect.getsource`, `getsource`): a file that
#: never spells it defines no function returning one (the first pass looks for none there)
READS_SOURCE = "getsource"


@dataclass(frozen=True)
class Returned:
    """A function returns the source of its parameter `name` (at `index` among the positional
    ones, -1 for keyword-only), or of `attrs` under it; at `position` of a returned tuple, or
    (None) the whole value."""

    name: str
    index: int
    attrs: tuple[str, ...]
    position: int | None


def own_statements(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of a function's body, not those of the defs and classes nested in it."""
    pending: list[ast.AST] = list(body)
    while pending:
        node = pending.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                pending.append(child)


def _is_getsource(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id == "inspect" and func.attr == READS_SOURCE
    return isinstance(func, ast.Name) and func.id == READS_SOURCE


def _dedented(expr: ast.expr) -> ast.expr:
    """`textwrap.dedent(x)` is x's text for what it holds."""
    while (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == "dedent"
        and expr.args
    ):
        expr = expr.args[0]
    return expr


def chain(expr: ast.expr) -> tuple[str, tuple[str, ...]] | None:
    """`p` or `p.a.b` -> ("p", ("a", "b"))."""
    attrs: list[str] = []
    while isinstance(expr, ast.Attribute):
        attrs.insert(0, expr.attr)
        expr = expr.value
    return (expr.id, tuple(attrs)) if isinstance(expr, ast.Name) else None


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _rewrites(value: ast.expr, name: str) -> bool:
    """`value` is local `name`'s text rewritten, still a source: `src.replace(...)` (and the
    other str methods that keep one), `re.sub(pattern, repl, src)`, `textwrap.dedent(src)`."""
    inner = _dedented(value)
    if inner is not value:  # `src = textwrap.dedent(src)`
        return isinstance(inner, ast.Name) and inner.id == name
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return False
    func = value.func
    if func.attr in KEEPS_SOURCE:
        return isinstance(func.value, ast.Name) and func.value.id == name
    string = value.args[2] if len(value.args) > 2 else None
    string = string or next((k.value for k in value.keywords if k.arg == "string"), None)
    is_re = isinstance(func.value, ast.Name) and func.value.id == "re" and func.attr == "sub"
    return is_re and isinstance(string, ast.Name) and string.id == name


def returned_source(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Returned | None:
    """What `fn` returns the source of, when a `return` gives `inspect.getsource` of a
    parameter (or an attribute chain under it), directly, through a local name assigned from
    it (and then only rewritten: `src = src.replace(...)`, `src = re.sub(p, r, src)`), or as
    an item of a returned tuple. A parameter the body rebinds is not followed."""
    args = fn.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    params = {name: i for i, name in enumerate(positional)}
    params |= {a.arg: -1 for a in args.kwonlyargs}
    nodes = sorted(own_statements(fn.body), key=_position)  # in source order
    assigned: dict[str, list[ast.expr]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and isinstance(node.target, ast.Name):
            assigned.setdefault(node.target.id, []).append(node.value or node.target)

    def source_of(expr: ast.expr) -> tuple[str, tuple[str, ...]] | None:
        expr = _dedented(expr)
        if isinstance(expr, ast.Name) and expr.id in assigned:
            first, *later = assigned[expr.id]
            if not all(_rewrites(value, expr.id) for value in later):
                return None
            expr = _dedented(first)
        if not (isinstance(expr, ast.Call) and _is_getsource(expr.func) and expr.args):
            return None
        found = chain(expr.args[0])
        if found is None or found[0] not in params or found[0] in assigned:
            return None
        return found

    for node in nodes:
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        items = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        for position, item in enumerate(items):
            found = source_of(item)
            if found is not None:
                at = position if isinstance(node.value, ast.Tuple) else None
                return Returned(found[0], params[found[0]], found[1], at)
    return None


def argument(call: ast.Call, returned: Returned) -> ast.expr | None:
    """The expression a call passes for the parameter whose source the function returns."""
    if 0 <= returned.index < len(call.args):
        if any(isinstance(a, ast.Starred) for a in call.args[: returned.index + 1]):
            return None
        return call.args[returned.index]
    return next((k.value for k in call.keywords if k.arg == returned.name), None)
