"""Evaluate one contract against the modules of one upstream version.

A contract holds or fails. A failure carries a detail a maintainer can act on: what is missing
and, where cheap, what is there instead; a pass carries one too when it held in a way worth
knowing (a keyword absorbed by **kwargs, a renamed keyword).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from packaging.version import Version

from canary.analysis import ClassInfo, FunctionInfo, ModuleInfo, Span
from canary.analysis.attributes import attributes
from canary.analysis.bases import ClassRef, Hierarchy
from canary.analysis.generated import init_of
from canary.analysis.lines import line_at
from canary.analysis.model import ParseError, Unfollowed
from canary.analysis.namespace import Namespace, replaced
from canary.analysis.parameters import first_difference, render, shown
from canary.analysis.runbound import bound_when_run
from canary.analysis.similar import close_matches
from canary.analysis.standing import (
    assigned_value,
    deleted_at,
    dotted,
    may_rebind,
    standing,
    wraps_itself,
)
from canary.engine import bounded_regex
from canary.engine.calls import accepted, bind, described, keyword_target
from canary.engine.globalnames import Home, globals_bound
from canary.matrix.model import ClassSubject, Contract, FunctionSubject, SymbolSubject

T = TypeVar("T")

#: imports followed from a check's module to the definition of its subject, at most
_MAX_IMPORT_HOPS = 24
_DEFINING = ("def", "class")


@dataclass(frozen=True)
class Verdict:
    holds: bool
    detail: str = ""  # a failure: what is wrong; a pass: how it held, when that is worth saying
    #: a failure that turns on what canary does not read (a base outside the upstream): the
    #: detail says so, and the status is `error`, not `fail`
    undecided: bool = False
    #: a failure that holds or not as the upstream runs (a name a function binds with
    #: `global`, an attribute a class's `__getattr__` may serve): the detail says what it
    #: turns on, and the status is `warn`, neither `pass` nor `fail`
    runtime: bool = False


def _pass(note: str = "") -> Verdict:
    return Verdict(True, note)


def _fail(detail: str) -> Verdict:
    return Verdict(False, detail)


#: whether failures name what is there instead (the "did you mean" hints); see without_hints
_hints: ContextVar[bool] = ContextVar("canary_hints", default=True)


@contextmanager
def without_hints() -> Iterator[None]:
    """Within the block, a failure's detail names no near names: whether a contract holds is
    the same, and a caller that keeps only that (scan bisecting a range) skips listing a
    module's names or a class's methods, which indexes the module whole. The failures judged
    so are not remembered as a user's verdicts (canary.engine.remembered)."""
    token = _hints.set(False)
    try:
        yield
    finally:
        _hints.reset(token)


def hints_on() -> bool:
    """Whether failures judged here name near names (false within `without_hints`)."""
    return _hints.get()


def _similar(name: str, candidates: Iterable[str], label: str) -> str:
    if not _hints.get():
        return ""
    close = close_matches(name, candidates, n=3, cutoff=0.6)
    return f" ({label} {', '.join(close)})" if close else ""


def _imported(module: ModuleInfo, name: str, what: str) -> str | None:
    """Detail for a name that is bound by import here but defined elsewhere."""
    for binding in module.bindings.get(name, []):
        if binding.kind == "import" and binding.origin:
            origin = binding.origin.rsplit(".", 1)[0] if binding.origin.endswith(name) else None
            where = f", defined in {origin}" if origin else f" (from {binding.origin})"
            return f"{what} {name} is imported here{where}"
    return None


def _missing_name(module: ModuleInfo, name: str, what: str, pool: Iterable[str]) -> Verdict:
    imported = _imported(module, name, what)
    if imported:
        return _fail(imported)
    later = bound_when_run(module, name)
    if later is not None:
        return Verdict(False, later.said(module, name), runtime=True)
    detail = f"{module.name} has no {what} {name}{_similar(name, pool, 'similar:')}"
    if module.star_imports:
        detail += f"; it star-imports {', '.join(module.star_imports)}"
    return _fail(detail)


