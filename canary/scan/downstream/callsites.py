"""Upstream objects the package passes to its own functions: `patch_fix(Trainer)` binds the
parameter of `def patch_fix(trainer_class)` to transformers' Trainer inside it.

Functions are matched by name across the package; a name defined in several files binds, in
each of them, the calls of that file (a helper is called where it is defined, as zoo's two
`patch_gradient_checkpointing`), those of files defining none of them counting too. A parameter
is bound only when every call site passes the same object (the same name of the same upstream,
whichever module it is imported from). A call made in a walk of a function once per module a
listing names (`patch(RLTrainer)` in the walk for each trainer module) passes its own object
in each walk: the function is then walked once per walk too.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from canary.scan.downstream.folders import LISTS_FOLDERS, Yielded
from canary.scan.downstream.imports import Ref
from canary.scan.downstream.installers import INSTALLING, Installer, installer
from canary.scan.downstream.own_types import TYPED, OwnTypes
from canary.scan.downstream.source_helpers import READS_SOURCE, Returned, returned_source
from canary.scan.downstream.spelled import WILD, Names

_MIXED = Ref(("",), 0)  # marks a parameter that call sites pass different objects to
_Slots = dict[int | str, Ref]
_Asked = TypeVar("_Asked")
_Answer = TypeVar("_Answer")


def _question(
    method: Callable[[CallSites, _Asked], _Answer],
) -> Callable[[CallSites, _Asked], _Answer]:
    """A question a scan asks of the package's functions: a first pass keeps it, with its
    answer, in `asked` (CallSites.tells_nothing)."""

    def asking(self: CallSites, argument: _Asked) -> _Answer:
        answer = method(self, argument)
        if not self.frozen:
            self.asked.append((method.__name__, _kept(argument), answer))
        return answer

    asking.__name__ = method.__name__
    asking.__doc__ = method.__doc__
    return asking


def _same(a: Ref, b: Ref) -> bool:
    """The same object: `transformers.Trainer` re-exports `transformers.trainer.Trainer`
    (a path known as a pattern only as itself)."""
    if a is _MIXED or a.root != b.root or a.parts[-1] != b.parts[-1]:
        return False
    return WILD not in a.parts[-1] or a.parts == b.parts


def _merge(slots: _Slots, slot: int | str, ref: Ref) -> None:
    seen = slots.get(slot, ref)
    slots[slot] = ref if _same(seen, ref) else _MIXED


def _kept(argument: Any) -> Any:
    """What a question is asked again with: of a def, its name and parameters (all a question
    reads of it), not its body: the file's tree is let go after its first pass."""
    if isinstance(argument, ast.FunctionDef | ast.AsyncFunctionDef):
        return ast.FunctionDef(name=argument.name, args=argument.args, body=[], decorator_list=[])
    return argument


