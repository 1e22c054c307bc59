"""`globals_bound`: a function's source compiled in another module's namespace finds its names.

A client that copies `inspect.getsource(C.forward)` and compiles it in the module it found C
in (unsloth-zoo does, for peft's LoRA layers) breaks with a NameError when the function starts
reading a global its own module binds and that module does not: peft 0.18.0's
`Linear.forward` reads `VARIANT_KWARG_KEYS`, which peft.tuners.lora.inc (where the client finds
`Linear`) does not import. Only the upstream's own names are required: those the function's
home module defines, or imports from within the upstream. Names it takes from elsewhere
(torch, typing) are the compiling code's to supply, and names it does not bind at all would
fail in the home module too.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

from canary.analysis import ClassInfo, FunctionInfo, ModuleInfo
from canary.analysis.namespace import Namespace
from canary.analysis.reads import global_reads

#: names Python supplies to every module without a binding in its source
_SUPPLIED = frozenset(dir(builtins)) | {
    "__builtins__",
    "__cached__",
    "__doc__",
    "__file__",
    "__loader__",
    "__name__",
    "__package__",
    "__path__",
    "__spec__",
}


@dataclass(frozen=True)
class Home:
    """Where a function is defined: its module, and its class when it is a method."""

    module: ModuleInfo
    cls: ClassInfo | None = None

    def qualname(self, fn: FunctionInfo) -> str:
        return f"{self.cls.name}.{fn.name}" if self.cls is not None else fn.name

    def enclosing(self) -> set[str]:
        """Names the class body binds: a decorator or default there reads these, not globals."""
        if self.cls is None:
            return set()
        cls = self.cls
        return {*cls.methods, *cls.assigned, *(f.name for f in cls.fields)}


@dataclass
class _Reads:
    """The globals a function reads, sorted by whose they are."""

    own: dict[str, str]  # the upstream's names -> how the home module binds each
    outside: list[str]  # bound by the home module from outside the upstream
    unbound: list[str]  # not bound by the home module at all


def globals_bound(
    namespace: Namespace, module: ModuleInfo, home: Home, fn: FunctionInfo, given: tuple[str, ...]
) -> tuple[bool, str]:
    """Whether every upstream name `fn` reads (but those `given`) is bound in `module`, with
    the detail: the names missing and where the home module binds them, or how it held."""
    upstream = home.module.name.split(".")[0]
    reads = _sorted_reads(namespace, home.module, fn, home.enclosing(), upstream)
    required = [name for name in reads.own if name not in given]
    missing = [name for name in required if isinstance(namespace.find(module, name), str)]
    qualname = home.qualname(fn)
    if missing:
        names = ", ".join(f"{name} ({reads.own[name]})" for name in missing)
        return False, (
            f"{qualname} (defined in {home.module.name}) reads {names}, "
            f"which {module.name} does not bind"
        )
    held = f"{len(required)} of {upstream}'s names, all bound in {module.name}"
    if not required:
        held = f"none of {upstream}'s names"
    notes = [f"{qualname} ({home.module.name}) reads {held}"]
    given_read = [name for name in reads.own if name in given]
    if given_read:
        notes.append(f"given: {', '.join(given_read)}")
    spared = [f"{', '.join(reads.outside)} (from outside {upstream})"] if reads.outside else []
    if reads.unbound:
        spared.append(f"{', '.join(reads.unbound)} (not bound in {home.module.name})")
    if spared:
        notes.append(f"not required: {', '.join(spared)}")
    return True, "; ".join(notes)


def _sorted_reads(
    namespace: Namespace, home: ModuleInfo, fn: FunctionInfo, enclosing: set[str], upstream: str
) -> _Reads:
    reads = _Reads({}, [], [])
    for name in global_reads(home, fn, enclosing):
        found = namespace.find(home, name)
        if isinstance(found, str):
            if name not in _SUPPLIED:
                reads.unbound.append(name)
            continue
        imports = [b.origin for b in found.bindings if b.kind == "import" and b.origin]
        if any(origin.split(".")[0] != upstream for origin in imports):
            reads.outside.append(name)
        elif found.module is not home or not found.bindings:
            reads.own[name] = (
                found.note or f"bound in {found.module.name}, star-imported into {home.name}"
            )
        elif imports:
            origin = imports[0].removesuffix(f".{name}")
            reads.own[name] = f"imported in {home.name} from {origin}"
        else:
            reads.own[name] = f"bound in {home.name}"
    return reads
