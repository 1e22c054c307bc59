"""Where a name missing from a check's module is defined now, in the release it went missing
from, searched cheapest first: telling a failure's story should cost a fraction of judging it,
and reading the release module after module cost more than twice the judging's bytes.

1. the release's file list: the file of the same name as the check's module (a module that
   moved), then files named like the name (`kto_trainer` for KTOTrainer);
2. what is already read: where the last release that had the name imported it from, the
   modules the story's lookups loaded and the packages above the check's module; each of
   them that binds the name says where it comes from (an import, a lazy module's table), and
   those modules are read in turn, re-export after re-export;
3. only when both fail, whole modules: the rest of the release, nearest the check's module
   first (its folder, its subfolders, then its parent's), the first that defines the name
   answering, within MAX_FALLBACK_BYTES (a name gone from a release of thousands of modules
   is not worth reading them all for: those above find where a name went).

Deterministic (candidates in a fixed order) and bounded (MAX_SEARCH_MODULES modules, and a
file of the fallback is parsed only when its text defines the name).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator

from canary.analysis import ClassInfo, ModuleInfo, ParseError, Span
from canary.engine.judge import VersionRun
from canary.engine.outcomes import Place
from canary.sources.tree import MemberRefused, SourceError, Tree

MAX_SEARCH_MODULES = 800
#: what `canary explain`'s search for upstream's own word may read (canary.engine.advice)
MAX_SEARCH_BYTES = 24 * 1024 * 1024
#: what the last step, module after module, may read (uncompressed): a package's folder
MAX_FALLBACK_BYTES = 128 * 1024
#: modules read following what already-read modules say of the name
MAX_POINTED = 32
PREFETCH_CHUNK = 64
FIRST_CHUNK = 2


def find_definitions(
    run: VersionRun, name: str, module: str, skip: str = "", origins: Iterable[str] = ()
) -> tuple[tuple[Place, ...], int]:
    """Where `name` is defined in the version (`module.Class.name` for a method), and how many
    modules were read for it; `origins` are the modules the last release that had the name
    imported it from (the file `skip` is never an answer)."""
    tree = opened(run)
    paths = [p for p in tree.files() or () if p.endswith(".py") and p != skip]
    if not paths:
        paths = [module.replace(".", "/") + ".py", module.replace(".", "/") + "/__init__.py"]
    search = _Search(run, tree, name, skip)
    *named, rest = _ranked(paths, name, module)
    for group in named:
        found = search.files(group, MAX_SEARCH_BYTES)
        if found:
            return found, search.searched
    found = search.pointed([*origins, *_already_read(run, name, module)])
    if found:
        return found, search.searched
    rest = sorted((p for p in rest if p not in search.read), key=_nearest(module))
    return search.files(rest, MAX_FALLBACK_BYTES, first=True), search.searched


class _Search:
    """One name's search in one release: what it read, and how many modules."""

    def __init__(self, run: VersionRun, tree: Tree, name: str, skip: str) -> None:
        self.run = run
        self.tree = tree
        self.name = name
        self.skip = skip
        self.searched = 0
        self.read: set[str] = set()
        self._pattern = _definition_pattern(name)

    def files(self, paths: list[str], budget: int, first: bool = False) -> tuple[Place, ...]:
        """Definitions in these files, read whole until `budget` bytes are read: all of them,
        or (`first`) those of the first file with one."""
        found: list[Place] = []
        word = self.name.encode()
        for path, data in read_files(self.tree, paths):
            self.searched += 1
            self.read.add(path)
            budget -= len(data)
            if word in data and self._pattern.search(data):  # the plain test first: cheaper
                found += _definitions_in(self.run, path, data, self.name)
            if self.searched >= MAX_SEARCH_MODULES or budget <= 0 or (found and first):
                break
        return tuple(found)

    def pointed(self, start: list[str]) -> tuple[Place, ...]:
        """Definitions in the first of these modules (by dotted name) that has one, following
        where each that binds the name by import (or serves it lazily) says it comes from."""
        queue, seen = list(start), set[str]()
        while queue and len(seen) < MAX_POINTED:
            dotted = queue.pop(0)
            if dotted in seen:
                continue
            seen.add(dotted)
            try:
                info = self.run.module(dotted)
            except (SourceError, ParseError):
                continue
            if info is None or info.path == self.skip:
                continue
            if info.path not in self.read:
                self.searched += 1
                self.read.add(info.path)
            found = _defined(info, self.name)
            if found:
                return tuple(found)
            queue += pointers(info, self.name)
        return ()


