"""What single AST nodes say by themselves, read without any binding: string and int
constants, literal tables, call arguments, re flags, a replacement's parameters."""

from __future__ import annotations

import ast
from collections.abc import Callable

from canary.scan.downstream.guards import tolerant, tolerant_handlers
from canary.scan.downstream.imports import Ref
from canary.scan.downstream.rewriters import ANY_CLASS
from canary.scan.downstream.spelled import one_spelled

# re flags a check can carry inline; MULTILINE is how checks search anyway
_INLINE_FLAGS = {"IGNORECASE": "i", "I": "i", "DOTALL": "s", "S": "s", "VERBOSE": "x", "X": "x"}
_INLINE_FLAGS |= {"ASCII": "a", "A": "a", "MULTILINE": "", "M": ""}


def constant(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def constant_int(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def literal_rows(expr: ast.expr) -> tuple[tuple[str | None, ...], ...]:
    """(key, value) rows of a literal dict with string keys, or the tuples of a literal list."""
    if isinstance(expr, ast.Dict) and expr.keys and all(constant(k) for k in expr.keys):
        return tuple(
            (constant(k), constant(v)) for k, v in zip(expr.keys, expr.values, strict=True)
        )
    if (
        isinstance(expr, ast.List | ast.Tuple)
        and expr.elts
        and all(isinstance(e, ast.Tuple) for e in expr.elts)
    ):
        rows = tuple(
            tuple(constant(x) for x in e.elts) for e in expr.elts if isinstance(e, ast.Tuple)
        )
        return rows if any(any(r) for r in rows) else ()
    return ()


def argument(call: ast.Call, position: int, name: str) -> ast.expr | None:
    """The expression a call passes at `position` or as keyword `name`."""
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == name), None)


def inline_flags(node: ast.expr | None) -> str | None:
    """`re.S | re.I` -> "si"; None when the flags are not all plain re constants."""
    if node is None:
        return ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = inline_flags(node.left), inline_flags(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Attribute) and node.attr in _INLINE_FLAGS:
        return _INLINE_FLAGS[node.attr]
    return None


def with_flags(regex: str, flags: str | None) -> str | None:
    if flags is None:
        return None
    letters = "".join(sorted(set(flags)))
    return f"(?{letters}){regex}" if letters else regex


def absolute_imports(body: list[ast.stmt]) -> dict[str, tuple[ast.alias, Ref]]:
    """Name bound -> (its alias node, what it imports) for the `from m import n` statements
    directly in `body`."""
    found = {}
    for statement in body:
        if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            module = tuple(statement.module.split("."))
            for alias in statement.names:
                if alias.name != "*":
                    ref = Ref((*module, alias.name), len(module))
                    found[alias.asname or alias.name] = (alias, ref)
    return found


def import_fallbacks(node: ast.Try) -> list[tuple[ast.alias, ast.alias, Ref, bool]]:
    """(the first import's alias, its fallback's alias, what the fallback imports, whether
    the client tolerates the fallback failing too) for each `try: from a import X` / `except
    ImportError: from b import X` binding the same name from another place in the same
    upstream. The try body may bind the name by assignment (`from a import Y; X = Y`), and
    the fallback may sit in a try of its own in the handler (`except ImportError: try: from
    b import X / except ImportError: X = "0.0.0"`): one check of either, tolerated."""
    first = _bound_by_imports(node.body)
    pairs = []
    for handler in node.handlers:
        if not tolerant(handler):
            continue
        for name, (alias, ref, guarded) in _fallback_imports(handler.body).items():
            primary = first.get(name)
            if primary is not None and primary[1].root == ref.root and primary[1] != ref:
                pairs.append((primary[0], alias, ref, guarded))
    return pairs


def _bound_by_imports(body: list[ast.stmt]) -> dict[str, tuple[ast.alias, Ref]]:
    """`absolute_imports(body)`, with the names assigned one of them (`X = Y`) after it."""
    found = absolute_imports(body)
    for statement in body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Name):
            imported = found.get(statement.value.id)
            for target in statement.targets:
                if imported is not None and isinstance(target, ast.Name):
                    found.setdefault(target.id, imported)
    return found


def _fallback_imports(body: list[ast.stmt]) -> dict[str, tuple[ast.alias, Ref, bool]]:
    """The imports of a handler's body, and of the body of a try directly in it (guarded
    when that try's own handlers tolerate it failing)."""
    found = {name: (alias, ref, False) for name, (alias, ref) in absolute_imports(body).items()}
    for statement in body:
        if isinstance(statement, ast.Try):
            guarded = tolerant_handlers(statement)
            for name, (alias, ref) in absolute_imports(statement.body).items():
                found.setdefault(name, (alias, ref, guarded))
    return found


def rewritten(module: str, method: str | None) -> Ref:
    """The source a registered rewriter receives: its module's, or one method's of a class."""
    parts = tuple(module.split("."))
    return Ref((*parts, ANY_CLASS, method) if method else parts, len(parts))


def wrapper_params(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> tuple[str, ...]:
    """The named parameters a replacement passes on: no self/cls, no *args/**kwargs."""
    args = fn.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return (*names, *(a.arg for a in args.kwonlyargs))


def local_functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every def of the file by name, and methods as `Class.method`, for wrapper lookup."""
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found[f"{node.name}.{item.name}"] = item
    return found


def installed(
    value: ast.expr | None,
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
    lookup: Callable[[str], object | None],
) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None:
    """The local function (or lambda) a patch installs, if the file defines it (`functions`);
    a name `lookup` finds bound in scope is not the module's def of that name."""
    if isinstance(value, ast.Lambda):
        return value
    if isinstance(value, ast.Name) and lookup(value.id) is None:
        return functions.get(value.id)
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        return functions.get(f"{value.value.id}.{value.attr}")
    return None


def attribute_call(
    call: ast.Call, lookup: Callable[[str], object | None]
) -> tuple[str, ast.expr, str] | None:
    """(the builtin, the object, the literal name) of `setattr(X, "n", v)`, `hasattr(X, "n")`
    or `getattr(X, "n"[, d])`, unless the builtin's name is bound to something else."""
    func = call.func
    if not isinstance(func, ast.Name) or func.id not in ("setattr", "hasattr", "getattr"):
        return None
    if lookup(func.id) is not None or len(call.args) < 2:
        return None
    name = one_spelled(call.args[1], lookup)  # a literal, or a name spelled from literals
    return (func.id, call.args[0], name) if name is not None else None
