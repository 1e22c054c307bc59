"""What a failing check's subject became on the release it first failed on, and the unified
diff of that subject between the last release it held on and that one.

- a missing text (`contains`) or pattern (`matches`): the closest logical lines of the subject's
  source (difflib's ratio, the best one or two above a cutoff), or none when nothing is alike;
- a missing class, function, method or symbol: where a definition of that name lives now in the
  release (top-level, or in a class of any module), the likeliest modules read first;
- a missing parameter: the parameters the release added, the likely rename.

Bounded in cost (where a name went is searched cheapest first, canary.engine.whereabouts; at
most `MAX_LINES` lines are compared) and deterministic (candidates in a fixed order, ties broken
by name).
"""

from __future__ import annotations

import dataclasses
import difflib
import io
import re
import tokenize
from dataclasses import dataclass

from canary.analysis import FunctionInfo, ModuleInfo
from canary.analysis.bases import ClassRef, Hierarchy
from canary.analysis.lines import Lines
from canary.engine import bounded_regex
from canary.engine.contracts import Verdict, defined, evaluate
from canary.engine.judge import VersionRun
from canary.engine.outcomes import Became, Place
from canary.engine.whereabouts import dotted_name, find_definitions, moved_text, pointers
from canary.matrix.model import Check, ClassSubject, Contract, FunctionSubject, SymbolSubject

MAX_LINES = 5000
MAX_LINE_CHARS = 400
CLOSEST_CUTOFF = 0.5
#: a second line is shown only when it is about as close as the best
RUNNER_UP_WITHIN = 0.05
#: the diff a result carries; `canary explain` shows up to EXPLAIN_DIFF_LINES
DIFF_LINES = 400
EXPLAIN_DIFF_LINES = 20_000


@dataclass(frozen=True)
class SubjectText:
    """The function, class or module a check reads, on one version."""

    name: str  # "GRPOTrainer.__init__", "class KTOTrainer", "module trl.core"
    path: str
    start: int  # its first line in `path`
    text: str
    function: FunctionInfo | None = None


@dataclass(frozen=True)
class Explanation:
    """What a check's subject became, its two sides, and their diff."""

    became: Became | None
    old: SubjectText | None
    new: SubjectText | None
    diff: str
    #: what the old side's release said of a name it then removed (canary.engine.advice);
    #: sought by `canary explain` alone
    advice: tuple[Place, ...] = ()


def explain(
    contract: Contract,
    old: VersionRun,
    new: VersionRun,
    diff_lines: int = DIFF_LINES,
) -> Explanation:
    """The contract (the alternative that held on `old`) on the version it first failed on.

    Raises SourceError or ParseError when a module either side needs cannot be read."""
    before = subject_of(contract, old.hierarchy)
    after = subject_of(contract, new.hierarchy)
    became, moved = _became(contract, old, new, before, after)
    after = moved or after
    diff = unified_diff(before, after, old.target.label, new.target.label, diff_lines)
    return Explanation(became, before, after, diff)


def held_contract(check: Check, run: VersionRun) -> Contract:
    """The check's contract, or the first of its alternatives that holds on `run`'s version
    (the one the check relied on before it broke)."""
    if check.contract is not None:
        return check.contract
    for alternative in check.any_of:
        if evaluate(alternative, run.hierarchy, run.target.version).holds:
            return alternative
    return check.any_of[0]


def subject_of(contract: Contract, hierarchy: Hierarchy) -> SubjectText | None:
    """The check's subject, None when the module or the name is not there."""
    namespace = hierarchy.namespace
    module = namespace.lookup(contract.module)
    if module is None:
        return None
    wanted = contract.subject
    if isinstance(wanted, SymbolSubject):
        found = namespace.find(module, wanted.name)
        if isinstance(found, str):
            return None
        if not found.bindings:
            return _whole(found.module)
        return _span(
            found.module, found.bindings[0].span.start, found.bindings[0].span.end, wanted.name
        )
    if isinstance(wanted, ClassSubject):
        variants = module.classes.get(wanted.name)
        if not variants:
            return None
        return _span(module, variants[0].span.start, variants[0].span.end, f"class {wanted.name}")
    if isinstance(wanted, FunctionSubject):
        found_fn = _function(module, contract, wanted.name, hierarchy)
        if found_fn is None:
            return None
        where, fn = found_fn
        subject = _span(where, fn.span.start, fn.span.end, wanted.name)
        return SubjectText(subject.name, subject.path, subject.start, subject.text, fn)
    return _whole(module)


def _whole(module: ModuleInfo) -> SubjectText:
    return SubjectText(f"module {module.name}", module.path, 1, module.text)


def _span(module: ModuleInfo, start: int, end: int, name: str) -> SubjectText:
    return SubjectText(name, module.path, start, Lines(module.text).segment(start, end))


