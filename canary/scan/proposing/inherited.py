"""What a subclass's uses of its upstream base propose (downstream/subclasses.py), on the
releases read.

A member is proposed on the class the code names (`class: Trainer`, `methods: [m]`), never on
the base that happens to define it today: the engine follows the MRO, so a method that left
with a mixin the class no longer derives from fails there. Only what some release read binds
on that class is proposed: a method or attribute none of them has is the client's own (a
helper of the subclass, an attribute a mixin sets), and a check of it would be red on every
release; one a release lacks where the class has a base outside the upstream
(`torch.nn.Module`) may come from that base, and is not proposed either. With no release
read, nothing is proposed: names alone cannot tell the two apart.

An override whose parameters (names and kinds, in order, none `*args` or `**kwargs`) are
those of upstream's method on a release read also proposes that release's `signature`
(defaults as upstream writes them, annotations left out): upstream calls the method as it
declares it, so a parameter added, removed, renamed or reordered there breaks the override (a
hook upstream began passing one more argument to raised `TypeError`), which `params` or
`methods` never see; so does a replacement of an upstream method or function with its
parameters. A call of the base's method passing keywords proposes `accepts` of them, unless
the method takes `**kwargs`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from canary.analysis.model import FunctionInfo, Param
from canary.analysis.parameters import render
from canary.scan.downstream.call_shapes import shape_text
from canary.scan.downstream.findings import Role, Use
from canary.scan.proposing.pass_through import takes_anything
from canary.scan.proposing.subjects import Placement
from canary.scan.upstream.view import Definition, UpstreamView

#: the roles of a subclass's uses of its base, and of the uses of an instance the client
#: holds (downstream/instances.py): each a use of a member of the class the code names
BASE_ROLES = (
    Role.OVERRIDE,
    Role.REPLACEMENT,
    Role.BASE_CALL,
    Role.BASE_ATTRIBUTE,
    Role.INSTANCE_CALL,
    Role.INSTANCE_READ,
)


@dataclasses.dataclass(frozen=True)
class Stated:
    """One fact to check: `key` "class" or "function", `name` the subject in `module`."""

    module: str
    key: str
    name: str
    assertion: str
    values: tuple[str, ...]


def shaped_apart(findings: Iterable[Use]) -> set[tuple[str, ...]]:
    """The methods and functions the package overrides or replaces with functions of several
    parameter lists (unsloth's DistilBertModel.forward, one for transformers 4, one for 5,
    installed by two functions the client picks between): it handles several signatures, so
    none of them is a contract."""
    shapes: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for finding in findings:
        if finding.role in (Role.OVERRIDE, Role.REPLACEMENT):
            shapes.setdefault(finding.ref.parts, set()).add(finding.items)
    return {parts for parts, found in shapes.items() if len(found) > 1}


def base_member(
    finding: Use, views: Sequence[UpstreamView], one_shape: bool = True
) -> list[Stated]:
    """The checks a subclass's use of its base proposes; none when no release read binds it.
    Without `one_shape` (shaped_apart), an override or replacement states no signature."""
    parts, name = finding.ref.parts[:-1], finding.ref.parts[-1]
    if finding.role is Role.REPLACEMENT and not any(_named_class(v, parts) for v in views):
        return _function_signature(finding, views) if one_shape else []
    for view in views:  # newest first: the class where users find it today
        named = _named_class(view, parts)
        if named is None:
            continue
        found = [_member(other, parts, name) for other in views]
        kind = next((member for member in found if member), False)
        if kind is False or (None in found and not _named_anyway(finding, kind)):
            return []  # the client's own, or maybe bound by a base outside the upstream
        assertion = "methods" if isinstance(kind, FunctionInfo) else "attributes"
        stated = [Stated(named.module, "class", named.name, assertion, (name,))]
        if finding.role is Role.REPLACEMENT:  # its existence is the patch's check
            return _signature(named, name, finding.items, found) if one_shape else []
        if finding.role is Role.OVERRIDE and one_shape:
            stated += _signature(named, name, finding.items, found)
        elif finding.role is Role.BASE_CALL and finding.items and _named_only(found):
            method = f"{named.name}.{name}"
            stated.append(Stated(named.module, "function", method, "accepts", finding.items))
        elif finding.role is Role.INSTANCE_CALL and isinstance(kind, FunctionInfo):
            stated += _instance_call(named, name, finding.items, found)
        return stated
    return []


def _named_anyway(finding: Use, kind: FunctionInfo | bool | None) -> bool:
    """Whether a member a release read binds is stated although another release read may
    bind it only through a base outside the upstream (`torch.nn.Module`, not read): an
    attribute read on an object the client holds (`torch.nn.Module` binds its own few; a
    `Cache`'s `key_cache` is none of them), and a method the code reads on the upstream class
    itself (`PreTrainedModel.generate`, which left with `GenerationMixin`)."""
    if finding.role is Role.INSTANCE_READ:
        return kind is True
    return finding.role is Role.ACCESS and isinstance(kind, FunctionInfo)


def _instance_call(
    named: Definition, name: str, items: tuple[str, ...], found: list[FunctionInfo | bool | None]
) -> list[Stated]:
    """What `obj.m(...)` on an instance states beyond the method: the call's shape (`call`,
    issue 45 item 5) where it spreads nothing into the call, as a module-level function's
    call does, else `accepts` of the keywords it names; neither where the method takes
    anything (`*args, **kwargs`), or `accepts` where it takes any keyword."""
    methods = [member for member in found if isinstance(member, FunctionInfo)]
    if not items or all(takes_anything(fn) for fn in methods):
        return []
    method = f"{named.name}.{name}"
    if items[0]:
        return [Stated(named.module, "function", method, "call", (shape_text(items),))]
    if _named_only(found):
        return [Stated(named.module, "function", method, "accepts", items[1:])]
    return []


def inherited_method(finding: Use, views: Sequence[UpstreamView]) -> bool:
    """Whether `Cls.m` read on an upstream class (`PreTrainedModel.generate`) is a method the
    class inherits from another class on the newest release read that has it: the check is
    then on `Cls` (`methods: [m]`, its MRO walked), not on the base defining it today, which
    stays green when that base leaves `Cls`'s bases (issue 45 item 3)."""
    if finding.role is not Role.ACCESS or len(finding.ref.parts) < 3:
        return False
    parts, name = finding.ref.parts[:-1], finding.ref.parts[-1]
    for view in views:
        named = _named_class(view, parts)
        owner = view.method_owner(named, name) if named is not None else None
        if named is not None and owner is not None:
            return owner != named
    return False


