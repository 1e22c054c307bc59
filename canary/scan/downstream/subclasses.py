"""A downstream class derived from an upstream class, and what its body relies on there.

`class MyTrainer(Trainer)` is a contract on `Trainer` beyond its existence (issue 45 item 1):

- each method it overrides must still be one of the base's, or upstream no longer calls it
  and the override is dead code; and upstream calls it as the base declares it, so the
  override's parameters (names and kinds, in order) are the signature it was written against;
- `self.m(...)` and `super().m(...)` call a method of the base (one the class does not define),
  which must take the keywords the call passes;
- `self.x` read but never set by the class (not in any of its methods, nor at class level)
  is an attribute the base binds (a field of the base's arguments object, ...).

A replacement installed over an upstream method (`Cls.forward = new_forward`) or function
relies on the same: upstream calls it as it declares what it replaces, and its body reads
`self.x` and calls `self.m(...)` on the class (replacement_uses).

Each is recorded on the base class the code names (its MRO decides, as Python's does); which
of them upstream really has is the proposing phase's to tell on the releases read: a method
or attribute no release read has is the client's own, and proposes nothing. Reads and calls
on `self` are followed only in a class whose bases are all upstream classes (or `object`): a
base of the client's own may be what binds them. Dunder methods are left alone (every class
has them), and so are nested classes and functions that rebind `self`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from canary.scan.downstream.findings import Role
from canary.scan.downstream.imports import Ref
from canary.scan.downstream.own_types import NOTHING

#: decorators after which the first parameter is no instance
_NOT_BOUND = frozenset({"staticmethod", "classmethod"})


@dataclass(frozen=True)
class BaseUse:
    """One use of the upstream base: `role` on `ref` (the base's dotted path + the member),
    at `node`, with `items`: an override's parameters as `kind:name`, or the keywords a call
    of the base's method passes."""

    role: Role
    ref: Ref
    node: ast.AST
    items: tuple[str, ...] = ()


def binds(node: ast.ClassDef) -> set[str]:
    """The names a class binds itself: its methods, class-level names, `self.x` it sets."""
    methods = _methods(node)
    own = {fn.name for fn in methods} | _class_level(node)
    return own | {name for fn in methods for name in _set_on_self(fn)}


def base_uses(
    node: ast.ClassDef,
    bases: list[Ref | None],
    inherited: frozenset[str] = frozenset(),
    alone: bool = True,
) -> list[BaseUse]:
    """The uses of the upstream base of `node` its body makes; `bases` are what each of the
    class's bases resolves to (None: not an upstream object), through the client's own
    classes too (own_types.py): `inherited` are the names those bind, and `alone` says
    whether every other base on the way binds nothing. The first upstream base is the one
    named (a second one is rare, and its members are reached through the MRO)."""
    upstream = [ref for ref in bases if ref is not None]
    if not upstream:
        return []
    base = upstream[0]
    methods = _methods(node)
    found = [
        BaseUse(Role.OVERRIDE, base.child(fn.name), fn, _parameters(fn.args))
        for fn in methods
        if not _dunder(fn.name)
    ]
    others = [b for b, ref in zip(node.bases, bases, strict=True) if ref is None]
    alone = alone and all(ast.unparse(b).split("[")[0].split(".")[-1] in NOTHING for b in others)
    assigned = binds(node) | inherited
    for fn in methods:
        if _NOT_BOUND & {ast.unparse(d) for d in fn.decorator_list} or not fn.args.args:
            continue
        this = fn.args.args[0].arg
        for call, name in _super_calls(fn):
            found.append(BaseUse(Role.BASE_CALL, base.child(name), call, _keywords(call)))
        if alone:
            found += _on_self(fn, this, base, assigned)
    return found


def replacement_uses(target: Ref, variants: Sequence[ast.AST], node: ast.AST) -> list[BaseUse]:
    """The uses a replacement installed as `target` (`Cls.forward = new_forward`, `mod.f =
    g`) makes of what it replaces (issue 45 item 2), given the functions it may be: its
    parameters (kind:name, when every variant has the same), and, replacing a method, the
    `self.x` it reads but never sets and the `self.m(...)` it calls, on the class."""
    defs = [v for v in variants if isinstance(v, ast.FunctionDef | ast.AsyncFunctionDef)]
    if not defs or len(defs) != len(variants):
        return []
    found: list[BaseUse] = []
    shapes = {_parameters(fn.args) for fn in defs}
    if len(shapes) == 1:
        found.append(BaseUse(Role.REPLACEMENT, target, node, shapes.pop()))
    owner = Ref(target.parts[:-1], target.known)
    for fn in defs:
        if not fn.args.args or fn.args.args[0].arg != "self" or len(target.parts) < 3:
            continue  # no method: its first parameter is no instance of the class
        found += _on_self(fn, "self", owner, _set_on_self(fn))
    return found


def written_method(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Any]:
    """What a def taking `self` relies on as a replacement of a method, kept for a module of
    the package that installs it (own_types.py): its parameters, and what it reads (an
    attribute) or calls (a method, with its keywords) on `self` without setting it."""
    uses = _on_self(fn, "self", Ref(("",), 0), _set_on_self(fn))
    on_self = {(u.role.value, u.ref.parts[-1], u.items) for u in uses}
    return [list(_parameters(fn.args)), [[r, n, list(i)] for r, n, i in sorted(on_self)]]


def installed_uses(target: Ref, written: list[Any], node: ast.AST) -> list[BaseUse]:
    """The uses a replacement installed as `target` at `node` makes of what it replaces when
    it is defined in another module of the package (`written`, written_method's)."""
    params, on_self = written
    found = [BaseUse(Role.REPLACEMENT, target, node, tuple(params))]
    if len(target.parts) >= 3:  # a method: its self is an instance of the class
        owner = Ref(target.parts[:-1], target.known)
        found += [BaseUse(Role(r), owner.child(n), node, tuple(i)) for r, n, i in on_self]
    return found


def _on_self(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, this: str, owner: Ref, assigned: set[str]
) -> list[BaseUse]:
    """What `fn` reads (an attribute) and calls (a method) on `this` of `owner`, but for the
    names in `assigned` (the client's own) and dunders."""
    found = []
    for read, name, called in _self_reads(fn, this):
        if name in assigned or _dunder(name):
            continue
        if called is None:
            found.append(BaseUse(Role.BASE_ATTRIBUTE, owner.child(name), read))
        else:
            found.append(BaseUse(Role.BASE_CALL, owner.child(name), called, _keywords(called)))
    return found


def _keywords(call: ast.Call) -> tuple[str, ...]:
    """The keywords a call passes by name; none when it spreads a dict (`**kwargs`), which
    may pass anything."""
    if any(k.arg is None for k in call.keywords):
        return ()
    return tuple(dict.fromkeys(k.arg for k in call.keywords if k.arg))


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _methods(node: ast.ClassDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The defs of the class body (the last of a name wins, as in Python: one each)."""
    defs = {
        item.name: item
        for item in node.body
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    return list(defs.values())


def _class_level(node: ast.ClassDef) -> set[str]:
    """Names the class body binds besides its defs: assignments, annotations, nested classes."""
    found: set[str] = set()
    for item in node.body:
        targets: list[ast.expr] = []
        if isinstance(item, ast.Assign):
            targets = item.targets
        elif isinstance(item, ast.AnnAssign | ast.AugAssign):
            targets = [item.target]
        elif isinstance(item, ast.ClassDef):
            found.add(item.name)
        for target in targets:
            found |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return found


def _parameters(args: ast.arguments) -> tuple[str, ...]:
    """The override's parameters as `kind:name`, in order (proposing.propose compares them
    with upstream's)."""
    kinds = [
        *(("posonly", a) for a in args.posonlyargs),
        *(("normal", a) for a in args.args),
        *((("vararg", args.vararg),) if args.vararg else ()),
        *(("kwonly", a) for a in args.kwonlyargs),
        *((("kwarg", args.kwarg),) if args.kwarg else ()),
    ]
    return tuple(f"{kind}:{arg.arg}" for kind, arg in kinds)


def _own_body(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a method's body, not those of nested classes (another `self`) nor of
    nested defs and lambdas that take a parameter of the same name."""
    this = fn.args.args[0].arg if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) else ""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ClassDef):
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            every = (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
            if any(a.arg == this for a in every):
                continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _set_on_self(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names a method binds on its instance: `self.x = ...`, `self.x: T = ...`, `self.x +=`,
    `for self.x in`, `setattr(self, "x", ...)`."""
    if not fn.args.args:
        return set()
    this = fn.args.args[0].arg
    found = set()
    for node in _own_body(fn):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store | ast.Del)
            and isinstance(node.value, ast.Name)
            and node.value.id == this
        ):
            found.add(node.attr)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == this
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            found.add(node.args[1].value)
    return found


def _super_calls(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[ast.Call, str]]:
    """`super().m(...)` (and `super(Cls, self).m(...)`) in the method: m of a base."""
    for node in _own_body(fn):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Call)
            and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "super"
            and not _dunder(node.func.attr)
        ):
            yield node, node.func.attr


def _self_reads(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, this: str
) -> Iterator[tuple[ast.AST, str, ast.Call | None]]:
    """`self.x` loaded in the method: (node, x, the call of it made right there, if any)."""
    calls = {id(node.func): node for node in _own_body(fn) if isinstance(node, ast.Call)}
    for node in _own_body(fn):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id == this
        ):
            yield node, node.attr, calls.get(id(node))
