"""Bases and method resolution order, statically and best effort, across an upstream's modules.

A base is resolved by following the module's imports (re-exports and lazy modules included)
to the module that defines it. A base that lives outside the upstream (torch, typing, another
library) or cannot be resolved is named, never guessed: what it might define is unknown.
The order is C3, as Python computes it (griffe's c3linear does the same).
"""

from __future__ import annotations

from dataclasses import dataclass

from canary.analysis.model import ClassInfo, FunctionInfo, ModuleInfo
from canary.analysis.namespace import Found, Namespace

_NOTHING_TO_LOOK_FOR = frozenset(
    ("object", "typing.Generic", "Generic", "typing.Protocol", "Protocol", "abc.ABC", "ABC")
)

#: Inheritance deeper than this is not followed (the bases beyond are named as unread).
MAX_DEPTH = 64
#: Why the bases beyond MAX_DEPTH are unread: said wherever they would count.
DEEP = f"over {MAX_DEPTH} bases deep"

#: Import chains longer than this are given up on (a cycle the seen-set does not catch).
_MAX_HOPS = 24


@dataclass(frozen=True)
class ClassRef:
    """A class defined in the upstream: its module and its definitions (if/else variants)."""

    module: ModuleInfo
    variants: tuple[ClassInfo, ...]

    @property
    def name(self) -> str:
        return self.variants[0].name

    @property
    def qualname(self) -> str:
        return f"{self.module.name}.{self.name}"

    @property
    def key(self) -> tuple[str, str]:
        return self.module.name, self.name

    def methods(self, method: str) -> list[FunctionInfo]:
        return [fn for cls in self.variants for fn in cls.methods.get(method, [])]


@dataclass(frozen=True)
class Unresolved:
    """A base whose definition canary does not read: outside the upstream, or not found."""

    name: str
    why: str  # "outside trl", "not found in trl"

    def __str__(self) -> str:
        return f"{self.name} ({self.why})"


@dataclass(frozen=True)
class Inherited:
    """A method found through the bases: where it is defined, and what could not be read."""

    owner: ClassRef | None
    functions: list[FunctionInfo]
    unresolved: tuple[Unresolved, ...]