def _function(
    module: ModuleInfo, contract: Contract, name: str, hierarchy: Hierarchy
) -> tuple[ModuleInfo, FunctionInfo] | None:
    """The function or method the check reads, found as the check finds it."""
    namespace = hierarchy.namespace
    if "." not in name:
        found = defined(module, name, contract, namespace, "functions")
        return None if isinstance(found, Verdict) else (found[0], found[1][0])
    class_name, method = name.split(".", 1)
    found_class = defined(module, class_name, contract, namespace, "classes")
    if isinstance(found_class, Verdict):
        return None
    where, classes = found_class
    own = classes[0].methods.get(method)
    if own:
        return where, own[0]
    inherited = hierarchy.method(ClassRef(where, tuple(classes)), method)
    if inherited.owner is None or not inherited.functions:
        return None
    return inherited.owner.module, inherited.functions[0]


def _became(
    contract: Contract,
    old: VersionRun,
    new: VersionRun,
    before: SubjectText | None,
    after: SubjectText | None,
) -> tuple[Became | None, SubjectText | None]:
    """What the subject became, and where it went when it moved (the diff's new side)."""
    if after is None:
        name = missing_name(contract, new.hierarchy)
        if name is None:
            return _moved_module(contract, new.hierarchy), None
        origins = _origins(contract, old, name)
        places, searched = find_definitions(new, name, contract.module, origins=origins)
        moved = _moved_subject(new, places[0]) if places else None
        return Became("definition", places, searched), moved
    method = missing_method(contract, new.hierarchy)
    if method is not None:
        places, searched = find_definitions(new, method, contract.module)
        moved = _moved_subject(new, places[0]) if places else None
        return Became("definition", places, searched), moved
    missing = [p for p in contract.params if after.function and p not in after.function.names]
    if missing:
        return _added_parameters(before, after), None
    text = _missing_text(contract, after.text)
    if text is None:
        return None, None
    places = closest_lines(text, after)
    if places:
        return Became("line", places), None
    return _moved_with_text(contract, new, after) or (Became("line", ()), None)


def _moved_with_text(
    contract: Contract, new: VersionRun, after: SubjectText
) -> tuple[Became, SubjectText] | None:
    """A subject still there in name (a thin subclass left behind, a re-export stub) whose
    text went with a definition of the same name in another module: that definition."""
    name = contract.subject.name.split(".")[0] if contract.subject is not None else ""
    if not name:
        return None
    places, searched = find_definitions(new, name, contract.module, skip=after.path)
    for place in places:
        there = dataclasses.replace(contract, module=dotted_name(place.path))
        subject = subject_of(there, new.hierarchy)
        if subject is not None and _missing_text(contract, subject.text) is None:
            at = Place(
                f"{there.module}.{subject.name.removeprefix('class ')}", subject.path, subject.start
            )
            return Became("definition", (at,), searched), subject
    return None


def _origins(contract: Contract, old: VersionRun, name: str) -> list[str]:
    """The modules the last release that had `name` imported it from into the check's module
    (a module that imports it still is likely to, from where it went)."""
    module = old.hierarchy.namespace.lookup(contract.module)
    return pointers(module, name) if module is not None else []


def missing_name(contract: Contract, hierarchy: Hierarchy) -> str | None:
    """The name to look for elsewhere: the subject's, or the method's when the class is there
    (not a dunder: every class has one of those)."""
    wanted = contract.subject
    if isinstance(wanted, SymbolSubject | ClassSubject):
        return wanted.name
    if wanted is None:
        return None
    class_name, _, method = wanted.name.rpartition(".")
    module = hierarchy.namespace.lookup(contract.module)
    if class_name and module is not None and module.classes.get(class_name):
        return None if method.startswith("__") and method.endswith("__") else method
    return class_name or method


def gone_name(contract: Contract, run: VersionRun) -> str | None:
    """The name the release `run` no longer has where the check looks: the subject (its
    class when the module is gone too; the module's dotted name for a check of a module
    alone), a class's method, or a parameter; None when the names are all there (a text
    went missing)."""
    namespace = run.hierarchy.namespace
    if namespace.lookup(contract.module) is None:  # upstream speaks of the class, not its file
        subject = contract.subject
        return subject.name.split(".")[0] if subject is not None else contract.module
    after = subject_of(contract, run.hierarchy)
    if after is None:
        return missing_name(contract, run.hierarchy)
    method = missing_method(contract, run.hierarchy)
    if method is not None:
        return method
    names = after.function.names if after.function else ()
    return next((p for p in contract.params if p not in names), None)


def missing_method(contract: Contract, hierarchy: Hierarchy) -> str | None:
    """The first of a class check's `methods` its class neither defines nor inherits (nor
    defines in its own body, with `own`)."""
    wanted = contract.subject
    module = hierarchy.namespace.lookup(contract.module)
    if not isinstance(wanted, ClassSubject) or module is None:
        return None
    classes = module.classes.get(wanted.name) or []
    ref = ClassRef(module, tuple(classes))
    for method in contract.methods:
        if any(method in cls.methods for cls in classes):
            continue
        if contract.own or hierarchy.method(ref, method).owner is None:
            return method
    return None


