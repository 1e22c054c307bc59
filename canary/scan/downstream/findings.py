"""One observed use of an upstream object in downstream code, with where it was seen."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from canary.scan.downstream.imports import Ref
from canary.scan.downstream.spelled import WILD


class Role(str, enum.Enum):
    """How the downstream depends on the object; decides the proposed check."""

    IMPORT = "import"  # named by an import statement
    ACCESS = "access"  # read through an alias (`t.y`, `tr.Trainer.z`)
    ATTRIBUTE = "attribute"  # read from an instance (`self.lora_config.x`, lora_config: Cls)
    PATCH = "patch"  # assigned: setattr(mod, "name", ...), mod.name = ..., Class.method = ...
    GUARD = "hasattr"  # hasattr(obj, "name"): absence is tolerated
    KWARGS = "kwargs"  # called with these keyword arguments (items)
    CALL = "call"  # called with this shape (items: the positional count, then the keywords)
    # keywords a call passes that the upstream callee passes on through its **kwargs to the
    # callee here (proposing/forwarded.py; items: the keywords)
    FORWARDED = "forwarded"
    WRAPPER = "wrapper"  # replaced by a function taking these parameters (items)
    INSTALLED = "installed"  # replaced by a helper matching the replacement's names (items)
    CONTAINS = "contains"  # its source must contain this text (items: one literal)
    MATCHES = "matches"  # its source must match this regex (items: one pattern)
    GLOBALS = "globals"  # its source is compiled in the module's namespace (items: names given)
    # a subclass's (or a replacement's) uses of its upstream class (subclasses.py): ref is the
    # class + the member
    OVERRIDE = "override"  # a method the subclass overrides (items: its parameters, kind:name)
    REPLACEMENT = "replacement"  # replaced by a function with these parameters (kind:name)
    BASE_CALL = "base call"  # `self.m(...)`/`super().m(...)` of the base (items: keywords)
    BASE_ATTRIBUTE = "base attribute"  # `self.x` read, never set by the subclass
    # an object of an upstream class the client holds (instances.py): ref is the class the
    # code names + the member
    INSTANCE_CALL = "instance call"  # `obj.m(...)` (items: positional count or "", keywords)
    INSTANCE_READ = "instance read"  # `obj.x` read
    UNPLACED = "unplaced"  # a rewrite of a source scan cannot tell of what (ref: UNKNOWN)


#: the object whose source a rewrite reads when scan cannot tell which (`getsource(fn)`)
UNKNOWN = Ref(("?",), 0)


def wild(ref: Ref) -> bool:
    """A path scan knows only as a pattern (`transformers.models.{?}.modeling_{?}.{?}`):
    only the texts a `.replace` seeks in its source are placed (wildcards.py)."""
    return any(WILD in part for part in ref.parts)


@dataclass(frozen=True)
class Use:
    role: Role
    ref: Ref
    file: str  # relative to the scanned PATH, with forward slashes
    line: int
    items: tuple[str, ...] = ()
    tolerated: bool = False  # under try/except ImportError (or Exception), or a hasattr guard
    gate: str = ""  # a PEP 440 range of the upstream the use is gated to (`if Version(...) <`)
    # the other objects the use is about, any one of which will do: what the client imports
    # instead when this import fails (`except ImportError: from ...`), the other methods a
    # rewriter selecting several (`if name not in ("a", "b"): return src`) may rewrite
    alternatives: tuple[Ref, ...] = ()
    # seen in a walk once per module a listing names (`dir(trl.trainer)` filtered): the client
    # rewrites every one of them alike, so a text one of them never had is sought elsewhere
    listed: bool = False

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def file_upstreams(findings: Iterable[Use], upstreams: frozenset[str]) -> dict[str, set[str]]:
    """The upstreams each file's placed uses name: the upstream a rewrite of a source scan
    cannot tell of what most likely reads, where there is one."""
    used: dict[str, set[str]] = {}
    for finding in findings:
        if finding.role is not Role.UNPLACED and finding.ref.root in upstreams:
            used.setdefault(finding.file, set()).add(finding.ref.root)
    return used