class Hierarchy:
    """Resolves bases and orders them; one per version run, like the namespace it uses."""

    def __init__(self, namespace: Namespace):
        self.namespace = namespace
        self._bases: dict[tuple[str, str], tuple[list[ClassRef], list[Unresolved]]] = {}
        self._orders: dict[tuple[str, str], tuple[list[ClassRef], list[Unresolved]]] = {}

    def bases(self, ref: ClassRef) -> tuple[list[ClassRef], list[Unresolved]]:
        if ref.key not in self._bases:
            resolved: list[ClassRef] = []
            unresolved: list[Unresolved] = []
            for expr in ref.variants[0].bases:
                base = self.resolve(ref.module, expr.split("[", 1)[0])
                if isinstance(base, ClassRef):
                    resolved.append(base)
                elif base is not None:
                    unresolved.append(base)
            self._bases[ref.key] = resolved, unresolved
        return self._bases[ref.key]

    def resolve(self, module: ModuleInfo, dotted: str) -> ClassRef | Unresolved | None:
        """The class a base expression names in `module`; None for `object`, `Generic` and
        `ABC`, which define nothing a patch could look for."""
        if dotted in _NOTHING_TO_LOOK_FOR:
            return None
        head, _, rest = dotted.partition(".")
        return self._resolve(module, head, rest, _MAX_HOPS)

    def _resolve(
        self, module: ModuleInfo, head: str, rest: str, hops: int
    ) -> ClassRef | Unresolved:
        upstream = module.name.split(".")[0]
        dotted = f"{head}.{rest}" if rest else head
        if hops <= 0:
            return Unresolved(dotted, "import chain too long")
        if not rest and head in module.classes:
            return ClassRef(module, tuple(module.classes[head]))
        found = self.namespace.find(module, head)
        if isinstance(found, str):
            if not module.bindings.get(head) and not rest:
                return Unresolved(f"builtins.{head}", "outside " + upstream)
            return Unresolved(dotted, f"not resolved in {module.name}")
        if found.module is not module or not found.bindings:
            return self._in_found(found, head, rest, hops, upstream)
        binding = found.bindings[-1]
        if binding.kind != "import" or not binding.origin:
            return Unresolved(dotted, f"{binding.kind}ed in {module.name}, not a class statement")
        return self._origin(binding.origin, rest, hops, upstream)

    def _in_found(
        self, found: Found, head: str, rest: str, hops: int, upstream: str
    ) -> ClassRef | Unresolved:
        if not found.bindings:  # the name is a submodule: the rest is a path inside it
            return self._origin(found.module.name, rest, hops, upstream)
        return self._resolve(found.module, head, rest, hops - 1)

    def _origin(self, origin: str, rest: str, hops: int, upstream: str) -> ClassRef | Unresolved:
        """`origin` is what an import bound: a module, or a module's attribute."""
        full = f"{origin}.{rest}" if rest else origin
        if origin.split(".")[0] != upstream:
            return Unresolved(full, f"outside {upstream}")
        parts = full.split(".")
        for cut in range(len(parts) - 1, 0, -1):  # the longest prefix that is a module
            module = self.namespace.lookup(".".join(parts[:cut]))
            if module is not None:
                return self._resolve(module, parts[cut], ".".join(parts[cut + 1 :]), hops - 1)
        return Unresolved(full, f"not found in {upstream}")

    def mro(self, ref: ClassRef) -> tuple[list[ClassRef], list[Unresolved]]:
        """The class's method resolution order (itself first) over the bases canary could
        read, and the bases it could not."""
        unresolved: list[Unresolved] = []
        order = self._linearize(ref, unresolved, set())
        return order, list(dict.fromkeys(unresolved))

    def _linearize(
        self, ref: ClassRef, unresolved: list[Unresolved], active: set[tuple[str, str]]
    ) -> list[ClassRef]:
        """C3, each class's order computed once (a diamond lattice reaches each class by
        twice as many paths per layer: 16 layers took 13 s without the memo)."""
        known = self._orders.get(ref.key)
        if known is not None:
            unresolved.extend(known[1])
            return known[0]
        if ref.key in active:  # a cycle through re-exports: stop rather than recurse
            return [ref]
        if len(active) >= MAX_DEPTH:
            unresolved.append(Unresolved(ref.qualname, DEEP))
            return [ref]
        active = active | {ref.key}
        bases, outside = self.bases(ref)
        mine = list(outside)
        sequences = [self._linearize(base, mine, active) for base in bases]
        merged = _c3_merge([*sequences, list(bases)])
        if merged is None:  # inconsistent order: Python refuses the class; keep depth-first
            merged = list({r.key: r for seq in sequences for r in seq}.values())
        order = [ref, *merged]
        if not any(u.why == DEEP for u in mine):  # cut short by the path here: not kept
            self._orders[ref.key] = order, mine
        unresolved.extend(mine)
        return order

    def method(self, ref: ClassRef, name: str) -> Inherited:
        """The first class in the MRO after `ref` that defines `name`."""
        order, unresolved = self.mro(ref)
        for owner in order[1:]:
            functions = owner.methods(name)
            if functions:
                return Inherited(owner, functions, tuple(unresolved))
        return Inherited(None, [], tuple(unresolved))

    def all_methods(self, ref: ClassRef) -> set[str]:
        order, _ = self.mro(ref)
        return {m for owner in order for cls in owner.variants for m in cls.methods}


def _c3_merge(sequences: list[list[ClassRef]]) -> list[ClassRef] | None:
    sequences = [list(s) for s in sequences if s]
    result: list[ClassRef] = []
    while sequences:
        for sequence in sequences:
            head = sequence[0]
            if not any(head.key in (r.key for r in s[1:]) for s in sequences):
                break
        else:
            return None
        result.append(head)
        sequences = [[r for r in s if r.key != head.key] for s in sequences]
        sequences = [s for s in sequences if s]
    return result