def _source_verdict(source: str, subject: str, contract: Contract) -> Verdict:
    for text in contract.contains:
        if text not in source:
            return _fail(f"source of {subject} lacks {text!r}")
        times = source.count(text)
        if contract.count is not None and times != contract.count:
            lines = ", ".join(str(line) for line in _lines_of(source, text))
            return _fail(
                f"source of {subject} has {text!r} {times} times (its lines {lines}), "
                f"not {contract.count}"
            )
    for pattern in contract.matches:
        if not bounded_regex.search(pattern, source):
            return _fail(f"no match for /{pattern.pattern}/ in source of {subject}")
    for text in contract.not_contains:
        if text in source:
            line = line_at(source, source.index(text))
            return _fail(f"source of {subject} contains {text!r} (its line {line})")
    return _pass()


def _lines_of(source: str, text: str) -> list[int]:
    lines, at = [], source.find(text)
    while at != -1:
        lines.append(line_at(source, at))
        at = source.find(text, at + len(text))
    return lines


def _class_verdict(
    hierarchy: Hierarchy, ref: ClassRef, cls: ClassInfo, contract: Contract
) -> Verdict:
    notes = []
    for method in contract.methods:
        if method in cls.methods:
            continue
        if method in cls.borrowed:
            notes.append(_borrowed(cls, method))
            continue
        found = _inherited(hierarchy, ref, cls, method, contract.own)
        if isinstance(found, Verdict):
            return found
        notes.append(f"{method} {found[1]}")
    for base in contract.bases:
        if not any(_base_matches(actual, base) for actual in cls.bases):
            return _fail(f"bases of {cls.name} are ({', '.join(cls.bases)})")
    if contract.no_methods_beyond is not None:
        public = hierarchy.all_methods(ClassRef(ref.module, (cls,)))
        extra = sorted(
            m for m in public if not m.startswith("_") and m not in contract.no_methods_beyond
        )
        if extra:
            return _fail(f"{cls.name} has public methods beyond the list: {', '.join(extra)}")
    if contract.attributes or contract.assignable:
        held = _attributes_verdict(hierarchy, ClassRef(ref.module, (cls,)), contract)
        if not held.holds:
            return held
        notes.append(held.detail)
    verdict = _source_verdict(ref.module.segment(cls.span), f"class {cls.name}", contract)
    return _pass("; ".join(notes)) if verdict.holds and notes else verdict


def _attributes_verdict(hierarchy: Hierarchy, ref: ClassRef, contract: Contract) -> Verdict:
    """Each attribute bound by the class (or a base, unless `own`), each `assignable` one not
    a property without a setter; the pass says how each is bound."""
    table = attributes(hierarchy, ref, contract.own)
    notes = []
    for name in dict.fromkeys((*contract.attributes, *contract.assignable)):
        bound = table.bound.get(name)
        if bound is None:
            detail = f"{ref.name} binds no attribute {name}"
            detail += _similar(name, table.bound, "has")
            if contract.own:
                detail += " in its own body"
            elif table.unresolved:
                detail += "; not in its bases read here, and not known for " + ", ".join(
                    str(u) for u in table.unresolved
                )
            served = None if contract.own else _served_by_getattr(hierarchy, ref)
            if served is not None:
                return Verdict(False, f"{detail}; {served}", runtime=True)
            return _fail(detail)
        if name in contract.assignable and not bound.assignable:
            return _fail(f"{name} of {bound.owner.qualname} is {bound.how}: it cannot be assigned")
        where = "" if bound.owner.key == ref.key else f" of {bound.owner.qualname}"
        notes.append(f"{name}: {bound.how}{where}")
    return _pass("; ".join(notes))