def _moved_module(contract: Contract, hierarchy: Hierarchy) -> Became | None:
    """A module that is gone: the module of the same name elsewhere (the did-you-mean's)."""
    namespace = hierarchy.namespace
    if namespace.lookup(contract.module) is not None:
        return None
    similar = namespace.similar_modules(contract.module)
    found = namespace.lookup(similar[0]) if similar else None
    if found is None:
        return None
    return Became("definition", (Place(found.name, found.path, 1),), len(namespace.module_names()))


def _missing_text(contract: Contract, source: str) -> str | None:
    for text in contract.contains:
        if text not in source:
            return text
    for pattern in contract.matches:
        if not bounded_regex.search(pattern, source):
            return re.sub(r"\\(.)", r"\1", pattern.pattern)
    return None


def _added_parameters(before: SubjectText | None, after: SubjectText) -> Became:
    fn = after.function
    assert fn is not None
    old = set(before.function.names) if before and before.function else set()
    lines = after.text.split("\n")
    places = []
    for name in fn.names:
        if name in old:
            continue
        pattern = re.compile(rf"\b{re.escape(name)}\s*[:=,)]")
        at = next((i for i, line in enumerate(lines) if pattern.search(line)), 0)
        places.append(Place(name, after.path, after.start + at))
    return Became("parameter", tuple(places))


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(0-based first line, text with its continuation lines joined) per statement line:
    a call written over five lines is one line to compare. Physical lines if the text does
    not tokenize (a class body cut out of its module may not)."""
    physical = text.split("\n")
    try:
        out = []
        start = None
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT):
                continue
            if token.type == tokenize.ENDMARKER:
                break
            if start is None:
                start = token.start[0] - 1
            if token.type == tokenize.NEWLINE:
                end = token.end[0]
                parts = (p.strip().removesuffix("\\").strip() for p in physical[start:end])
                out.append((start, " ".join(parts)))
                start = None
        return out
    except (tokenize.TokenError, SyntaxError):
        return [(i, line.strip()) for i, line in enumerate(physical) if line.strip()]


#: a line as difflib compares it: words and runs of punctuation (a character ratio prefers
#: any short line that shares a long name to the line that was rewritten)
_TOKEN = re.compile(r"\w+|[^\w\s]+")


def closest_lines(text: str, subject: SubjectText, count: int = 2) -> tuple[Place, ...]:
    """The `count` logical lines of the subject most like `text` (difflib's ratio over their
    tokens, at least CLOSEST_CUTOFF), best first, ties by line."""
    matcher: difflib.SequenceMatcher[str] = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(_TOKEN.findall(text[:MAX_LINE_CHARS]))
    scored = []
    for at, line in logical_lines(subject.text)[:MAX_LINES]:
        matcher.set_seq1(_TOKEN.findall(line[:MAX_LINE_CHARS]))
        if matcher.real_quick_ratio() < CLOSEST_CUTOFF or matcher.quick_ratio() < CLOSEST_CUTOFF:
            continue
        ratio = matcher.ratio()
        if ratio >= CLOSEST_CUTOFF:
            scored.append((-ratio, at, line))
    scored.sort()
    kept = [item for item in scored[:count] if item[0] <= scored[0][0] + RUNNER_UP_WITHIN]
    return tuple(Place(line, subject.path, subject.start + at) for _, at, line in kept)


def _moved_subject(run: VersionRun, place: Place) -> SubjectText | None:
    """The definition a missing name moved to, as the new side of the diff."""
    found = moved_text(run, place)
    if found is None:
        return None
    info, span = found
    return _span(info, span.start, span.end, place.text)


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def unified_diff(
    old: SubjectText | None, new: SubjectText | None, old_label: str, new_label: str, limit: int
) -> str:
    """The subject's unified diff with the upstream paths and real line numbers of both sides;
    at most `limit` lines, then a line saying how many were cut."""
    a = old.text.splitlines() if old else []
    b = new.text.splitlines() if new else []
    if a == b:
        return ""
    head_a = f"{old.path} ({old_label})" if old else f"/dev/null ({old_label})"
    head_b = f"{new.path} ({new_label})" if new else f"/dev/null ({new_label})"
    shift_a = old.start - 1 if old else 0
    shift_b = new.start - 1 if new else 0

    def shifted(line: str) -> str:
        match = _HUNK.match(line)
        if match is None:
            return line
        first_a, len_a, first_b, len_b = match.groups()
        first_a = str(int(first_a) + shift_a) if a else first_a
        first_b = str(int(first_b) + shift_b) if b else first_b
        return f"@@ -{first_a}{len_a or ''} +{first_b}{len_b or ''} @@{line[match.end() :]}"

    lines = [shifted(line) for line in difflib.unified_diff(a, b, head_a, head_b, n=3, lineterm="")]
    if len(lines) > limit:
        cut = len(lines) - limit
        lines = [*lines[:limit], f"... {cut} more diff lines cut"]
    return "\n".join(lines)
