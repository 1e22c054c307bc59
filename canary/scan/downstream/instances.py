"""Which upstream object a downstream expression denotes when it is an instance of an upstream
class, not the class itself (issue 45 item 3), and the uses made of it.

`imports.py` follows names to the upstream objects they are (`Trainer`, `transformers.Trainer`);
this module follows the client's own values to the objects they hold: an `Instance` of the
class the code names. A value is one when the client
- annotates it: a parameter (`model: PreTrainedModel`, `Optional[...]`, `... | None`, a string
  annotation `"DeepSpeedEngine"` naming a class imported under `if TYPE_CHECKING:`), an
  assignment (`x: LLM = ...`), or the return of one of its own functions (`def load_model(...)
  -> "PreTrainedModel"`, in any file of the package: callsites.py gathers them);
- constructs it: `x = LLM(...)`, `self.llm = vllm.LLM(...)`, `past.cross_cache = DynamicCache()`
  (a dotted path the scope binds, as a name);
- narrows it: in the body of `if isinstance(x, Cls):`, and after `assert isinstance(x, Cls)`;
- holds it in an attribute any method of the class sets (`self.llm = LLM(...)` in `__init__`,
  `self.model: SomeModel`, `self.model = model` from an annotated parameter): `self.llm` then
  denotes it in every method of that class.

`obj.m(...)` on such a value is a call of the class's method `m`, `obj.x` a read of its
attribute `x`: each a contract on the class the code names (whose MRO the engine walks), never
on the base that defines the member today (proposing/inherited.py). Only the first member of a
chain is known (`obj.x.y` reads x; what x holds is upstream's business).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from canary.analysis.parselock import parse_locked
from canary.scan.downstream.guards import Resolver, type_checking
from canary.scan.downstream.imports import Ref, Scopes, bind_import
from canary.scan.downstream.source_helpers import own_statements

#: the names that annotate "or None" and "one of" in `typing`
_OPTIONAL = frozenset({"Optional"})
_UNION = frozenset({"Union"})


@dataclass(frozen=True)
class Instance:
    """An object of upstream class `cls`, the class the code names."""

    cls: Ref


def annotated(annotation: ast.expr | None, resolve: Resolver) -> Ref | None:
    """The upstream class an annotation names: `X`, `mod.X`, `"X"`, `Optional[X]`,
    `Union[X, None]`, `X | None`; None for anything else (a union of two classes says
    neither)."""
    if annotation is None:
        return None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:  # a string annotation: an expression, parsed as a module of one statement
            body = parse_locked(annotation.value.strip()).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        single = body[0] if len(body) == 1 else None
        return annotated(single.value, resolve) if isinstance(single, ast.Expr) else None
    if isinstance(annotation, ast.Subscript):
        head = _last_name(annotation.value)
        if head in _OPTIONAL:
            return annotated(annotation.slice, resolve)
        if head in _UNION and isinstance(annotation.slice, ast.Tuple):
            kept = [e for e in annotation.slice.elts if not _is_none(e)]
            return annotated(kept[0], resolve) if len(kept) == 1 else None
        return None
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        if _is_none(annotation.right):
            return annotated(annotation.left, resolve)
        return annotated(annotation.right, resolve) if _is_none(annotation.left) else None
    if isinstance(annotation, ast.Name | ast.Attribute):
        ref = resolve(annotation)
        return ref if ref is not None and _capitalized(ref.parts[-1]) else None
    return None


def annotation_imports(tree: ast.Module) -> Scopes:
    """The names the module's `if TYPE_CHECKING:` blocks import, for annotations only (the
    visit skips those blocks: they never run)."""
    names = Scopes()
    for node in tree.body:
        if isinstance(node, ast.If) and type_checking(node.test):
            for item in node.body:
                if isinstance(item, ast.Import | ast.ImportFrom):
                    bind_import(item, names)
    return names


def constructed(value: ast.expr | None, resolve: Resolver) -> Ref | None:
    """The upstream class `value` calls to build an object: `X(...)`, `mod.X(...)`."""
    if not isinstance(value, ast.Call):
        return None
    ref = resolve(value.func)
    return ref if ref is not None and _capitalized(ref.parts[-1]) else None


def _capitalized(name: str) -> bool:
    """A name a class goes by (`Trainer`, `LLM`, `_Base`), not a function (`load`): what is
    called or annotated is no constant, so all capitals is a class too."""
    return name.lstrip("_")[:1].isupper()


def path_of(expr: ast.expr) -> str | None:
    """The dotted path a Name or Attribute chain spells (`self.llm`), the key a scope binds a
    held instance under; None for anything else (a subscript, a call)."""
    names: list[str] = []
    while isinstance(expr, ast.Attribute):
        names.insert(0, expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    return ".".join([expr.id, *names])


def held(expr: ast.expr, lookup: Callable[[str], object | None]) -> tuple[Instance, str] | None:
    """For an attribute read `expr` (`obj.x`, `self.llm.generate`): the instance its object
    holds and the member it reads there, when that object is a path bound to an Instance."""
    if not isinstance(expr, ast.Attribute):
        return None
    path = path_of(expr.value)
    found = lookup(path) if path else None
    return (found, expr.attr) if isinstance(found, Instance) else None


def _last_name(expr: ast.expr) -> str:
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else ""


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def _isinstance_tests(test: ast.expr) -> Iterator[tuple[str, ast.expr]]:
    """(path, class) of each `isinstance(path, Class)` that must hold for `test` to be true."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for value in test.values:
            yield from _isinstance_tests(value)
    elif (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and len(test.args) == 2
        and not isinstance(test.args[1], ast.Tuple)
        and (path := path_of(test.args[0])) is not None
    ):
        yield path, test.args[1]