def _served_by_getattr(hierarchy: Hierarchy, ref: ClassRef) -> str | None:
    """How an instance of the class may still find a name it does not bind: its (or a base's)
    `__getattr__`, which Python calls for every attribute missing otherwise, and whose answer
    canary does not evaluate; None when no class read here defines one."""
    order, _ = hierarchy.mro(ref)
    for owner in order:
        functions = owner.methods("__getattr__")
        if functions:
            return (
                f"{owner.qualname}.__getattr__ (line {functions[0].span.start}) serves the "
                "attributes an instance does not bind, which canary does not evaluate"
            )
    return None


def _inherited(
    hierarchy: Hierarchy, ref: ClassRef, cls: ClassInfo, method: str, own: bool
) -> tuple[ClassRef, str, list[FunctionInfo]] | Verdict:
    """The base that defines `method` for `cls`, with the words for it; else the failure.

    A base canary cannot read (outside the upstream, or not resolved) is named in the
    failure: what it defines is unknown, so the method is neither assumed to be there nor
    said to be missing (an undecided verdict)."""
    found = hierarchy.method(ClassRef(ref.module, (cls,)), method)
    if found.owner is not None:
        where = f"inherited from {found.owner.qualname}"
        if own:
            return _fail(f"{cls.name} does not define {method} in its own body ({where})")
        return found.owner, where, found.functions
    names = hierarchy.all_methods(ClassRef(ref.module, (cls,))) if _hints.get() else ()
    detail = _no_method(cls.name, method, names)
    if found.unresolved:
        detail += "; not in its bases read here, and not known for " + ", ".join(
            str(u) for u in found.unresolved
        )
        return Verdict(False, detail, undecided=True)  # a base not read may define it
    return _fail(detail)


def _base_matches(actual: str, wanted: str) -> bool:
    actual = actual.split("[", 1)[0]
    return actual == wanted or actual.rsplit(".", 1)[-1] == wanted.rsplit(".", 1)[-1]


def _no_method(cls_name: str, method: str, methods: Iterable[str]) -> str:
    close = close_matches(method, methods, n=3, cutoff=0.6) if _hints.get() else []
    has = f" (has {', '.join(close)})" if close else ""
    return f"{cls_name} has no method {method}{has}"


def _function_verdict(
    module: ModuleInfo,
    fn: FunctionInfo,
    qualname: str,
    contract: Contract,
    version: Version | None,
) -> Verdict:
    params = shown(fn)  # as inspect.signature shows them
    missing = [p for p in contract.params if p not in {param.name for param in params}]
    if missing:
        names = described(fn, "")
        return _fail(f"params of {qualname} are {names}; missing {', '.join(missing)}")
    notes = []
    for name in contract.accepts:
        how = accepted(fn, name, version)
        if how is None:
            return _fail(f"{described(fn, qualname)} does not accept {name}")
        if how:
            notes.append(how)
    for name in contract.named:
        target = keyword_target(fn, name, version)
        if target is None or target.kind == "kwarg":
            absorbed = f" (only absorbed by **{target.name})" if target else ""
            return _fail(f"{described(fn, qualname)} has no parameter {name}{absorbed}")
        how = accepted(fn, name, version)
        if how:
            notes.append(how)
    if contract.call is not None:
        refused = bind(fn, contract.call, version, method="." in qualname)
        if refused:
            return _fail(f"a call {contract.call} of {described(fn, qualname)} fails: {refused}")
        notes += [how for k in contract.call.keywords if (how := accepted(fn, k, version))]
    if contract.signature is not None:
        pin = contract.signature
        difference = first_difference(params, pin.params, fn.returns, pin.returns)
        if difference:
            return _fail(
                f"signature of {qualname} is {render(params, fn.returns)}; pinned "
                f"{render(pin.params, pin.returns)}: {difference}"
            )
    verdict = _source_verdict(module.segment(fn.span), qualname, contract)
    if verdict.holds and notes:
        return _pass("; ".join(dict.fromkeys(notes)))
    return verdict


