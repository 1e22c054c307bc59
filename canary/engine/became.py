"""What a failing check's subject became on the release it first failed on, and the unified
diff of that subject between the last release it held on and that one.

- a missing text (`contains`) or pattern (`matches`): the closest logical lines of the subject's
  source (difflib's ratio, the best one or two above a cutoff), or none when nothing is alike;
- a missing class, function, method or symbol: where a definition of that name lives now in the
  release (top-level, or in a class of any module), the likeliest modules read first;
- a missing parameter: the parameters the release added, the likely rename.

Bounded in cost (a search reads at most `MAX_SEARCH_MODULES` modules and `MAX_SEARCH_BYTES`,
and a file is parsed only when its text defines the name; at most `MAX_LINES` lines are
compared) and deterministic (candidates in a fixed order, ties broken by name).
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

from canary.analysis import ClassInfo, FunctionInfo, ModuleInfo, ParseError, Span
from canary.analysis.bases import ClassRef, Hierarchy
from canary.analysis.lines import Lines
from canary.engine import bounded_regex
from canary.engine.contracts import Verdict, defined, evaluate
from canary.engine.judge import VersionRun
from canary.engine.outcomes import Became, Place
from canary.matrix.model import Check, ClassSubject, Contract, FunctionSubject, SymbolSubject
from canary.sources.tree import MemberRefused, SourceError, Tree

MAX_SEARCH_MODULES = 800
MAX_SEARCH_BYTES = 24 * 1024 * 1024
MAX_LINES = 5000
MAX_LINE_CHARS = 400
CLOSEST_CUTOFF = 0.5
#: a second line is shown only when it is about as close as the best
RUNNER_UP_WITHIN = 0.05
#: the diff a result carries; `canary explain` shows up to EXPLAIN_DIFF_LINES
DIFF_LINES = 400
EXPLAIN_DIFF_LINES = 20_000
PREFETCH_CHUNK = 64


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
    became, moved = _became(contract, new, before, after)
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
    contract: Contract, new: VersionRun, before: SubjectText | None, after: SubjectText | None
) -> tuple[Became | None, SubjectText | None]:
    """What the subject became, and where it went when it moved (the diff's new side)."""
    if after is None:
        name = missing_name(contract, new.hierarchy)
        if name is None:
            return _moved_module(contract, new.hierarchy), None
        places, searched = find_definitions(new, name, contract.module)
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
        there = dataclasses.replace(contract, module=_module_name(place.path))
        subject = subject_of(there, new.hierarchy)
        if subject is not None and _missing_text(contract, subject.text) is None:
            at = Place(
                f"{there.module}.{subject.name.removeprefix('class ')}", subject.path, subject.start
            )
            return Became("definition", (at,), searched), subject
    return None


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


def _definition_pattern(name: str) -> re.Pattern[bytes]:
    word = re.escape(name.encode())
    return re.compile(
        rb"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+" + word + rb"\b|^" + word + rb"[ \t]*[:=]",
        re.MULTILINE,
    )


def _ranked(paths: list[str], name: str, module: str) -> list[list[str]]:
    """The release's modules in groups, likeliest first: the same file name as the module
    the check names (a module that moved), a file named like the name (`kto_trainer` for
    KTOTrainer), the rest of the package; each group in path order."""
    leaf = module.rsplit(".", 1)[-1]
    key = name.lower().replace("_", "")
    groups: list[list[str]] = [[], [], []]
    for path in sorted(paths):
        stem = path.rsplit("/", 1)[-1].removesuffix(".py")
        if stem == "__init__":
            stem = path.rsplit("/", 2)[-2] if "/" in path else stem
        plain = stem.replace("_", "")
        if stem == leaf:
            groups[0].append(path)
        elif plain and (plain in key or key in plain):
            groups[1].append(path)
        else:
            groups[2].append(path)
    return groups


def _module_name(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")


def find_definitions(
    run: VersionRun, name: str, module: str, skip: str = ""
) -> tuple[tuple[Place, ...], int]:
    """Where `name` is defined in the version (`module.Class.name` for a method), and how many
    modules were read: the first group of `_ranked` with a definition answers, and in the
    last (every other module, hundreds in a large upstream) the first module with one (the
    file `skip` is not read)."""
    tree = opened(run)
    paths = [p for p in tree.files() or () if p.endswith(".py") and p != skip]
    if not paths:
        paths = [module.replace(".", "/") + ".py", module.replace(".", "/") + "/__init__.py"]
    pattern, word = _definition_pattern(name), name.encode()
    searched, budget = 0, MAX_SEARCH_BYTES
    groups = _ranked(paths, name, module)
    for group in groups:
        found: list[Place] = []
        for path, data in read_files(tree, group):
            searched += 1
            budget -= len(data)
            if word in data and pattern.search(data):  # the plain test first: far cheaper
                found += _definitions_in(run, path, data, name)
            if searched >= MAX_SEARCH_MODULES or budget <= 0 or (found and group is groups[-1]):
                return tuple(found), searched
        if found:
            return tuple(found), searched
    return (), searched


def opened(run: VersionRun) -> Tree:
    """The release's tree. Only a failing check is explained, and a release whose source
    could not be opened fails none (its checks are errors), so an unopened one raises."""
    if isinstance(run.tree, SourceError):
        raise run.tree
    return run.tree


def read_files(tree: Tree, paths: list[str]) -> Iterator[tuple[str, bytes]]:
    """Each file's bytes, fetched in chunks where the source can (a wheel merges neighbours).
    A file the source refuses (a link, a member over the cap) is passed by: one such member
    must not cost the story of the whole release; a fault of fetching still ends it."""
    for at in range(0, len(paths), PREFETCH_CHUNK):
        chunk = paths[at : at + PREFETCH_CHUNK]
        if len(chunk) > 1:
            with contextlib.suppress(MemberRefused):  # then read one by one
                tree.prefetch(chunk)
        for path in chunk:
            try:
                data = tree.read(path)
            except MemberRefused:
                continue
            if data is not None:
                yield path, data


def _definitions_in(run: VersionRun, path: str, data: bytes, name: str) -> list[Place]:
    """Top-level and class-level definitions of `name` in one file, by line."""
    dotted = _module_name(path)
    try:
        info = run.cache.get(data, dotted, path, is_package=path.endswith("__init__.py"))
    except ParseError:
        return []
    places = [Place(f"{dotted}.{name}", path, span.start) for span in _spans(info, name)]
    for binding in info.bindings.get(name, []):
        if binding.kind == "assign":
            places.append(Place(f"{dotted}.{name}", path, binding.span.start))
    for cls in _classes(info):
        for fn in cls.methods.get(name, []):
            places.append(Place(f"{dotted}.{cls.name}.{name}", path, fn.span.start))
    return sorted(places, key=lambda p: p.line)


def _spans(info: ModuleInfo, name: str) -> list[Span]:
    """Where the module's top-level classes, then functions, named `name` are defined."""
    classes = [cls.span for cls in info.classes.get(name, [])]
    return classes + [fn.span for fn in info.functions.get(name, [])]


def _classes(info: ModuleInfo) -> list[ClassInfo]:
    return [cls for variants in info.classes.values() for cls in variants]


def _moved_subject(run: VersionRun, place: Place) -> SubjectText | None:
    """The definition a missing name moved to, as the new side of the diff."""
    data = opened(run).read(place.path)
    if data is None:
        return None
    dotted = _module_name(place.path)
    info = run.cache.get(data, dotted, place.path, is_package=place.path.endswith("__init__.py"))
    name = place.text.rsplit(".", 1)[-1]
    spans = [span for span in _spans(info, name) if span.start == place.line] + [
        fn.span
        for cls in _classes(info)
        for fn in cls.methods.get(name, [])
        if fn.span.start == place.line
    ]
    if not spans:
        return None
    return _span(info, spans[0].start, spans[0].end, place.text)


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