class CallSites:
    """What the package's calls pass, gathered in a first pass over every file."""

    def __init__(self) -> None:
        # function -> calling file -> what its calls there pass, per slot
        self._passed: dict[str, dict[str, _Slots]] = {}
        self._defined: Counter[str] = Counter()
        self._defined_in: dict[str, set[str]] = {}  # function -> the files defining it
        self.file = ""  # the file whose events are being recorded
        self.frozen = False  # the second pass reads what the first gathered
        self.registries: dict[str, str] = {}  # declared registries of rewriters (rewriters.py)
        self._rewrites: dict[str, str] = {}  # rewriter function name -> module template
        self._returns: dict[str, Returned] = {}  # function name -> the source it returns
        self._installers: dict[str, Installer] = {}  # function name -> what it installs
        self._yields: dict[str, Yielded] = {}  # function name -> the listed rows it returns
        # function name -> the version comparison each of its defs returns (version_tests.py)
        self._compares: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self.events: list[list[Any]] = []  # what this pass saw, in order (JSON-able)
        self._walked: tuple[ast.Module, frozenset[str]] | None = None  # a file, what it spells
        # function -> walk ("" for none) -> slot -> what a call made in that walk passes: the
        # module names of a listing, or (in a walk of a function once per value) an object
        self._varied: dict[str, dict[str, dict[int | str, Ref | Names]]] = {}
        # what this pass's scans asked of the package's functions, and the answers
        self.asked: list[tuple[str, Any, Any]] = []
        self.variant = ""  # the walk the visitor is in (a function walked once per value)
        self.repeating = False  # walking a body again: its defs are defined already
        self.given: CallSites | None = None  # a previous round's, for what walks vary
        self.types = OwnTypes()  # the package's classes and typed functions (own_types.py)

    def register(self, function: str, module: str) -> None:
        if not self.frozen:
            self.events.append(["register", function, module])
            self._rewrites[function] = module

    @_question
    def rewritten(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
        """The module whose sources the function rewrites, when a registry holds it."""
        if not self.frozen or self._defined[node.name] != 1:
            return None
        return self._rewrites.get(node.name)

    def returns(self, function: str, returned: Returned) -> None:
        """`function` returns the source of what it is passed (source_helpers.py)."""
        if not self.frozen:
            r = returned
            self.events.append(["returns", function, r.name, r.index, list(r.attrs), r.position])
            self._returns[function] = returned

    def learn(
        self,
        fn: ast.FunctionDef | ast.AsyncFunctionDef,
        tree: ast.Module,
        lists: Callable[[ast.FunctionDef | ast.AsyncFunctionDef], Yielded | None] | None = None,
    ) -> None:
        """In the first pass, what source `fn` (of `tree`) returns of what it is passed, what
        it installs, and the classes it lists from a folder and returns (as `lists` reads
        them), if it does: looked for only where the file spells what each needs
        (`getsource`; `getattr`, `setattr`; `listdir`), as most files spell none."""
        if self.frozen:
            return
        if self._walked is None or self._walked[0] is not tree:
            self._walked = tree, _identifiers(tree)
        spelled = self._walked[1]
        returned = returned_source(fn) if READS_SOURCE in spelled else None
        if returned is not None:
            self.returns(fn.name, returned)
        found = installer(fn) if not INSTALLING.isdisjoint(spelled) else None
        if found is not None:
            self.installs(fn.name, found)
        rows = lists(fn) if lists and not LISTS_FOLDERS.isdisjoint(spelled) else None
        if rows is not None:
            self.yields(fn.name, rows)

    def yields(self, function: str, rows: Yielded) -> None:
        """`function` returns rows of classes it lists from an upstream folder (folders.py)."""
        if not self.frozen:
            self.events.append(["yields", function, rows.encoded()])
            self._yields[function] = rows

    @_question
    def yielded(self, function: str) -> Yielded | None:
        """The rows of listed classes a call of the package's `function` returns, if any."""
        if not self.frozen or self._defined[function] != 1:
            return None
        return self._yields.get(function)

    def compares(self, function: str, params: tuple[str, ...], comparison: str) -> None:
        """`function(params)` returns the version comparison `comparison` (version_tests.py)."""
        if not self.frozen and not self.repeating:
            self.events.append(["compares", function, list(params), comparison])
            self._compares.setdefault(function, []).append((params, comparison))

    @_question
    def comparison(self, function: str) -> tuple[tuple[str, ...], str] | None:
        """(parameters, comparison) a call of `function` stands for, each of its defs alike."""
        found = self._compares.get(function, [])
        alike = len(set(found)) == 1 and len(found) == self._defined[function]
        return found[0] if self.frozen and alike else None

    def installs(self, function: str, found: Installer) -> None:
        """`function` installs a replacement over an upstream attribute (installers.py)."""
        if not self.frozen:
            self.events.append(["installs", function, *[list(s) for s in _slots(found)]])
            self._installers[function] = found

    @_question
    def installer(self, function: str) -> Installer | None:
        """What a call of the package's `function` installs, if it installs."""
        if not self.frozen or self._defined[function] != 1:
            return None
        return self._installers.get(function)

    @_question
    def returned(self, function: str) -> Returned | None:
        """What a call of the package's `function` returns the source of, if it does."""
        if not self.frozen or self._defined[function] != 1:
            return None
        return self._returns.get(function)

    @_question
    def typed(self, asked: tuple[str, str]) -> Any:
        """What the package's own classes and functions answer (own_types.OwnTypes.answer)."""
        return self.types.answer(asked, self._defined[asked[1]]) if self.frozen else None

    def lists(self, parts: tuple[str, ...], found: tuple[str, ...] | None) -> None:
        """The file read the modules of upstream package `parts`: what it scanned depends on
        them (file_scans.py scans it again when they change)."""
        if not self.frozen:
            self.events.append(["lists", list(parts), None if found is None else list(found)])

    def define(self, name: str) -> None:
        if not self.frozen and not self.repeating:
            self.events.append(["define", name])
            self._defined[name] += 1
            self._defined_in.setdefault(name, set()).add(self.file)

    def record(self, function: str, slot: int | str, ref: Ref) -> None:
        if self.frozen:
            return
        if self.variant:  # one object per value the walk goes through: not mixed
            self.vary(function, self.variant, slot, ref)
            return
        self.events.append(["record", function, slot, list(ref.parts), ref.known])
        _merge(self._passed.setdefault(function, {}).setdefault(self.file, {}), slot, ref)

    def _slots(self, function: str, file: str) -> _Slots:
        """What the calls reaching `file`'s def of `function` pass: every call when the
        package defines it once; else the calls of that file and of files defining none."""
        by_file = self._passed.get(function, {})
        defining = self._defined_in.get(function, set())
        if self._defined[function] == 1:
            callers = list(by_file)
        elif file in defining:
            callers = [f for f in by_file if f == file or f not in defining]
        else:
            return {}
        own = by_file.get(file, {}) if self._defined[function] > 1 else None
        merged: _Slots = {}
        for caller in callers:
            for slot, ref in by_file[caller].items():
                if own is None or slot in own:  # a slot only other files fill binds nothing
                    _merge(merged, slot, ref)
        return merged

    def record_call(
        self,
        function: str,
        call: ast.Call,
        upstream: Callable[[ast.expr], Ref | None],
        lookup: Callable[[str], object | None] = lambda name: None,
    ) -> None:
        """Record the upstream objects (as `upstream` tells them) `call` passes `function`,
        and the module names of a listing (a name `lookup` binds to Names)."""
        slots: list[tuple[int | str, ast.expr]] = [*enumerate(call.args)]
        slots += [(k.arg, k.value) for k in call.keywords if k.arg]
        for slot, value in slots:
            ref = upstream(value)
            bound = lookup(value.id) if isinstance(value, ast.Name) else None
            if ref is not None:
                self.record(function, slot, ref)
            elif isinstance(bound, Names) and not self.frozen:
                self.vary(function, self.variant, slot, bound)

    def vary(self, function: str, variant: str, slot: int | str, value: Ref | Names) -> None:
        """A call made in walk `variant` passes `value` (module names gather)."""
        if isinstance(value, Names):
            payload: list[Any] = ["names", list(value.values)]
        else:
            payload = ["ref", list(value.parts), value.known]
        self.events.append(["varies", function, variant, slot, payload])
        slots = self._varied.setdefault(function, {}).setdefault(variant, {})
        seen = slots.get(slot)
        if isinstance(seen, Names) and isinstance(value, Names):
            value = Names(tuple(sorted({*seen.values, *value.values})))
        slots[slot] = value

    @_question
    def bound(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Ref]:
        """Parameter name -> the one upstream object every call reaching this def (of the
        file being scanned) passes to it."""
        slots = self._slots(node.name, self.file) if self.frozen else None
        if not slots:
            return {}
        found = _named(node.args, slots)
        return {name: ref for name, ref in found.items() if ref is not _MIXED}

    @_question
    def rows(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[dict[str, object]]:
        """What the body of `node` is walked with, once per row: the objects every call
        passes (bound), the module names calls pass, and one row per walk of a caller that
        passed its own object (`patch(RLTrainer)` in a function walked once per trainer
        module). A first pass sees only what a previous round (`given`) found varying."""
        source = self if self.frozen else self.given
        if source is None:
            return [{}]
        common: dict[str, object] = dict(self.bound(node))
        if source._defined[node.name] != 1:  # defined in several files: what its own file's
            return [common]  # calls pass (_slots), walked once
        walks = source._varied.get(node.name, {})
        common |= _named(node.args, walks.get("", {}))
        labels = sorted(label for label in walks if label)
        return [common | _named(node.args, walks[label]) for label in labels] or [common]

    def tells_nothing(self, file: str, asked: list[tuple[str, Any, Any]]) -> bool:
        """Whether, frozen, every question `file`'s first pass asked (`asked`) gets the
        answer it got then: its second pass would find what the first found."""
        self.file = file  # as scanning it sets it
        return all(getattr(self, question)(arg) == answer for question, arg, answer in asked)

    def replay(self, events: list[list[Any]], file: str = "") -> None:
        """Add what one file's first pass saw (its `events`)."""
        self.file = file
        for event in events:
            _replay(self, event)

    def state(self, names: list[str], file: str = "") -> list[Any]:
        """All a second pass of `file` may learn about its functions `names` (JSON-able), and
        which functions of the package return a source or install a replacement: a file whose
        state is unchanged scans as before."""
        helpers: list[list[Any]] = [
            [name, self._defined[name], r.name, r.index, list(r.attrs), r.position]
            for name, r in sorted(self._returns.items())
        ]
        helpers += [
            [name, self._defined[name], *[list(s) for s in _slots(found)]]
            for name, found in sorted(self._installers.items())
        ]
        helpers += [
            [name, self._defined[name], rows.encoded()]
            for name, rows in sorted(self._yields.items())
        ]
        helpers += [
            [name, self._defined[name], sorted(map(list, found))]
            for name, found in sorted(self._compares.items())
        ]
        functions = [
            [
                name,
                self._defined[name],
                self._rewrites.get(name),
                sorted(
                    [str(slot), isinstance(slot, int), list(ref.parts), ref.known]
                    for slot, ref in self._slots(name, file).items()
                ),
                self.varied(name),
            ]
            for name in sorted(set(names))
        ]
        return [helpers, self.types.state(), *functions]

    def varying(self) -> set[str]:
        """The functions some walk passes module names or its own object to."""
        return {name for name, walks in self._varied.items() if walks}

    def varied(self, function: str) -> list[Any]:
        """What walks pass `function` (JSON-able), for cache keys."""
        walks = self._varied.get(function, {})
        return [
            [label, sorted([str(slot), isinstance(slot, int), repr(v)] for slot, v in s.items())]
            for label, s in sorted(walks.items())
        ]


def _replay(sites: CallSites, event: list[Any]) -> None:
    """Add one event of a first pass (CallSites.replay)."""
    if event[0] == "define":
        sites.define(event[1])
    elif event[0] == "register":
        sites.register(event[1], event[2])
    elif event[0] == "installs":
        _, function, *slots = event
        sites.installs(function, Installer(*(tuple(slot) for slot in slots)))
    elif event[0] == "varies":
        _, function, variant, slot, payload = event
        if payload[0] == "names":
            sites.vary(function, variant, slot, Names(tuple(payload[1])))
        else:
            sites.vary(function, variant, slot, Ref(tuple(payload[1]), payload[2]))
    elif event[0] == "yields":
        sites.yields(event[1], Yielded.decoded(event[2]))
    elif event[0] == "compares":
        _, function, params, comparison = event
        sites.compares(function, tuple(params), comparison)
    elif event[0] == "returns":
        _, function, name, index, attrs, position = event
        sites.returns(function, Returned(name, index, tuple(attrs), position))
    elif event[0] in TYPED:
        sites.types.replay(event)
    elif event[0] != "lists":
        _, function, slot, parts, known = event
        sites.record(function, slot, Ref(tuple(parts), known))


def _named(args: ast.arguments, slots: Mapping[int | str, Any]) -> dict[str, Any]:
    """Parameter name -> the value of its slot (a position or a keyword)."""
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    named = (*positional, *(a.arg for a in args.kwonlyargs))
    found: dict[str, Any] = {}
    for slot, value in slots.items():
        name = positional[slot] if isinstance(slot, int) and slot < len(positional) else slot
        if isinstance(name, str) and name in named:
            found[name] = value
    return found


def _identifiers(tree: ast.Module) -> frozenset[str]:
    """Every name and attribute the file spells (identifiers as the parser normalised them),
    walked once: cheaper than walking each function's body for calls the file never makes."""
    return frozenset(
        node.id if isinstance(node, ast.Name) else node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Name | ast.Attribute)
    )


def _slots(found: Installer) -> tuple[tuple[int, str], ...]:
    return found.target, found.name, found.new