def _first_holding(variants: Sequence[T], verdict_of: Callable[[T], Verdict]) -> Verdict:
    """Names defined twice (if/else branches) hold when any definition satisfies the check."""
    verdict = _fail("")
    for variant in variants:
        verdict = verdict_of(variant)
        if verdict.holds:
            return verdict
    return verdict


def evaluate(contract: Contract, hierarchy: Hierarchy, version: Version | None = None) -> Verdict:
    """Whether the contract holds on the version whose modules `hierarchy` reads."""
    namespace = hierarchy.namespace
    module = namespace.lookup(contract.module)
    if module is None:
        similar = namespace.similar_modules(contract.module) if _hints.get() else []
        hint = f" (did you mean {', '.join(similar)}?)" if similar else ""
        return _fail(f"module {contract.module} not found{hint}")
    uncompiled = namespace.compile_error(module.name)
    if uncompiled is not None:
        raise ParseError(uncompiled)  # no import of it succeeds, whatever it holds
    verdict = _evaluate_in(module, contract, hierarchy, version)
    if module.name != contract.module and verdict.holds:  # served by an alias table
        alias = f"{contract.module} is an alias of {module.name}"
        return _pass(f"{alias}; {verdict.detail}" if verdict.detail else alias)
    return verdict


def _evaluate_in(
    module: ModuleInfo, contract: Contract, hierarchy: Hierarchy, version: Version | None
) -> Verdict:
    subject = contract.subject
    if subject is not None:
        replaced(module)  # what an import finds is not the module's own names: said
    if isinstance(subject, SymbolSubject):
        return _evaluate_symbol(module, subject.name, contract, hierarchy.namespace)
    if isinstance(subject, ClassSubject):
        found = defined(module, subject.name, contract, hierarchy.namespace, "classes")
        if isinstance(found, Verdict):
            return found
        ref = ClassRef(found[0], tuple(found[1]))
        return _first_holding(
            list(ref.variants), lambda cls: _class_verdict(hierarchy, ref, cls, contract)
        )
    if isinstance(subject, FunctionSubject):
        return _evaluate_function(module, subject, contract, hierarchy, version)
    return _source_verdict(module.text, f"module {module.name}", contract)


def _evaluate_symbol(
    module: ModuleInfo, name: str, contract: Contract, namespace: Namespace
) -> Verdict:
    found = namespace.find(module, name)
    if isinstance(found, str):
        return _fail(found) if found else _missing_name(module, name, "symbol", module.bindings)
    verdict = _first_holding(
        found.sources(), lambda source: _source_verdict(source, name, contract)
    )
    if verdict.holds and found.note:
        return _pass(found.note)
    return verdict