def _exits(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Return | ast.Raise | ast.Continue | ast.Break)


def narrowed_within(node: ast.If) -> list[tuple[str, ast.expr]]:
    """(path, class) the isinstance tests of `if` narrow in its body."""
    return list(_isinstance_tests(node.test))


def narrowed_after(statement: ast.AST) -> list[tuple[str, ast.expr]]:
    """(path, class) narrowed in the statements after this one in its block: after
    `assert isinstance(x, C)`, and after `if not isinstance(x, C): raise` (or return)."""
    if isinstance(statement, ast.Assert):
        return list(_isinstance_tests(statement.test))
    if (
        isinstance(statement, ast.If)
        and isinstance(statement.test, ast.UnaryOp)
        and isinstance(statement.test.op, ast.Not)
        and _exits(statement.body)
    ):
        return list(_isinstance_tests(statement.test.operand))
    return []


def self_held(
    node: ast.ClassDef, resolve_in: Callable[[ast.FunctionDef | ast.AsyncFunctionDef], Resolver]
) -> dict[str, Ref]:
    """Attribute name -> the upstream class of what every method of the class sets it to
    (`self.x = X(...)`, `self.x: X = ...`, `self.x = param` of an annotated parameter);
    `resolve_in(fn)` resolves names as the body of `fn` sees them (its local imports too).
    An attribute set to two different classes, or to something else too, holds none."""
    found: dict[str, Ref | None] = {}
    for fn in node.body:
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or not fn.args.args:
            continue
        if {ast.unparse(d) for d in fn.decorator_list} & {"staticmethod", "classmethod"}:
            continue
        this = fn.args.args[0].arg
        resolve = resolve_in(fn)
        params = {
            a.arg: annotated(a.annotation, resolve)
            for a in (*fn.args.posonlyargs, *fn.args.args[1:], *fn.args.kwonlyargs)
        }
        for statement in own_statements(fn.body):
            for target, value, annotation in _assignments(statement):
                if not (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == this
                ):
                    continue
                ref = annotated(annotation, resolve) or constructed(value, resolve)
                if ref is None and isinstance(value, ast.Name):
                    ref = params.get(value.id)
                seen = found.get(target.attr, ref)
                found[target.attr] = ref if seen == ref else None
    return {name: ref for name, ref in found.items() if ref is not None}


def _assignments(node: ast.AST) -> Iterator[tuple[ast.expr, ast.expr | None, ast.expr | None]]:
    """(target, value, annotation) of each single-target assignment statement."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            yield target, node.value, None
    elif isinstance(node, ast.AnnAssign):
        yield node.target, node.value, node.annotation
    elif isinstance(node, ast.AugAssign):
        yield node.target, None, None