def pointers(info: ModuleInfo, name: str) -> list[str]:
    """The modules `info` says `name` comes from: its imports of the name (at module level,
    for type checkers too), its lazy module's table."""
    out = [
        binding.origin.rpartition(".")[0]
        for binding in info.bindings.get(name, [])
        if binding.kind == "import" and binding.origin and "." in binding.origin
    ]
    if info.lazy is not None:
        out += [origin.partition(":")[0] for origin in info.lazy.names.get(name, ())]
    return out


def _already_read(run: VersionRun, name: str, module: str) -> list[str]:
    """Modules of the release looked up already that mention `name`: the packages above the
    check's module (the nearest first; the judging looks them up for a module that is gone),
    then what the story's own lookups loaded."""
    parts = module.split(".")
    above = [".".join(parts[:cut]) for cut in range(len(parts) - 1, 0, -1)]
    found = []
    for dotted in [*above, *run.modules.loaded()]:
        with contextlib.suppress(SourceError, ParseError):
            info = run.module(dotted)
            if info is not None and name in info.text:
                found.append(dotted)
    return list(dict.fromkeys(found))


def _nearest(module: str) -> Callable[[str], tuple[int, int, str]]:
    """A sort key: files of the check module's folder first, then of its subfolders, then of
    its parent folder and the parent's subfolders, and so on; by path within each."""
    folder = module.split(".")[:-1]

    def key(path: str) -> tuple[int, int, str]:
        parts = path.split("/")[:-1]
        common = 0
        while common < min(len(parts), len(folder)) and parts[common] == folder[common]:
            common += 1
        return len(folder) - common, len(parts) - common, path

    return key


def _definition_pattern(name: str) -> re.Pattern[bytes]:
    word = re.escape(name.encode())
    return re.compile(
        rb"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+" + word + rb"\b|^" + word + rb"[ \t]*[:=]",
        re.MULTILINE,
    )


def _ranked(paths: list[str], name: str, module: str) -> list[list[str]]:
    """The release's modules in groups, likeliest first: the same file name as the module
    the check names (a module that moved), a file named like the name (`kto_trainer` for
    KTOTrainer; not a short part of it: `model` for get_peft_model names a file in every
    folder), the rest of the package; each group in path order."""
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
        elif len(plain) * 2 > len(key) and (plain in key or key in plain):
            groups[1].append(path)
        else:
            groups[2].append(path)
    return groups


def dotted_name(path: str) -> str:
    """The module a file of the release holds."""
    return path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")


def opened(run: VersionRun) -> Tree:
    """The release's tree. Only a failing check is explained, and a release whose source
    could not be opened fails none (its checks are errors), so an unopened one raises."""
    if isinstance(run.tree, SourceError):
        raise run.tree
    return run.tree


def read_files(tree: Tree, paths: list[str]) -> Iterator[tuple[str, bytes]]:
    """Each file's bytes, fetched in chunks where the source can (a wheel merges neighbours),
    the first small, each next twice as large up to PREFETCH_CHUNK: a reader that stops early
    (a budget spent, a definition found) has not fetched far ahead. A file the source refuses
    (a link, a member over the cap) is passed by: one such member must not cost the story of
    the whole release; a fault of fetching still ends it."""
    at, size = 0, FIRST_CHUNK
    while at < len(paths):
        chunk = paths[at : at + size]
        at, size = at + size, min(size * 2, PREFETCH_CHUNK)
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
    try:
        info = run.cache.get(data, dotted_name(path), path, is_package=path.endswith("__init__.py"))
    except ParseError:
        return []
    return _defined(info, name)


def _defined(info: ModuleInfo, name: str) -> list[Place]:
    """Top-level and class-level definitions of `name` in one module, by line."""
    dotted, path = dotted_name(info.path), info.path
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


def moved_text(run: VersionRun, place: Place) -> tuple[ModuleInfo, Span] | None:
    """The module and lines of the definition a missing name moved to (a diff's new side)."""
    data = opened(run).read(place.path)
    if data is None:
        return None
    dotted = dotted_name(place.path)
    info = run.cache.get(data, dotted, place.path, is_package=place.path.endswith("__init__.py"))
    name = place.text.rsplit(".", 1)[-1]
    spans = [span for span in _spans(info, name) if span.start == place.line] + [
        fn.span
        for cls in _classes(info)
        for fn in cls.methods.get(name, [])
        if fn.span.start == place.line
    ]
    return (info, spans[0]) if spans else None