def _evaluate_function(
    module: ModuleInfo,
    subject: FunctionSubject,
    contract: Contract,
    hierarchy: Hierarchy,
    version: Version | None,
) -> Verdict:
    name = subject.name

    def judge(home: Home, note: str = "") -> Callable[[FunctionInfo], Verdict]:
        def verdict(fn: FunctionInfo) -> Verdict:
            result = _function_verdict(home.module, fn, name, contract, version)
            if result.holds and contract.globals_bound:
                held, detail = globals_bound(
                    hierarchy.namespace, module, home, fn, contract.globals_given
                )
                notes = [result.detail, detail] if result.detail else [detail]
                result = Verdict(held, "; ".join(notes) if held else detail)
            if result.holds and note:
                return _pass(f"{note}; {result.detail}" if result.detail else note)
            return result

        return verdict

    if subject.owner is None:
        found = defined(module, name, contract, hierarchy.namespace, "functions")
        if isinstance(found, Verdict):
            return found
        where, variants = found
        return _first_holding(variants, judge(Home(where)))
    method = subject.method
    found_class = defined(module, subject.owner, contract, hierarchy.namespace, "classes")
    if isinstance(found_class, Verdict):
        return found_class
    ref = ClassRef(found_class[0], tuple(found_class[1]))

    def in_class(cls: ClassInfo) -> Verdict:
        methods = cls.methods.get(method)
        if methods:
            return _first_holding(methods, judge(Home(ref.module, cls)))
        if method in cls.borrowed:
            home, functions = _borrowed_method(hierarchy.namespace, ref.module, cls, method)
            return _first_holding(functions, judge(home, _borrowed(cls, method)))
        if method == "__init__":
            return _generated_or_inherited_init(ClassRef(ref.module, (cls,)), cls)
        found = _inherited(hierarchy, ref, cls, method, contract.own)
        if isinstance(found, Verdict):
            return found
        owner, where, functions = found
        home = Home(owner.module, owner.variants[0])
        return _first_holding(functions, judge(home, f"{method} {where}"))

    def _generated_or_inherited_init(here: ClassRef, cls: ClassInfo) -> Verdict:
        init = init_of(hierarchy, here)
        if init is None or (contract.own and init.owner.key != here.key):
            found = _inherited(hierarchy, ref, cls, method, contract.own)
            return found if isinstance(found, Verdict) else _fail(f"{cls.name} has no __init__")
        how = f"__init__ {init.how}" if init.how else ""
        home = Home(init.owner.module, init.owner.variants[0])
        verdict = _first_holding(init.functions, judge(home, how))
        unread = [  # NamedTuple makes the fields, and brings none of its own
            u
            for u in (hierarchy.mro(here)[1] if init.generated else [])
            if u.name.rsplit(".", 1)[-1] != "NamedTuple"
        ]
        positional = contract.signature is not None or (contract.call and contract.call.args)
        if unread and (not verdict.holds or positional):
            # a base not read here may be a dataclass too: its fields come first
            bases = ", ".join(str(u) for u in unread)
            said = verdict.detail if not verdict.holds else f"the fields {how}"
            return Verdict(False, f"{said}; the fields of {bases} are not read", undecided=True)
        if not verdict.holds and init.generated:
            return _fail(f"{verdict.detail} ({how})")
        return verdict

    return _first_holding(list(ref.variants), in_class)


def _borrowed(cls: ClassInfo, method: str) -> str:
    origin = cls.borrowed[method]
    if not origin:
        return f"{method} is bound in the class body to a value computed at run time"
    return f"{method} is bound in the class body to {origin}"


def _borrowed_method(
    namespace: Namespace, module: ModuleInfo, cls: ClassInfo, method: str
) -> tuple[Home, list[FunctionInfo]]:
    """The function the class body binds as `method` from elsewhere (an import, a module's
    name), in the module that defines it; raises Unfollowed when it lies outside the upstream,
    is no function read here, or is computed at run time."""
    origin = cls.borrowed[method]
    owner, _, attr = origin.rpartition(".")
    upstream = module.name.split(".")[0]
    source = namespace.lookup(owner) if owner.split(".")[0] == upstream else None
    found = None
    if source is not None:
        functions = source.functions.get(attr)
        found = (source, functions) if functions else None
        found = found or _through_imports(source, attr, namespace, "functions")
    if found is None:
        said = f"bound to {origin}, which is no function canary reads in {upstream}"
        raise Unfollowed(
            f"{module.path}:{cls.span.start}: {cls.name}.{method} is "
            + (said if origin else "bound to a value computed at run time, not followed")
        )
    return Home(found[0]), found[1]


def defined(
    module: ModuleInfo, name: str, contract: Contract, namespace: Namespace, table: str
) -> tuple[ModuleInfo, list[Any]] | Verdict:
    """The module that defines the function or class `name` (its `table`) and its
    definitions as they stand once the module has run: `module`, or, for `globals_bound`, the
    one `module`'s imports lead to (the client finds the name in `module`'s namespace)."""
    here = getattr(module, table)
    what = "function" if table == "functions" else "class"
    found = _standing(module, name, here, what, _MAX_IMPORT_HOPS)
    if isinstance(found, tuple) and found[0] is module and module.star_lines:
        starts = [b.span.start for b in standing(module, name)]
        again = namespace.star_rebinding(module, name, starts)
        if again is not None:  # Python keeps the last binding: the star import's
            theirs = getattr(again.module, table).get(name) if contract.globals_bound else None
            if theirs:
                return again.module, theirs
            said = f"{what} {name} of {module.name} is not what an import finds"
            return _fail(f"{said}: {again.note}")
    if found is not None:
        return found
    followed = _through_imports(module, name, namespace, table) if contract.globals_bound else None
    if followed is not None:
        return followed
    return _missing_name(module, name, what, here)


