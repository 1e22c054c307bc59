"""Attributes the downstream's objects hold an upstream class in: `def __init__(self,
lora_model_cls=LoRAModel): self._lora_model_cls = lora_model_cls` makes
`self._lora_model_cls.from_local_checkpoint(...)` a call of LoRAModel's, in any method.

Read from the whole file before the visit, since the methods using an attribute often come
before the function that binds it (and the binding function may be a module-level def later
installed as `__init__`). An attribute bound from two different defaults binds nothing.
"""

from __future__ import annotations

import ast
import functools

from canary.scan.imports import Ref, Scopes, resolve
from canary.scan.source_helpers import own_statements


def _defaults(args: ast.arguments) -> dict[str, ast.expr]:
    positional = [*args.posonlyargs, *args.args]
    with_default = positional[len(positional) - len(args.defaults) :]
    found = {a.arg: d for a, d in zip(with_default, args.defaults, strict=True)}
    kw_only = zip(args.kwonlyargs, args.kw_defaults, strict=True)
    return found | {a.arg: d for a, d in kw_only if d is not None}


def default_bound(tree: ast.Module) -> dict[str, ast.expr]:
    """Attribute name -> the default expression of the parameter `self.NAME` is set from."""
    found: dict[str, ast.expr | None] = {}
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
            same = seen is not None and ast.dump(seen) == ast.dump(default)
            found[target.attr] = default if same else None
    return {name: expr for name, expr in found.items() if expr is not None}


class HeldBySelf:
    """Resolves `self.NAME...` through the attributes of one file set from upstream defaults."""

    def __init__(self, tree: ast.Module) -> None:
        self._tree = tree

    @functools.cached_property
    def _held(self) -> dict[str, ast.expr]:
        return default_bound(self._tree)  # walked for only when a `self.` chain needs it

    def resolve(self, expr: ast.expr, scopes: Scopes) -> Ref | None:
        """`self.NAME.rest` where NAME holds an upstream class; `self.NAME` itself only where
        it is read (setting it is the downstream's own business)."""
        rest: list[str] = []
        while isinstance(expr, ast.Attribute):
            owner = expr.value
            if (
                isinstance(owner, ast.Name)
                and owner.id == "self"
                and isinstance(expr.ctx, ast.Load)
                and expr.attr in self._held
            ):
                ref = resolve(self._held[expr.attr], scopes)
                for name in rest:
                    ref = ref.child(name) if ref else None
                return ref
            rest.insert(0, expr.attr)
            expr = owner
        return None
