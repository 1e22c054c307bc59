"""The package's own classes, typed functions and method replacements, across its files:
which upstream class a class of the client derives from through the client's own bases, which
upstream class a function of the client returns (issue 45 item 3), and what a replacement
defined in one module and installed by another relies on (item 2).

`class OnlineDPOTrainer(BaseTrainer)` in one file, `class BaseTrainer(Trainer)` in another:
the first pass records each class the package defines (its bases, as upstream paths or the
names of the client's classes, and the names it binds on itself), each function whose return
annotation names an upstream class (`def load_model(...) -> "PreTrainedModel"`), and each
module-level def taking `self` (`Qwen2VLFlashAttention2.forward = qwen2_vl_attn_forward` in
a module importing it). The second pass asks, by name, what a base of the client's own
reaches (`own_class`), what a call of a function returns (`returned_class`), and what a
replacement defined elsewhere relies on (`written_method`). A name the package defines twice
with different facts answers nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from canary.scan.downstream.imports import Ref

#: bases that bind nothing a client could rely on (subclasses.py's)
NOTHING = frozenset({"object", "Generic", "ABC", "Protocol"})
#: the longest chain of the client's own bases followed
_DEPTH = 8

#: the kinds of first-pass events kept here (CallSites.replay hands them over)
TYPED = ("class", "gives", "method")

# one base of a class, as the first pass writes it: ["up", parts, known] an upstream class,
# ["own", name] any other name (a class of the package's, or of a package not scanned)
Base = list[Any]


@dataclass(frozen=True)
class OwnBase:
    """What a base of the client's own reaches: the upstream class, the names the client's
    classes on the way bind (their methods, class attributes, `self.x` they set), and whether
    every other base on the way binds nothing (`object`, ...) or is the client's own."""

    upstream: Ref
    binds: frozenset[str]
    alone: bool


class OwnTypes:
    """The first passes' classes and typed functions of the package, by name."""

    def __init__(self) -> None:
        self._classes: dict[str, list[tuple[list[Base], list[str]]]] = {}
        self._returns: dict[str, list[Ref]] = {}
        self._methods: dict[str, list[list[Any]]] = {}  # module-level defs taking self
        self._digest: str | None = None  # of all three (state)

    def add_class(self, name: str, bases: list[Base], binds: list[str]) -> list[Any]:
        """Keep one class; the event that replays it."""
        self._digest = None
        facts = (bases, sorted(set(binds)))
        if facts not in self._classes.setdefault(name, []):
            self._classes[name].append(facts)
        return ["class", name, bases, facts[1]]

    def add_return(self, function: str, ref: Ref) -> list[Any]:
        """Keep one function's annotated return; the event that replays it."""
        self._digest = None
        self._returns.setdefault(function, []).append(ref)
        return ["gives", function, list(ref.parts), ref.known]

    def add_method(self, function: str, written: list[Any]) -> list[Any]:
        """Keep what a module-level def taking `self` relies on (subclasses.written_method);
        the event that replays it."""
        self._digest = None
        self._methods.setdefault(function, []).append(written)
        return ["method", function, written]

    def replay(self, event: list[Any]) -> None:
        if event[0] == "class":
            self.add_class(event[1], event[2], event[3])
        elif event[0] == "method":
            self.add_method(event[1], event[2])
        else:
            self.add_return(event[1], Ref(tuple(event[2]), event[3]))

    def written_method(self, function: str, defined: int) -> list[Any] | None:
        """What the package's one def of `function` taking `self` relies on."""
        found = self._methods.get(function, [])
        return found[0] if len(found) == 1 and defined == 1 else None

    def answer(self, asked: tuple[str, str], defined: int) -> Any:
        """The answer to a second pass's question (CallSites.typed): which (`own_class`,
        `returned_class` or `written_method`) of which name (defined `defined` times)."""
        question, name = asked
        if question == "own_class":
            return self.own_class(name)
        if question == "returned_class":
            return self.returned_class(name, defined)
        return self.written_method(name, defined)

    def own_class(self, name: str) -> OwnBase | None:
        """What the package's class `name` derives from upstream, through its own bases."""
        reached = self._reach(name, _DEPTH)
        if reached is None or reached[0] is None:
            return None
        return OwnBase(reached[0], frozenset(reached[1]), reached[2])

    def _reach(self, name: str, depth: int) -> tuple[Ref | None, set[str], bool] | None:
        """(the upstream class, the names bound on the way, alone) for a class the package
        defines once; None for one it does not (or twice, differently)."""
        facts = self._classes.get(name, [])
        if len(facts) != 1 or depth == 0:
            return None
        bases, binds = facts[0]
        upstream: Ref | None = None
        alone = True
        bound = set(binds)
        for base in bases:
            if base[0] == "up":
                upstream = upstream or Ref(tuple(base[1]), base[2])
            elif base[1] not in NOTHING:
                further = self._reach(base[1], depth - 1)
                if further is None:  # a class of a package not scanned: it may bind anything
                    alone = False
                    continue
                upstream = upstream or further[0]
                bound |= further[1]
                alone = alone and further[2]
        return upstream, bound, alone

    def returned_class(self, function: str, defined: int) -> Ref | None:
        """The class every def of `function` (the package defines it `defined` times)
        annotates its return with."""
        found = self._returns.get(function, [])
        if len(found) != defined or len({ref.parts for ref in found}) != 1:
            return None
        return found[0]

    def state(self) -> str:
        """A digest of everything kept: a second pass depends on it (cache keys). Computed
        once per change, not once per file: a package's classes are many."""
        if self._digest is None:
            classes = [[name, facts] for name, facts in sorted(self._classes.items())]
            returns = [
                [name, sorted(list(ref.parts) for ref in refs)]
                for name, refs in sorted(self._returns.items())
            ]
            methods = [[name, found] for name, found in sorted(self._methods.items())]
            text = json.dumps([classes, returns, methods])
            self._digest = hashlib.sha256(text.encode()).hexdigest()
        return self._digest