def _standing(
    module: ModuleInfo, name: str, here: Mapping[str, list[Any]], what: str, hops: int
) -> tuple[ModuleInfo, list[Any]] | Verdict | None:
    """The definitions of `name` in `module` that the last binding made leaves standing
    (Python keeps the last: a `def` rebound by `f = _other`, an import or a `del` is gone); an
    alias in the module (`Old = New`) is followed to its definitions. None when the module
    does not define it (an import, or nothing). Raises Unfollowed where the last binding is a
    value computed at run time."""
    records = here.get(name)
    if records and not may_rebind(module, name):
        return module, records  # the common case: defined, and bound by nothing else
    alive = standing(module, name)
    if records and len(alive) == 1 and alive[0].kind in _DEFINING:
        return module, records
    starts = {b.span.start for b in alive if b.kind in _DEFINING}
    kept = [r for r in records or () if r.span.start in starts]
    if not alive or alive[0].kind in _DEFINING:
        if kept:
            return module, kept
        line = deleted_at(module, name)
        if line is not None and records:
            return _fail(f"{what} {name} is deleted at line {line} (`del {name}`) after its def")
        return None
    last = alive[0]
    if last.kind != "assign":
        return None  # an import: defined elsewhere, as _missing_name says
    value = assigned_value(module, last, name)
    target = dotted(value)
    if target is not None and "." not in target and target != name and hops > 0:
        found = _standing(module, target, here, what, hops - 1)
        if isinstance(found, tuple):
            return found
    if records and wraps_itself(value, name):
        return module, kept or records  # `f = wrap(f)`: its def, wrapped as by a decorator
    if target is not None and not records:
        return None  # an alias of something not defined here (imported, or nothing)
    source = module.segment(Span(last.span.start, last.span.start)).strip()
    raise Unfollowed(
        f"{module.path}:{last.span.start}: {name} is bound last to a value computed at run "
        f"time (`{source}`), which canary does not follow"
    )


def _through_imports(
    module: ModuleInfo, name: str, namespace: Namespace, table: str
) -> tuple[ModuleInfo, list[Any]] | None:
    """Where the imports binding `name` in `module` lead, within the upstream, to its
    definitions in `table`; None where they leave the upstream or end without one."""
    upstream, where, wanted = module.name.split(".")[0], module, name
    for _ in range(_MAX_IMPORT_HOPS):
        found = namespace.find(where, wanted)
        if isinstance(found, str) or not found.bindings:
            return None
        definitions = getattr(found.module, table).get(wanted)
        if definitions:
            return found.module, definitions
        owner, _, wanted = (found.bindings[-1].origin or "").rpartition(".")
        following = namespace.lookup(owner) if owner.split(".")[0] == upstream else None
        if following is None:
            return None
        where = following
    return None


def evaluate_any(
    alternatives: tuple[Contract, ...], hierarchy: Hierarchy, version: Version | None = None
) -> Verdict:
    details = []
    undecided = runtime = False
    for i, alternative in enumerate(alternatives, 1):
        verdict = evaluate(alternative, hierarchy, version)
        if verdict.holds:
            return verdict
        details.append(f"({i}) {verdict.detail}")
        undecided = undecided or verdict.undecided
        runtime = runtime or verdict.runtime
    said = "none of the alternatives holds: " + "; ".join(details)
    return Verdict(False, said, undecided, runtime)
