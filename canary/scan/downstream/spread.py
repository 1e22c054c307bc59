"""Keywords a dict gathers before a call spreads it (issue 25 item 6): after `kwargs =
dict(in_features=0, bias=b)` and `kwargs["device"] = d`, `FP8Linear(**kwargs)` passes
in_features, bias and device, each key under the guards in force where it was put in, so a
key added under `if Version(...) < Version("5.0.0"):` is passed only on those releases.

The visitor binds the dict's name to `Spread`; `call_uses` says what a call of an upstream
callable passes, with the shapes `call_shapes` gives when nothing unknown is spread into it.
A key put in on one arm of an `if` that also picks the callee (`load = X.from_tensors;
kwargs["tensors"] = t` / `else: load = X.from_checkpoint`) is passed only to the callee bound
on that arm: `Branches` says which arm each key and each callee was bound on.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from canary.scan.downstream.call_shapes import call_shape
from canary.scan.downstream.findings import Role
from canary.scan.downstream.guards import Guard
from canary.scan.downstream.imports import Scopes
from canary.scan.downstream.node_values import constant

Guards = tuple[Guard, ...]
Arms = tuple[tuple[int, int], ...]  # (id of an `if`, 0 for its body or 1 for its else)


@dataclass(frozen=True)
class Spread:
    """A name bound to a dict of keyword arguments: each key with the guards in force and the
    arms it was put in on; `complete` when every key is known (no `**other`, no key computed)."""

    entries: tuple[tuple[str, Guards, Arms], ...]
    complete: bool = True

    def put(self, name: str, guards: Guards, arms: Arms = ()) -> Spread:
        if (name, guards, arms) in self.entries:
            return self
        return Spread((*self.entries, (name, guards, arms)), self.complete)

    def drop(self, name: str) -> Spread:
        """`del kwargs["x"]`, `kwargs.pop("x")`: x is not known to be passed."""
        return Spread(tuple(e for e in self.entries if e[0] != name), self.complete)

    def union(self, other: Spread) -> Spread:
        """After alternative branches: what either put in, each under its own guards."""
        merged = self
        for entry in other.entries:
            merged = merged.put(*entry)
        return Spread(merged.entries, self.complete and other.complete)

    def on(self, arms: Arms) -> Spread:
        """The dict as bound on these arms (every key it starts with is put in there)."""
        return Spread(tuple((n, g, arms) for n, g, _ in self.entries), self.complete)

    def unknown(self) -> Spread:
        """After `kwargs.update(other)`: keys nobody here can name may be in it."""
        return Spread(self.entries, False)


def parameter(args: ast.arguments | None) -> tuple[str, Spread] | None:
    """A function's `**kwargs`, a dict of keywords whose keys its callers choose: what the body
    puts in (`kwargs["worker_use_ray"] = True` before `vllm.LLM(*args, **kwargs)`) is passed
    on, beside keys nobody here can name."""
    if args is None or args.kwarg is None:
        return None
    return args.kwarg.arg, Spread((), complete=False)


class Branches:
    """The arms of `if` the visitor is in, and the arms each name was bound a callee on."""

    def __init__(self, lookup: Callable[[str], object | None]) -> None:
        self.path: list[tuple[int, int]] = []
        self._lookup = lookup
        self._bound: dict[tuple[str, int], tuple[object, Arms]] = {}  # value kept: ids stay

    @contextmanager
    def arm(self, node: ast.If, index: int) -> Iterator[None]:
        self.path.append((id(node), index))
        try:
            yield
        finally:
            self.path.pop()

    def bound(self, name: str, value: object | None) -> object | None:
        """What `name = value` binds here: a dict of keywords starts on these arms."""
        arms = tuple(self.path)
        if isinstance(value, Spread):
            return value.on(arms)
        if value is not None and arms:
            self._bound[(name, id(value))] = (value, arms)
        return value

    def of(self, func: ast.expr) -> Arms:
        """The arms a called name was bound on (none: bound before any branch, or not a name)."""
        if not isinstance(func, ast.Name):
            return ()
        value = self._lookup(func.id)
        return self._bound.get((func.id, id(value)), (None, ()))[1]


def _apart(put: Arms, bound: Arms) -> bool:
    """Whether a key put in on `put` never meets a callee bound on `bound`: they took different
    arms of one `if`."""
    taken = dict(bound)
    return any(taken.get(node, arm) != arm for node, arm in put)


def gathered(
    value: ast.expr, guards: Sequence[Guard], lookup: Callable[[str], object | None]
) -> Spread | None:
    """The Spread a dict of keyword arguments starts with: `dict(a=1, b=x)`, `{}`, or a
    literal of string keys none of whose values is a string (a table of texts is no keywords)."""
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "dict"
        and lookup("dict") is None
        and not value.args
    ):
        names = [k.arg for k in value.keywords]
        return Spread(tuple((n, tuple(guards), ()) for n in names if n), None not in names)
    if not isinstance(value, ast.Dict) or any(constant(v) is not None for v in value.values):
        return None
    keys = [constant(k) if k is not None else None for k in value.keys]
    return Spread(tuple((k, tuple(guards), ()) for k in keys if k), None not in keys)


def _keyed(target: ast.expr, lookup: Callable[[str], object | None]) -> tuple[str, str] | None:
    """(dict name, key) of `kwargs["key"]` where kwargs is bound to Spread."""
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
        return None
    key = constant(target.slice)
    bound = lookup(target.value.id)
    return (target.value.id, key) if key and isinstance(bound, Spread) else None


def rekey(node: ast.AST, scopes: Scopes, guards: Sequence[Guard], arms: Arms = ()) -> None:
    """Bind anew the dicts of keywords a statement changes: `kwargs["k"] = v` and
    `kwargs.update(k=v)` put k in (under `guards`, on `arms`); `del kwargs["k"]` and
    `kwargs.pop("k")` take it out; `kwargs.update(other)` may put in any key."""
    lookup = scopes.lookup
    found: list[tuple[str, Spread]] = []
    if isinstance(node, ast.Assign | ast.Delete):
        for target in node.targets:
            keyed = _keyed(target, lookup)
            bound = lookup(keyed[0]) if keyed else None
            if keyed and isinstance(bound, Spread):
                assigned = isinstance(node, ast.Assign)
                put = bound.put(keyed[1], tuple(guards), arms) if assigned else None
                found.append((keyed[0], put or bound.drop(keyed[1])))
    elif isinstance(node, ast.Call) and (called := _dict_method(node, lookup)):
        name, method, bound = called
        key = constant(node.args[0] if node.args else None)
        if method == "pop" and key:
            found.append((name, bound.drop(key)))
        elif method == "update":
            found.append((name, _updated(bound, node, guards, arms, lookup)))
    for name, keywords in found:
        scopes.bind(name, keywords)


def _dict_method(
    call: ast.Call, lookup: Callable[[str], object | None]
) -> tuple[str, str, Spread] | None:
    """(name, method, its Spread) of `kwargs.method(...)` where kwargs is bound to Spread."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    bound = lookup(func.value.id)
    return (func.value.id, func.attr, bound) if isinstance(bound, Spread) else None


