"""Texts a rewrite seeks in the source of a class scan knows only by a pattern, placed on the
classes of the upstream that hold them.

zoo reaches the modeling module of whatever model it is given at run time,
`model_location = f"transformers.models.{model_type}.modeling_{model_type}"`, then any class
of it, `eval(f"{model_location}.{module}")`, and rewrites `inspect.getsource(cls.forward)`
with `.replace` pairs. The path is a pattern (imports.py: `transformers.models.{?}.
modeling_{?}.{?}`); what such a `.replace` seeks is looked for, byte for byte, in the files of
a release that match the pattern, and proposed on each class whose method holds it: the
newest release read that has it, else the lowest, else the releases between (newest of each
minor series first), as a method that lived only mid-range is. A text no release read holds
is said at the head of the matrix as a rewrite not placed.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping

from canary.analysis import ModuleInfo, ParseError
from canary.engine.judge import VersionRun
from canary.scan.downstream.findings import Role, Use, wild
from canary.scan.downstream.imports import Ref
from canary.scan.downstream.spelled import WILD
from canary.scan.upstream.places import Places
from canary.scan.upstream.releases import Reading
from canary.sources.tree import SourceError

# one piece of a module name a pattern cannot spell
_PIECE = r"[A-Za-z0-9_]+"
# remembered for a text more modules hold than asked (no module name is this)
_CROWDED = "*"


@dataclasses.dataclass(frozen=True)
class _Sought:
    """One text sought in `member` (a method name; "" for the class's own source) of any
    class of the modules `files` matches."""

    files: str  # a regex over the release's file paths
    member: str
    text: str


def _sought(finding: Use) -> _Sought | None:
    """What a finding on a pattern seeks; None when its path is no module pattern then any
    class (then at most one method)."""
    modules, rest = finding.ref.parts[: finding.ref.known], finding.ref.parts[finding.ref.known :]
    if not finding.items or not rest or rest[0] != WILD or len(rest) > 2:
        return None
    if any(WILD in part for part in rest[1:]) or WILD in modules[0]:
        return None
    pieces = [_PIECE.join(re.escape(p) for p in part.split(WILD)) for part in modules]
    files = "/".join(pieces) + r"(?:\.py|/__init__\.py)"
    return _Sought(files, rest[1] if len(rest) > 1 else "", finding.items[0])


def _module_name(path: str) -> str:
    return path.removesuffix("/__init__.py").removesuffix(".py").replace("/", ".")


def _holding(run: VersionRun, sought: Iterable[_Sought]) -> dict[_Sought, list[str]] | None:
    """The modules of this release holding each text, among the files its pattern matches;
    None when the release cannot be read (nothing to remember)."""
    tree = run.tree
    if isinstance(tree, SourceError):
        return None
    files = tree.files()
    if files is None:
        return None
    wanted = {s: re.compile(s.files) for s in sought}
    matching = sorted({f for f in files for rx in wanted.values() if rx.fullmatch(f)})
    try:
        tree.prefetch(matching)
        data = {path: tree.read(path) or b"" for path in matching}
    except SourceError:
        return None
    found: dict[_Sought, list[str]] = {}
    for s, rx in wanted.items():
        text = s.text.encode()
        held = [_module_name(p) for p, d in data.items() if rx.fullmatch(p) and text in d]
        if held:
            found[s] = held
    return found


def _classes(info: ModuleInfo, sought: _Sought) -> list[str]:
    """The classes of the module whose `member` (or own source) holds the text."""
    found = []
    for name, classes in info.classes.items():
        for cls in classes:
            spans = [f.span for f in cls.methods.get(sought.member, [])] if sought.member else []
            if any(sought.text in info.segment(span) for span in spans or [cls.span]):
                found.append(name)
                break
    return found


def _placed(run: VersionRun, sought: _Sought, modules: list[str]) -> list[tuple[str, str]]:
    """(module, class) of each class holding the text on this release."""
    places = []
    for module in modules:
        try:
            info = run.module(module)
        except (SourceError, ParseError):
            continue
        if info is not None:
            places += [(module, name) for name in _classes(info, sought)]
    return places


def _walk(reading: Reading, pending: set[_Sought]) -> dict[_Sought, list[tuple[str, str]]]:
    """Each text's classes on the first release of the walk where any holds it."""
    placed: dict[_Sought, list[tuple[str, str]]] = {}
    for run in reading.walked() if pending else ():
        memo = reading.remembered(run.target.label) if reading.remembered else Places()
        for sought, places in _found(run, pending, memo).items():
            if places:
                placed[sought] = places
                pending.discard(sought)
        memo.keep()
        if not pending:  # the next release is not even opened
            break
    return placed


def _found(
    run: VersionRun, pending: set[_Sought], memo: Places, most: int | None = None
) -> dict[_Sought, list[tuple[str, str]]]:
    """(module, class) of each class holding each text on this release, as remembered for the
    release file (`memo`), else searched (and remembered, unless the release was unreadable);
    none for a text more than `most` modules hold (their classes are not even read)."""
    keys = {s: json.dumps([s.files, s.member, s.text, most]) for s in pending}
    if most is None:  # as remembered before `most` existed
        keys = {s: json.dumps([s.files, s.member, s.text]) for s in pending}
    unknown = [s for s in pending if keys[s] not in memo.known]
    holding = _holding(run, unknown) if unknown else {}
    if holding is not None:  # else unreadable: nothing to remember
        for sought in unknown:
            modules = holding.get(sought, [])
            crowded = most is not None and len(modules) > most
            places = [(_CROWDED, "")] if crowded else _placed(run, sought, modules)
            memo.known[keys[sought]] = "\n".join(f"{module}:{name}" for module, name in places)
    found = {s: memo.known.get(keys[s], "") for s in pending}
    return {s: [_pair(line) for line in text.split("\n")] for s, text in found.items() if text}


def _pair(line: str) -> tuple[str, str]:
    module, _, name = line.partition(":")
    return module, name


def held_on_newest(
    reading: Reading, files: str, texts: Iterable[str], most: int
) -> dict[str, list[tuple[str, str]]]:
    """(module, class) of each class whose own source holds each text on the newest release
    read, among its files matching the regex `files`, for a text at most `most` modules hold
    (remembered per release, as a pattern's texts are); [] for one more modules hold."""
    run = reading.runs[0] if reading.runs else None
    if run is None:
        return {}
    memo = reading.remembered(run.target.label) if reading.remembered else Places()
    found = _found(run, {_Sought(files, "", text) for text in texts}, memo, most)
    memo.keep()
    return {
        sought.text: [] if places[0][0] == _CROWDED else places for sought, places in found.items()
    }


def placed_wild(findings: list[Use], readings: Mapping[str, Reading]) -> list[Use]:
    """`findings` with each text sought on a pattern proposed on every class holding it, or,
    held by no release read, listed as a rewrite not placed."""
    wanted = {id(f): _sought(f) for f in findings if wild(f.ref)}
    by_upstream: dict[str, set[_Sought]] = {}
    for finding in findings:
        sought = wanted.get(id(finding))
        if sought is not None and finding.ref.root in readings:
            by_upstream.setdefault(finding.ref.root, set()).add(sought)
    placed: dict[_Sought, list[tuple[str, str]]] = {}
    for upstream, pending in by_upstream.items():
        placed |= _walk(readings[upstream], pending)
    result = []
    for finding in findings:
        if not wild(finding.ref):
            result.append(finding)
            continue
        sought = wanted[id(finding)]
        places = placed.get(sought, []) if sought is not None else []
        result += [_on(finding, module, name, sought) for module, name in places if sought]
        if not places:
            result.append(dataclasses.replace(finding, role=Role.UNPLACED))
    return result


def _on(finding: Use, module: str, name: str, sought: _Sought) -> Use:
    parts = (*module.split("."), name, *([sought.member] if sought.member else []))
    return dataclasses.replace(finding, ref=Ref(parts, len(module.split("."))))
