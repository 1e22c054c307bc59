"""Turn findings into proposed checks: one subject per upstream object, deduplicated.

Each upstream object the downstream touches becomes one subject (module + symbol / class /
function); its findings become at most one check per assertion (`accepts`, `contains`,
`matches`, `methods`), or a bare existence check when nothing more specific is known.
A check that another check implies (the symbol `Trainer` when `class: Trainer` is checked,
a module when something in it is) is folded into that check's `why`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from canary.matrix.model import DOTTED_NAME
from canary.scan.downstream.call_shapes import shape_text
from canary.scan.downstream.findings import Role, Use
from canary.scan.downstream.imports import Ref
from canary.scan.downstream.rewriters import ANY_CLASS
from canary.scan.proposing.forwarded import forwarded_uses
from canary.scan.proposing.inherited import (
    BASE_ROLES,
    base_member,
    binds,
    inherited_method,
    shaped_apart,
)
from canary.scan.proposing.pass_through import passes_through
from canary.scan.proposing.subjects import Placement, is_class_name, locate, place
from canary.scan.upstream.view import UpstreamView

# Constructors of these are dataclasses: their keyword arguments are fields, often inherited,
# not parameters of an `__init__` the class defines, so `accepts` would fail on every release.
_DATACLASS_SUFFIXES = ("Config", "Arguments", "Args")

_PHRASES = {
    Role.IMPORT: "imported at",
    Role.ACCESS: "used at",
    Role.ATTRIBUTE: "read from an instance at",
    Role.PATCH: "monkey-patched at",
    Role.GUARD: "guarded by hasattr at",
    Role.KWARGS: "called with keyword arguments at",
    Role.FORWARDED: "passed on through an upstream callee's **kwargs from the call at",
    Role.WRAPPER: "monkey-patched with a wrapper taking these parameters at",
    Role.INSTALLED: "installed by a helper that matches the replacement's parameters at",
    Role.CONTAINS: "a source rewrite expects the text at",
    Role.MATCHES: "a source regex expects a match at",
    Role.GLOBALS: "its source is compiled in this module's namespace (its names) at",
    Role.OVERRIDE: "overridden by a subclass at",
    Role.REPLACEMENT: "replaced by a function with its parameters at",
    Role.BASE_CALL: "called on self or super() at",
    Role.BASE_ATTRIBUTE: "read on self (never set there) at",
    Role.INSTANCE_CALL: "called on an instance at",
    Role.INSTANCE_READ: "read on an instance at",
}
_NAMESPACE_ROLES = (Role.IMPORT, Role.ACCESS, Role.ATTRIBUTE, Role.PATCH, Role.GUARD)
_REEXPORT_NOTE = (
    "NOTE: the package root may only re-export it; name the defining module"
    " (`canary scan --source DIR` finds it)"
)
_ORDER = {None: 0, "methods": 1, "attributes": 2, "params": 3, "accepts": 4, "call": 5}
_ORDER |= {"signature": 6, "contains": 7, "matches": 8}
# calls: what each proposes of the callee
_CALLS = {Role.KWARGS: "accepts", Role.CALL: "call", Role.FORWARDED: "accepts"}
# assertions stated one value per check
_ONE_EACH = ("call", "signature")
# texts, which each of a subject's alternatives may hold apart (a rewriter selecting several
# methods): one any_of check per value; names passed or read belong to the one object the
# client got (whichever import won), so they stay one check of either
_EACH_APART = ("contains", "matches")
# roles that say something of a source text, or (installed) of a replacement's parameters
_SEEKS = {Role.CONTAINS: "contains", Role.MATCHES: "matches", Role.INSTALLED: "params"}


@dataclass(frozen=True)
class ProposedSubject:
    """What a check is about: `key` is "symbol", "class", "function" or None (the module);
    with `alternatives`, this or one of those (`any_of`: what the client imports when this
    fails, the other methods a rewriter selecting several may find its text in)."""

    module: str
    key: str | None = None
    name: str | None = None
    alternatives: tuple[ProposedSubject, ...] = ()

    @property
    def upstream(self) -> str:
        return self.module.split(".")[0]


@dataclass
class Proposal:
    """One proposed check; `uses` are the findings its `why` cites."""

    subject: ProposedSubject
    assertion: str | None  # "methods", "accepts", "contains", "matches" or None (exists)
    values: list[str]
    severity: str
    uses: list[Use]
    note: str = ""
    gate: str = ""  # a PEP 440 range: the releases the downstream uses it on
    notes: list[str] = field(default_factory=list)  # comments for the reviewer (where it fails)
    public: bool = False  # a notice: a name the package root exports on every release read
    attached: bool = False  # set by the client on a module no release read binds it in

    @property
    def why(self) -> str:
        text = describe(self.uses, guarded=_severity(self.uses) == "info")
        return f"{text}; {self.note}" if self.note else text


@dataclass
class _Facts:
    """Everything observed about one subject, keyed by the assertion it supports."""

    exists: list[Use] = field(default_factory=list)
    values: dict[str, dict[str, list[Use]]] = field(default_factory=dict)

    def add(self, assertion: str | None, value: str | None, finding: Use) -> None:
        if assertion is None or value is None:
            self.exists.append(finding)
        else:
            self.values.setdefault(assertion, {}).setdefault(value, []).append(finding)


def _place(
    role: Role, target: Placement, items: tuple[str, ...], modules: Collection[str]
) -> tuple[ProposedSubject, str | None, tuple[str, ...]] | None:
    """The subject a finding is about, the assertion it supports (None: existence), its values."""
    module, path = target.module, target.path
    values = items if role in (*_CALLS, *_SEEKS) else ()
    seeks = _SEEKS.get(role)
    function = len(path) == 2 or (len(path) == 1 and not is_class_name(path[0]))
    if role is Role.INSTALLED and not function:
        return None  # a module or a class replaced: no parameters of a function to check
    if not path:
        return None if role in (*_CALLS, Role.WRAPPER) else (ProposedSubject(module), seeks, values)
    if len(path) == 2:
        owner, attr = path
        if role is Role.ATTRIBUTE:  # not called: an attribute, by names alone
            return ProposedSubject(module, "class", owner), "attributes", (attr,)
        if role in (Role.IMPORT, Role.ACCESS):
            return ProposedSubject(module, "class", owner), "methods", (attr,)
        if role in _CALLS:
            return ProposedSubject(module, "function", f"{owner}.{attr}"), *_called(
                role, items, False
            )
        return ProposedSubject(module, "function", f"{owner}.{attr}"), seeks, values
    (name,) = path
    if not is_class_name(name) and f"{module}.{name}" in modules:
        return _place(role, Placement(f"{module}.{name}", ()), items, modules)
    if role in _NAMESPACE_ROLES:
        return ProposedSubject(module, "symbol", name), None, ()
    if seeks:
        return (
            ProposedSubject(module, "class" if is_class_name(name) else "function", name),
            seeks,
            values,
        )
    if not is_class_name(name):
        if role in _CALLS:
            return ProposedSubject(module, "function", name), *_called(role, items, True)
        return ProposedSubject(module, "function", name), None, ()
    if role in _CALLS and not name.endswith(_DATACLASS_SUFFIXES):
        return ProposedSubject(module, "function", f"{name}.__init__"), *_called(role, items, False)
    return ProposedSubject(module, "symbol", name), None, ()


def _read_place(
    role: Role, target: Placement, items: tuple[str, ...]
) -> tuple[ProposedSubject, str | None, tuple[str, ...]] | None:
    """The subject of a finding placed on a release (kind known), as `_place` does by names."""
    seeks = _SEEKS.get(role)
    values = items if seeks else ()
    if role is Role.INSTALLED and target.kind != "function" and len(target.path) != 2:
        return None  # a module or a class replaced: no parameters of a function to check
    if target.member:  # an attribute that is no method: the class is all upstream promises,
        # or, read from an instance or a class attribute there, that the class binds it
        if role is Role.ATTRIBUTE or (target.attribute and role is Role.ACCESS):
            return (
                ProposedSubject(target.module, "class", target.path[0]),
                "attributes",
                (target.member,),
            )
        if role in (Role.IMPORT, Role.ACCESS):
            return ProposedSubject(target.module, "class", target.path[0]), None, ()
        return None
    if target.kind == "module":
        if role in (*_CALLS, Role.WRAPPER, Role.PATCH, Role.GUARD) and target.path:
            return None
        return ProposedSubject(target.module), seeks, values
    name = ".".join(target.path)
    if target.kind == "value":
        if role in _NAMESPACE_ROLES:
            return ProposedSubject(target.module, "symbol", name), None, ()
        return None
    key = "function" if len(target.path) == 2 else target.kind
    if role in _CALLS:
        subject = ProposedSubject(target.module, key, name)
        alone = len(target.path) == 1
        return (subject, *_called(role, items, alone)) if key == "function" else None
    return ProposedSubject(target.module, key, name), seeks, values


def _target(
    finding: Use, views: Sequence[UpstreamView], modules: Collection[str]
) -> Placement | None:
    """Where a finding points: on the releases read when there are any, else by names."""
    if not views:
        return locate(finding.ref, modules)
    target = place(finding.ref, views, call=finding.role in _CALLS)
    if target is None or target.absent:
        if finding.role in (Role.PATCH, Role.GUARD):
            return None
        return _unread(locate(finding.ref, modules), finding.role)
    if finding.role in _NAMESPACE_ROLES and len(target.path) == 1 and target.kind != "module":
        # `from m import n`, `m.n`, `m.n = x` need m to bind n, wherever n is defined
        parts = finding.ref.parts
        namespace = place(Ref(parts[:-1], finding.ref.known), views) if len(parts) > 1 else None
        if namespace is not None and namespace.kind == "module" and not namespace.path:
            return Placement(namespace.module, parts[-1:], "value")
    return target


def _called(role: Role, items: tuple[str, ...], alone: bool) -> tuple[str, tuple[str, ...]]:
    """What a call of a function proposes: a module-level function called with a known shape,
    `call` (call_shapes.py); a method (whose caller may pass `self` itself, as
    `Class.method(obj, ...)` does) or a constructor, `accepts` of the keywords."""
    if role is Role.CALL and alone:
        return "call", (shape_text(items),)
    return "accepts", items[1:] if role is Role.CALL else items


def _unread(target: Placement, role: Role) -> Placement | None:
    """A module-level name no release read defines, placed by names: at most that the module
    binds it (`symbol`: it may re-export it from a third-party package, as transformers does
    `causal_conv1d_fn`), never a signature of a module that does not define it."""
    if len(target.path) != 1 or role in (Role.CONTAINS, Role.MATCHES):
        return target
    if role in (*_CALLS, Role.WRAPPER):
        return None
    return Placement(target.module, target.path, "value")


def _collect(
    findings: Iterable[Use],
    modules: Collection[str],
    views_of: Mapping[str, Sequence[UpstreamView]],
) -> dict[ProposedSubject, _Facts]:
    findings = list(findings)
    attached = {f.ref.parts for f in findings if f.role is Role.PATCH}
    located = []
    facts: dict[ProposedSubject, _Facts] = {}
    varied = shaped_apart(findings)
    for finding in findings:
        views = views_of.get(finding.ref.root, ())
        if finding.role in BASE_ROLES or inherited_method(finding, views):
            members = base_member(finding, views, finding.ref.parts not in varied)
            for stated in members:
                subject = ProposedSubject(stated.module, stated.key, stated.name)
                for member in stated.values:
                    facts.setdefault(subject, _Facts()).add(stated.assertion, member, finding)
            if members or finding.role in BASE_ROLES:
                continue  # an inherited method not stated on its class: where it is defined
        targets = [_inherited(t, views_of) for t in _targets(finding, views, modules)]
        if targets and not (targets[0].kind is None and views and finding.ref.parts in attached):
            located.append((finding, targets))
    known = set(modules) | {target.module for _, targets in located for target in targets}
    for finding, targets in located:
        placed = [p for p in (_subject(finding, t, known) for t in targets) if p is not None]
        if not placed:
            continue
        first, read = targets[0], views_of.get(finding.ref.root, ())
        if finding.role is Role.ACCESS and first.member and binds(first, read):
            # `Cls._table[...]`: a class attribute a release read binds, not a method
            class_ = ProposedSubject(first.module, "class", first.path[0])
            placed[0] = class_, "attributes", (first.member,)
        subject, assertion, values = placed[0]
        views = views_of.get(subject.upstream, ())
        if assertion in _CALLS.values() and passes_through(subject.module, subject.name, views):
            assertion, values = None, ()  # any keyword binds: the use says it exists
        others = tuple(dict.fromkeys(p[0] for p in placed[1:] if p[1:] == placed[0][1:]))
        others = tuple(other for other in others if other != subject)
        if others:
            subject = dataclasses.replace(subject, alternatives=others)
        elif finding.role is Role.IMPORT and finding.alternatives:
            # no fallback to check: the client tolerates the import failing
            finding = dataclasses.replace(finding, tolerated=True, alternatives=())
        data = facts.setdefault(subject, _Facts())
        for value in values if assertion else (None,):
            data.add(assertion, value, finding)
    return facts


def _targets(
    finding: Use, views: Sequence[UpstreamView], modules: Collection[str]
) -> list[Placement]:
    """Where a finding and each of its alternatives point, the finding's first. A method of
    "the class that defines it" that no release read defines is no alternative (the rewriter
    selecting it does nothing there) unless none of them is defined anywhere: then the first
    stands, on its module."""
    first = _target(finding, views, modules)
    if not finding.alternatives:
        return [first] if first is not None else []
    every = [first] + [
        _target(dataclasses.replace(finding, ref=ref, alternatives=()), views, modules)
        for ref in finding.alternatives
    ]
    if first is None and finding.role is Role.IMPORT:
        return []
    refs = (finding.ref, *finding.alternatives)
    kept = [t for ref, t in zip(refs, every, strict=True) if t is not None and _reached(ref, t)]
    # one no release read has (placed by its names) after those they have: the check is of
    # what the client finds there (a fallback import, `vllm.lora.lora_model` for `.models`)
    kept.sort(key=lambda t: views != () and t.kind is None)
    return kept or ([first] if first is not None else [])


def _inherited(target: Placement, views_of: Mapping[str, Sequence[UpstreamView]]) -> Placement:
    """A member of a class that a base of another package brings (subjects.place), placed on
    that package's releases when they were read: the check is of the package that defines
    it (trl's trainers inherit transformers' Trainer methods)."""
    if not target.inherited:
        return target
    parts = (*target.inherited.split("."), target.member)
    views = views_of.get(parts[0], ())
    if not views:
        return target
    module = place(Ref(parts[:-2], len(parts) - 2), views)
    found = place(Ref(parts, len(parts) - 2), views)
    if found is None or found.absent or module is None or module.kind != "module":
        return target
    return found


def _reached(ref: Ref, target: Placement) -> bool:
    """A method of "the class that defines it" is reached when it was placed on a class."""
    return ANY_CLASS not in ref.parts or len(target.path) == 2


def _subject(
    finding: Use, target: Placement, known: Collection[str]
) -> tuple[ProposedSubject, str | None, tuple[str, ...]] | None:
    if target.kind is None:
        return _place(finding.role, target, finding.items, known)
    return _read_place(finding.role, target, finding.items)


def _implied_by(
    subject: ProposedSubject, subjects: Collection[ProposedSubject]
) -> ProposedSubject | None:
    """Another subject whose check already implies this one exists, preferring the closest
    (a check with alternatives implies none of them)."""
    same_module = [
        s for s in subjects if s.module == subject.module and s != subject and not s.alternatives
    ]
    name = subject.name
    if subject.key is None:
        return same_module[0] if same_module else None
    if subject.key == "symbol":
        for key in ("class", "function"):
            if ProposedSubject(subject.module, key, name) in subjects:
                return ProposedSubject(subject.module, key, name)
    if subject.key in ("symbol", "class"):
        members = [s for s in same_module if (s.name or "").startswith(f"{name}.")]
        members.sort(key=lambda s: s.name != f"{name}.__init__")  # a call is a use of __init__
        return members[0] if members else None
    return None


def _fold(facts: dict[ProposedSubject, _Facts]) -> None:
    """Move implied existence checks and methods into the subjects that imply them."""
    for subject in sorted(facts, key=lambda s: (s.key is not None, s.key != "symbol")):
        data = facts[subject]
        methods = data.values.get("methods", {})
        for method in list(methods):
            function = ProposedSubject(subject.module, "function", f"{subject.name}.{method}")
            if function in facts:
                facts[function].exists.extend(methods.pop(method))
        if not methods:
            data.values.pop("methods", None)
        if data.values:
            continue
        into = _implied_by(subject, list(facts))
        if into is None and subject.key is None:
            into = next((s for s in facts if s.module.startswith(f"{subject.module}.")), None)
        if into is not None and subject.key and _tolerated(facts[into]) > _tolerated(data):
            continue  # a hard use of a class stays hard beside a method the client may lack
        if into is not None:
            if subject.key is not None:
                facts[into].exists.extend(data.exists)
            del facts[subject]


def _tolerated(data: _Facts) -> bool:
    """Whether the client tolerates every use of the subject failing: a hard use folded into
    a tolerated check (an unguarded import of a class into its method patched only in a
    fallback branch) would make it hard, or be lost."""
    uses = [*data.exists, *(u for by in data.values.values() for v in by.values() for u in v)]
    return all(use.tolerated for use in uses)


def _severity(uses: list[Use]) -> str:
    """info when the downstream tolerates every use failing (try/except, hasattr)."""
    return "info" if uses and all(use.tolerated for use in uses) else "error"


def _gate(uses: list[Use]) -> str:
    """The releases every use is gated to (`if Version(x.__version__) < ...`), if one range."""
    gates = {use.gate for use in uses}
    return gates.pop() if len(gates) == 1 else ""


def _by_gate(values: dict[str, list[Use]]) -> list[dict[str, list[Use]]]:
    """One assertion's values grouped by the releases their uses are gated to, the ungated
    first: a keyword the client passes only under `if Version(...) < Version("5.0.0"):` is a
    check of its own, gated as it is, not a name every release must take. So is each set of
    keywords passed only where the client tolerates them failing (one branch of
    `if "n" in sig.parameters:`), beside those every path passes."""
    groups: dict[tuple[str, frozenset[Use]], dict[str, list[Use]]] = {}
    for value, uses in sorted(values.items(), key=lambda item: _gate(item[1]) != ""):
        tolerated = frozenset(uses) if _severity(uses) == "info" else frozenset()
        groups.setdefault((_gate(uses), tolerated), {})[value] = uses
    return list(groups.values())


def _importable(subject: ProposedSubject) -> bool:
    """Whether the subject (and its alternatives) names modules as a matrix must: dotted."""
    dotted = DOTTED_NAME.fullmatch(subject.module) is not None
    return dotted and all(_importable(other) for other in subject.alternatives)


def propose(
    findings: Iterable[Use],
    modules: Collection[str],
    views: Mapping[str, Sequence[UpstreamView]] | None = None,
) -> dict[str, list[Proposal]]:
    """Proposed checks per upstream, in a stable order (module, subject, assertion).

    `modules` are dotted names known to be modules; `views` the releases read per upstream
    (newest first), where each name is looked up; without them, naming conventions place it.
    """
    findings = list(findings)
    findings += forwarded_uses(findings, views or {})
    facts = _collect([f for f in findings if f.role is not Role.GLOBALS], modules, views or {})
    _fold(facts)
    result = _compiled_in([f for f in findings if f.role is Role.GLOBALS])
    for subject in sorted(facts, key=lambda s: (s.module, s.name or "", s.key or "")):
        if not _importable(subject):
            continue  # a registry key is downstream text: "x\n- id: y" is no module
        data = facts[subject]
        unsure = not (views or {}).get(subject.upstream) and subject.key in ("class", "function")
        note = _REEXPORT_NOTE if unsure and "." not in subject.module else ""
        ordered = sorted(data.values.items(), key=lambda kv: _ORDER[kv[0]])
        proposals = [
            Proposal(subject, assertion, list(group), "error", _sorted_uses(group.values()), note)
            for assertion, vals in ordered
            if assertion not in _ONE_EACH
            and not (subject.alternatives and assertion in _EACH_APART)
            for group in _by_gate(vals)
        ]
        proposals += [  # a check binds one shape; a text may be in either alternative
            Proposal(subject, assertion, [value], "error", _sorted_uses([uses]), note)
            for assertion, vals in ordered
            if assertion in _ONE_EACH or (subject.alternatives and assertion in _EACH_APART)
            for value, uses in vals.items()
        ]
        hard = [use for use in data.exists if not use.tolerated]
        if proposals and hard and _severity(proposals[0].uses) == "info":
            # what the client may do without (a text its fallback handles) beside a hard use
            # of the subject: the subject's existence is a check of its own
            exists = Proposal(subject, None, [], "error", _sorted_uses([data.exists]), note)
            proposals.insert(0, exists)
        elif proposals:
            proposals[0].uses = _sorted_uses([data.exists, proposals[0].uses])
        else:
            proposals = [Proposal(subject, None, [], "error", _sorted_uses([data.exists]), note)]
        for proposal in proposals:
            proposal.severity = _severity(proposal.uses)
            proposal.gate = _gate(proposal.uses)
        result.setdefault(subject.upstream, []).extend(proposals)
    for checks in result.values():
        checks.sort(key=lambda p: (p.subject.module, p.subject.name or "", p.subject.key or ""))
    return result


def _compiled_in(findings: list[Use]) -> dict[str, list[Proposal]]:
    """`globals_bound` of each function whose source the client compiles with a module's
    names (namespaces.py): placed on that module as found, not where the function is defined
    (what the check asks is whether that module binds what the function reads). A name is
    given where every site imports it in the text it adds."""
    by_subject: dict[ProposedSubject, list[Use]] = {}
    for finding in findings:
        ref = finding.ref
        module, function = ".".join(ref.parts[: ref.known]), ".".join(ref.parts[ref.known :])
        by_subject.setdefault(ProposedSubject(module, "function", function), []).append(finding)
    result: dict[str, list[Proposal]] = {}
    for subject, uses in by_subject.items():
        if not _importable(subject):
            continue
        given = set.intersection(*(set(use.items) for use in uses))
        proposal = Proposal(subject, "globals_bound", sorted(given), _severity(uses), uses)
        proposal.uses, proposal.gate = _sorted_uses([uses]), _gate(uses)
        result.setdefault(subject.upstream, []).append(proposal)
    return result


def _sorted_uses(groups: Iterable[list[Use]]) -> list[Use]:
    unique = {f: None for group in groups for f in group}
    return sorted(unique, key=lambda f: (f.file, f.line, f.role.value))


def _compact(places: dict[str, list[str]]) -> str:
    """Every place, the lines of one file together, the names passed said once for the lines
    that pass the same ones: `a.py:3,9, b.py:4,8 (x, y),6 (x)`."""
    lines: dict[str, dict[tuple[str, ...], list[str]]] = {}
    for where, items in places.items():
        file, _, line = where.rpartition(":")
        lines.setdefault(file, {}).setdefault(tuple(items), []).append(line)
    return ", ".join(
        f"{file}:"
        + ",".join(
            ",".join(numbers) + (f" ({', '.join(i)})" if i else "") for i, numbers in by.items()
        )
        for file, by in lines.items()
    )


def describe(uses: list[Use], guarded: bool) -> str:
    """The `why` of a check: each kind of use with its downstream locations."""
    by_phrase: dict[Role, dict[str, list[str]]] = {}
    wrapped = {use.where for use in uses if use.role is Role.WRAPPER}
    for use in uses:
        if use.role is Role.PATCH and use.where in wrapped:
            continue
        role = Role.KWARGS if use.role is Role.CALL else use.role  # said as a keyword call
        items = by_phrase.setdefault(role, {}).setdefault(use.where, [])
        if use.role in (*_CALLS, Role.WRAPPER):
            shown = use.items[1:] if use.role is Role.CALL else use.items
            items.extend(i for i in shown if i not in items)
    parts = [
        f"{_PHRASES[role]} {_compact(by_phrase[role])}"
        for role in sorted(by_phrase, key=list(_PHRASES).index)
    ]
    text = "; ".join(parts)
    if guarded:
        text += " (severity info: the downstream tolerates its absence)"
    return text
