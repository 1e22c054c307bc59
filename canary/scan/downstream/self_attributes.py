"""Attributes the downstream's objects hold an upstream class in: `def __init__(self,
lora_model_cls=LoRAModel): self._lora_model_cls = lora_model_cls` makes
`self._lora_model_cls.from_local_checkpoint(...)` a call of LoRAModel's, in any method. A
parameter annotated with the class (`lora_config: LoRAConfig`, also `Optional[...]` or
`... | None`) holds an instance of it: `self.lora_config.lora_extra_vocab_size` reads an
attribute the class must bind, `self.lora_config.method(...)` calls its method.

Read from the whole file before the visit, since the methods using an attribute often come
before the function that binds it (and the binding function may be a module-level def later
installed as `__init__`). An attribute bound from two different defaults binds nothing.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from canary.scan.downstream.findings import Role
from canary.scan.downstream.imports import Ref, Scopes, resolve
from canary.scan.downstream.source_helpers import own_statements


@dataclass(frozen=True)
class _Held:
    """What `self.NAME` was set from: a parameter's default (a class), or the class its
    annotation names (`instance`: an object of that class)."""

    expr: ast.expr
    instance: bool = False


def _defaults(args: ast.arguments) -> dict[str, _Held]:
    positional = [*args.posonlyargs, *args.args]
    with_default = positional[len(positional) - len(args.defaults) :]
    found = {a.arg: d for a, d in zip(with_default, args.defaults, strict=True)}
    kw_only = zip(args.kwonlyargs, args.kw_defaults, strict=True)
    found |= {a.arg: d for a, d in kw_only if d is not None}
    held = {name: _Held(d) for name, d in found.items() if not _is_none(d)}
    for arg in (*positional, *args.kwonlyargs):
        annotated = _annotated_class(arg.annotation)
        if arg.arg not in held and annotated is not None:
            held[arg.arg] = _Held(annotated, instance=True)
    return held


def _is_none(expr: ast.expr | None) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def _annotated_class(annotation: ast.expr | None) -> ast.expr | None:
    """The class `X`, `Optional[X]` or `X | None` names (a dotted name); None otherwise."""
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value).endswith("Optional"):
        annotation = annotation.slice
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        annotation = annotation.left if _is_none(annotation.right) else None
    if isinstance(annotation, ast.Name | ast.Attribute):
        return annotation
    return None


def default_bound(tree: ast.Module) -> dict[str, _Held]:
    """Attribute name -> what the parameter `self.NAME` is set from holds."""
    found: dict[str, _Held | None] = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        positional = [*fn.args.posonlyargs, *fn.args.args]
        defaults = _defaults(fn.args)
        if not positional or not defaults:
            continue
        owner = positional[0].arg
        for node in own_statements(fn.body):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                continue
            target, value = node.targets[0], node.value
            if not (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == owner
                and isinstance(value, ast.Name)
                and value.id in defaults
            ):
                continue
            default = defaults[value.id]
            seen = found.get(target.attr, default)
            same = seen is not None and _same(seen, default)
            found[target.attr] = default if same else None
    return {name: held for name, held in found.items() if held is not None}


def _same(one: _Held, other: _Held) -> bool:
    return one.instance == other.instance and ast.dump(one.expr) == ast.dump(other.expr)


class HeldBySelf:
    """Resolves `self.NAME...` through the attributes of one file set from upstream defaults."""

    def __init__(self, tree: ast.Module) -> None:
        self._tree = tree

    @functools.cached_property
    def _held(self) -> dict[str, _Held]:
        return default_bound(self._tree)  # walked for only when a `self.` chain needs it

    def resolve(self, expr: ast.expr, scopes: Scopes) -> Ref | None:
        """`self.NAME.rest` where NAME holds an upstream class or an instance of one;
        `self.NAME` itself only where it is read and holds the class (setting it is the
        downstream's own business, and an instance alone is no use of its class)."""
        found = self._found(expr)
        written = not isinstance(getattr(expr, "ctx", None), ast.Load)
        if found is None or (found[0].instance and (not found[1] or written)):
            return None
        ref = resolve(found[0].expr, scopes)
        for name in found[1]:
            ref = ref.child(name) if ref else None
        return ref

    @functools.cached_property
    def _called(self) -> set[int]:
        """The ids of the expressions the file calls: `self.lora_config.method(...)` reads no
        attribute (the visit walks these same nodes)."""
        return {id(node.func) for node in ast.walk(self._tree) if isinstance(node, ast.Call)}

    def role(self, expr: ast.expr) -> Role:
        """ATTRIBUTE where `expr` reads (not calls) an attribute of an instance `self.NAME`
        holds, else ACCESS."""
        found = self._found(expr)
        read = found is not None and found[0].instance and bool(found[1])
        return Role.ATTRIBUTE if read and id(expr) not in self._called else Role.ACCESS

    def _found(self, expr: ast.expr) -> tuple[_Held, list[str]] | None:
        """What `self.NAME` holds in the chain `expr` and the names read past it."""
        rest: list[str] = []
        while isinstance(expr, ast.Attribute):
            owner = expr.value
            if (
                isinstance(owner, ast.Name)
                and owner.id == "self"
                and isinstance(expr.ctx, ast.Load)
                and expr.attr in self._held
            ):
                return self._held[expr.attr], rest
            rest.insert(0, expr.attr)
            expr = owner
        return None
