"""Split a dotted upstream path into a module and the subject inside it, by naming convention.

Nothing is imported, so whether `a.b.c` is a module, a function or a class is a guess:
a CapWords part is a class and a lowercase part after it a method; an UPPER_CASE part is a
constant; lowercase parts before the last are modules; a prefix seen in any `import` or
`from ... import` statement is a module for sure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from canary.scan.downstream.imports import Ref
from canary.scan.downstream.rewriters import ANY_CLASS
from canary.scan.upstream.view import UpstreamView

# Attributes every function, class or module has at run time: reading them says nothing
# about the upstream contract, so a path stops before them.
RUNTIME_ATTRIBUTES = frozenset(
    {
        "__annotations__",
        "__bases__",
        "__class__",
        "__code__",
        "__defaults__",
        "__dict__",
        "__doc__",
        "__file__",
        "__func__",
        "__globals__",
        "__kwdefaults__",
        "__loader__",
        "__module__",
        "__mro__",
        "__name__",
        "__package__",
        "__path__",
        "__qualname__",
        "__self__",
        "__spec__",
        "__wrapped__",
    }
)


@dataclass(frozen=True)
class Placement:
    """`path` is () for the module itself, (name,) for a module-level name, (Class, attr).

    Read from a release, `kind` says what path[0] is ("module", "class", "function", "value");
    `absent` that no release read binds it; `member` an attribute of the class that is no
    method there (`attribute`: a class attribute of it or a base); `inherited` the dotted path
    of a base another package defines, which may bring it. None/False/"" when only naming
    conventions placed it.
    """

    module: str
    path: tuple[str, ...]
    kind: str | None = None
    absent: bool = False
    member: str = ""
    attribute: bool = False
    inherited: str = ""


def is_class_name(name: str) -> bool:
    """CapWords (optionally private): `Trainer`, `_BaseTrainer`, `GRPOConfig`; not CONSTANTS."""
    bare = name.lstrip("_")
    return bool(bare) and bare[0].isupper() and any(c.islower() for c in bare)


def _meaningful(parts: tuple[str, ...], any_class: bool = False) -> tuple[str, ...]:
    """The parts up to the first run-time attribute (and "any class of the module", unless
    the releases read can tell which class that is)."""
    for i, part in enumerate(parts):
        if part in RUNTIME_ATTRIBUTES or (part == ANY_CLASS and not any_class):
            return parts[:i]
    return parts


def place(ref: Ref, views: Sequence[UpstreamView], call: bool = False) -> Placement | None:
    """Where `ref` points on the releases read (newest first); None when none could be read.

    A call of a class is a use of its `__init__`, found (like any method) in the class of its
    hierarchy that defines it, or generated for the class called (a dataclass, whose
    `__init__` takes its fields and its bases'); none there on the newest release read leaves
    the call unplaced, even if an older one has.
    """
    parts = _meaningful(ref.parts, any_class=True)
    owned = _any_class(parts, views)
    if owned is not None:
        return owned
    fallback: Placement | None = None
    foreign: str | None = None  # a base of another package, which may define the member
    for view in views:
        found = view.resolve(parts)
        if found is None:
            continue
        definition, rest = found
        if definition.kind == "module":
            if not rest:
                return Placement(definition.module, (), "module")
            fallback = fallback or Placement(definition.module, rest[:1], absent=True)
            continue
        member = rest[0] if rest else "__init__" if call and definition.kind == "class" else ""
        if not rest and member and view.generated_init(definition):
            # a dataclass: the `__init__` generated for the class the code calls
            return Placement(definition.module, (definition.name, member), "class")
        if definition.kind == "class" and member:
            owner = view.method_owner(definition, member)
            if owner is not None:
                return Placement(owner.module, (owner.name, member), "class")
            path = (definition.name,)
            if rest and view.attribute_owner(definition, member) is not None:
                return Placement(definition.module, path, "class", member=member, attribute=True)
            foreign = foreign or (view.foreign_base(definition) if rest else None)
            if not rest:  # a call: this release builds the object some other way
                return Placement(definition.module, (definition.name,), "class", member=member)
            if fallback is None or fallback.absent:
                fallback = Placement(definition.module, (definition.name,), "class", member=member)
            continue
        return Placement(definition.module, (definition.name,), definition.kind)
    if fallback is not None and fallback.member and foreign:  # no release read defines it
        return dataclasses.replace(fallback, inherited=foreign)
    return fallback


def _any_class(parts: tuple[str, ...], views: Sequence[UpstreamView]) -> Placement | None:
    """A method of "the class of this module that defines it": on the class that defines it
    on the newest release read that has one, else on a release between them (a rewriter of a
    method gone from the newest, or that lived only mid-range, is the stale patch a check
    exists to show); None when no release has it."""
    if ANY_CLASS not in parts[:-1] or not views:
        return None
    at = parts.index(ANY_CLASS)
    module, method = ".".join(parts[:at]), parts[at + 1]
    owners = (view.class_with(module, method) for view in views)
    owner = next((o for o in owners if o is not None), None) or views[0].elsewhere(module, method)
    return Placement(module, (owner.name, method), "class") if owner else None


def locate(ref: Ref, modules: Collection[str]) -> Placement:
    """Where `ref` points by naming conventions alone: the module and the subject path in it."""
    parts = _meaningful(ref.parts)
    known = ref.known
    for end in range(len(parts), known, -1):
        if ".".join(parts[:end]) in modules:
            known = end
            break
    known = min(known, len(parts))
    for i in range(max(known, 1), len(parts)):
        if is_class_name(parts[i]):
            member = parts[i + 1 : i + 2]
            if member and member[0].lower() != member[0]:  # a constant or enum member, no method
                member = ()
            return Placement(".".join(parts[:i]), (parts[i], *member))
        if parts[i].lower() != parts[i]:  # a CONSTANT: modules are lowercase by convention
            return Placement(".".join(parts[:i]), (parts[i],))
    if known == len(parts):
        return Placement(".".join(parts), ())
    return Placement(".".join(parts[:-1]), parts[-1:])