def _updated(
    bound: Spread,
    call: ast.Call,
    guards: Sequence[Guard],
    arms: Arms,
    lookup: Callable[[str], object | None],
) -> Spread:
    """The dict after `kwargs.update(...)`: the keys of its keywords and of a dict of known
    keys put in; a dict of unknown keys (`update(config.extra)`) leaves it incomplete."""
    known = [gathered(a, guards, lookup) for a in call.args]
    updated = bound
    for name in [k.arg for k in call.keywords] + [n for s in known if s for n, _, _ in s.entries]:
        updated = updated.put(name, tuple(guards), arms) if name else updated.unknown()
    if any(s is None or not s.complete for s in known):
        updated = updated.unknown()
    return updated


def _extra(added: Guards, now: Sequence[Guard]) -> Guards:
    """The guards a key was put in under beyond those in force at the call."""
    common = 0
    while common < min(len(added), len(now)) and added[common] == now[common]:
        common += 1
    return added[common:]


def call_uses(
    call: ast.Call,
    lookup: Callable[[str], object | None],
    guards: Sequence[Guard],
    callee_arms: Arms = (),
) -> list[tuple[Guards, Role, tuple[str, ...]]]:
    """What a call passes an upstream callable, as (further guards, role, items) to record:
    its shape (`Role.CALL`) when every keyword is known and nothing is spread with `*`, else
    the keywords known (`Role.KWARGS`); once for what every path passes and once more for each
    set of keys put in under further guards, with those guards. A key put in on another arm
    than the one the callee was bound on (`callee_arms`) is not passed to it."""
    explicit = tuple(dict.fromkeys(k.arg for k in call.keywords if k.arg))
    spreads = [
        lookup(k.value.id) if isinstance(k.value, ast.Name) else None
        for k in call.keywords
        if k.arg is None
    ]
    if not spreads:
        shape = call_shape(call)
        if not explicit:
            return []
        return [((), Role.CALL, shape) if shape else ((), Role.KWARGS, explicit)]
    known = [s for s in spreads if isinstance(s, Spread)]
    complete = len(known) == len(spreads) and all(s.complete for s in known)
    complete = complete and not any(isinstance(a, ast.Starred) for a in call.args)
    groups: dict[Guards, list[str]] = {(): list(explicit)}
    for spread in known:
        for name, added, arms in spread.entries:
            if not _apart(arms, callee_arms):
                groups.setdefault(_extra(added, guards), []).append(name)
    base = groups.pop(())
    found = []
    for extra, names in [((), base), *((e, base + n) for e, n in groups.items())]:
        unique = tuple(dict.fromkeys(names))
        if not unique:
            continue
        if complete:
            found.append((extra, Role.CALL, (str(len(call.args)), *unique)))
        else:
            found.append((extra, Role.KWARGS, unique))
    return found
