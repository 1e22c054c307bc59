"""The attributes a class binds, for `attributes:` checks: what a patch reads or writes as
`self.NAME` or `config.NAME` must be bound by the class or a base, not merely mentioned.

A class binds NAME by a class-level assignment or annotation, a dataclass field, a property,
`__slots__`, or `self.NAME = ...` / `self.NAME: T = ...` in one of its methods. Class-level
bindings come from the index; the methods' bodies (which the index does not keep) are parsed
from the class's source when a check asks, once per class, and only those whose text holds an
assignment target on the method's receiver (once per text: in another release, where the
method stands on other lines, its targets' lines are moved).
"""

from __future__ import annotations

import ast
import functools
import re
from collections import deque
from dataclasses import dataclass
from typing import Any

from canary.analysis.bases import ClassRef, Hierarchy, Unresolved
from canary.analysis.generated import generator_of
from canary.analysis.model import ClassInfo, FunctionInfo, ModuleInfo
from canary.analysis.reads import function_tree
from canary.cache.memo import Memo

#: Decorators that make a method a property; the setter forms make it assignable.
_PROPERTY = ("property", "cached_property", "functools.cached_property")
_ASSIGNABLE_PROPERTY = ("cached_property", "functools.cached_property")
_ACCESSORS = (".setter", ".getter", ".deleter")
#: Between tokens: spaces, newlines, a backslash continuation, a comment.
_GAP = r"(?:[\s\\]|#[^\n]*)*"
#: what a method's body assigns on its receiver (lines counted from the method's first), by its
#: text, up to this many characters of text
_ASSIGNED: Memo[tuple[Any, ...], tuple[tuple[str, int], ...]] = Memo(
    2_000_000, lambda key, _: len(key[0])
)


@dataclass(frozen=True)
class Bound:
    """How one class binds one attribute."""

    how: str  # "class attribute (line 5)", "a property without a setter", ...
    owner: ClassRef
    assignable: bool = True


@dataclass(frozen=True)
class Attributes:
    """Every attribute bound along a class's MRO (the first class that binds one decides), and
    the bases that could not be read."""

    bound: dict[str, Bound]
    unresolved: tuple[Unresolved, ...]


def attributes(hierarchy: Hierarchy, ref: ClassRef, own: bool = False) -> Attributes:
    order, unresolved = hierarchy.mro(ref)
    bound: dict[str, Bound] = {}
    for owner in order[:1] if own else order:
        dataclass_like = generator_of(hierarchy, owner) is not None
        for cls in owner.variants:
            for name, bound_here in _bound_by(owner, cls, dataclass_like).items():
                bound.setdefault(name, bound_here)
    return Attributes(bound, () if own else tuple(unresolved))


def _bound_by(ref: ClassRef, cls: ClassInfo, dataclass_like: bool) -> dict[str, Bound]:
    found: dict[str, Bound] = {}
    for name, functions in cls.methods.items():
        kind = _property(functions[-1])
        if kind is not None:
            found[name] = Bound(kind, ref, kind != "a property without a setter")
    for field in cls.fields:
        if field.kind in ("initvar", "kw_only"):
            continue
        how = "a dataclass field" if dataclass_like and field.kind == "field" else "annotated"
        found.setdefault(field.name, Bound(f"{how} in the class body (line {field.line})", ref))
    for name, line in cls.assigned.items():
        found.setdefault(name, Bound(f"class attribute (line {line})", ref))
    for name in cls.slots:
        found.setdefault(name, Bound("in __slots__", ref))
    for name, (method, line) in _instance_assignments(ref.module, cls).items():
        found.setdefault(name, Bound(f"self.{name} set in {method} (line {line})", ref))
    return found


def _property(fn: FunctionInfo) -> str | None:
    decorators = fn.decorators
    if any(d.endswith(_ACCESSORS) and d.startswith(f"{fn.name}.") for d in decorators):
        return "a property with a setter"
    if any(d in _ASSIGNABLE_PROPERTY for d in decorators):
        return "a cached_property"
    if any(d in _PROPERTY for d in decorators):
        return "a property without a setter"
    return None


def _instance_assignments(module: ModuleInfo, cls: ClassInfo) -> dict[str, tuple[str, int]]:
    """name -> (method, line) of the first `self.name = ...` in each method's body."""
    found: dict[str, tuple[str, int]] = {}
    for name, functions in cls.methods.items():
        for fn in functions:
            if not fn.params or "staticmethod" in fn.decorators:
                continue
            for target, line in _assigned(module, fn, fn.params[0].name):
                found.setdefault(target, (name, line))
    return found


def _assigned(module: ModuleInfo, fn: FunctionInfo, receiver: str) -> list[tuple[str, int]]:
    """Each `receiver.NAME` the method's body assigns, with its line, in `ast.walk`'s order;
    found by the method's text (the same in most releases of its class) once it parses alone."""
    source = module.segment(fn.span)
    above = fn.span.start - 1
    key = (source, receiver)
    known = _ASSIGNED.get(key)
    if known is None:
        if not _may_assign(receiver).search(source):
            known = ()  # no `receiver.NAME` as a target: its body need not be parsed
        else:
            tree, offset = function_tree(module, fn, source)
            known = tuple(
                (target.attr, offset - above + target.lineno)
                for node in _same_receiver(tree, receiver)
                for target in _targets(node)
                if isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == receiver
            )
            if offset != above:  # read from the module's whole parse: not the text's alone
                return [(target, above + line) for target, line in known]
        _ASSIGNED.put(key, known)
    return [(target, above + line) for target, line in known]


@functools.lru_cache(maxsize=64)
def _may_assign(receiver: str) -> re.Pattern[str]:
    """Text every `receiver.NAME` assignment target holds (in brackets or parentheses, in a
    tuple, annotated): the receiver, maybe closing parentheses, `.NAME`, maybe closing brackets,
    then `=`, `:` or `,`. A body without it binds nothing, and most bodies only read."""
    return re.compile(
        rf"\b{re.escape(receiver)}(?:[\s\\)]|#[^\n]*)*\.{_GAP}\w+(?:[\s\\)\]]|#[^\n]*)*[=:,]"
    )


def _same_receiver(tree: ast.AST, receiver: str) -> list[ast.AST]:
    """The method's nodes where `receiver` is still its receiver, in `ast.walk`'s order: not
    inside a nested class (its methods' `self` is another object) nor a nested function or
    lambda that takes a parameter of that name."""
    found: list[ast.AST] = []
    root = tree.body[0] if isinstance(tree, ast.Module) and tree.body else tree
    pending: deque[ast.AST] = deque([root])
    while pending:
        node = pending.popleft()
        found.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef) or (
                isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                and receiver in _parameter_names(child.args)
            ):
                continue
            pending.append(child)
    return found


def _parameter_names(args: ast.arguments) -> set[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {a.arg for a in every if a is not None}


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return [t for target in node.targets for t in _unpacked(target)]
    if isinstance(node, ast.AnnAssign):  # not `+=`: that needs the attribute bound already
        return [node.target]
    return []


def _unpacked(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, ast.Tuple | ast.List):
        return [t for element in target.elts for t in _unpacked(element)]
    return [target.value] if isinstance(target, ast.Starred) else [target]