def binds(target: Placement, views: Sequence[UpstreamView]) -> bool:
    """Whether a release read binds `target.member` on its class as an attribute (no method)."""
    cls = Definition(target.module, target.path[0], "class")
    return any(view.member(cls, target.member) is True for view in views)


def _function_signature(finding: Use, views: Sequence[UpstreamView]) -> list[Stated]:
    """A module-level function's signature, for a replacement with its parameters."""
    for view in views:
        found = view.resolve(finding.ref.parts)
        if found is None or found[1] or found[0].kind != "function":
            continue
        info = view.module(found[0].module)
        functions = info.functions.get(found[0].name, []) if info else []
        if functions and _same_parameters(functions[-1], finding.items):
            return [_stated_signature(found[0].module, found[0].name, functions[-1])]
    return []


def _named_only(found: list[FunctionInfo | bool | None]) -> bool:
    """Whether the method takes keywords by name alone on every release read that has it: one
    taking `**kwargs` accepts any keyword, so `accepts` could never fail there."""
    methods = [member for member in found if isinstance(member, FunctionInfo)]
    return bool(methods) and not any(p.kind == "kwarg" for fn in methods for p in fn.params)


def _member(view: UpstreamView, parts: tuple[str, ...], name: str) -> FunctionInfo | bool | None:
    named = _named_class(view, parts)
    return view.member(named, name) if named is not None else False


def _named_class(view: UpstreamView, parts: tuple[str, ...]) -> Definition | None:
    found = view.resolve(parts)
    if found is None or found[1] or found[0].kind != "class":
        return None
    return found[0]


def _signature(
    named: Definition, name: str, written: tuple[str, ...], found: list[FunctionInfo | bool | None]
) -> list[Stated]:
    """upstream's signature of the method, on the newest release read where the override's
    parameters are upstream's (names and kinds, in order)."""
    for member in found:
        if isinstance(member, FunctionInfo) and _same_parameters(member, written):
            return [_stated_signature(named.module, f"{named.name}.{name}", member)]
    return []


def _same_parameters(function: FunctionInfo, written: tuple[str, ...]) -> bool:
    """Whether `written` (kind:name) are the function's parameters, and explicit: a function
    taking `*args` or `**kwargs` passes on whatever upstream adds, so no signature is its."""
    spread = any(p.startswith(("vararg:", "kwarg:")) for p in written)
    return not spread and tuple(f"{p.kind}:{p.name}" for p in function.params) == written


def _stated_signature(module: str, name: str, function: FunctionInfo) -> Stated:
    """`signature:` as upstream writes it (defaults as source text), annotations left out."""
    bare = tuple(Param(p.name, p.kind, p.default) for p in function.params)
    return Stated(module, "function", name, "signature", (render(bare),))
