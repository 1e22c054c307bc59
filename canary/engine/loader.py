"""The modules of one version, each looked up (read and indexed) once: what a version's judging
reads, kept apart from the judging so nothing it holds points back at the run."""

from __future__ import annotations

import hashlib
import threading
from typing import Any

from canary.analysis import ModuleCache, ModuleInfo, ParseError
from canary.analysis.compiles import said
from canary.analysis.model import Exports
from canary.cache.memo import Memo
from canary.sources.tree import SourceError, Tree


def module_files(name: str) -> tuple[tuple[str, bool], ...]:
    """Where a dotted module may live, in Python's lookup order, and whether that file is a
    package: a package `m/__init__.py` wins over a module `m.py` beside it."""
    base = name.replace(".", "/")
    return (f"{base}/__init__.py", True), (f"{base}.py", False)


#: What decided a name's lookup: the file it was read from and the digest of its bytes, or
#: ("-", (name, print)...) for a name found in no file, with the lookups its alias search made;
#: None when a fault had a part in it (nothing keyed by it may be reused).
Print = tuple[Any, ...] | None


class Reads:
    """What one judging read of a version: each name looked up (in order) with its print, and
    whether it read anything else (the version's module list), which no print covers."""

    def __init__(self) -> None:
        self.names: list[tuple[str, Print]] = []
        self.opaque = False


class ModuleLoader:
    """One version's modules by dotted name; a fault is remembered and raised on every lookup."""

    def __init__(self, tree: Tree | SourceError, cache: ModuleCache):
        self.tree = tree
        self.cache = cache
        self._modules: dict[str, ModuleInfo | Exception | None] = {}
        self._prints: dict[str, Print] = {}
        self._consulted: list[list[tuple[str, Print]]] = []  # the lookups each load made
        self._exports: dict[str, Exports] = {}  # read alone, for folders' walks
        self._lock = threading.RLock()  # an alias is looked up while its name is loading
        self._module_names: list[str] | None = None
        #: set while a judging records what it reads (canary.engine.reuse)
        self.reads: Reads | None = None

    def module_names(self) -> list[str]:
        """The dotted names of the version's modules, when its source lists them for free
        (for "did you mean" hints only); empty when it cannot."""
        if self.reads is not None:
            self.reads.opaque = True
        if self._module_names is None:
            files = getattr(self.tree, "files", None)
            try:
                listed = files() if files is not None else None
            except SourceError:
                listed = None
            names = {
                path[: -len(".py")].replace("/", ".").removesuffix(".__init__")
                for path in listed or ()
                if path.endswith(".py")
            }
            self._module_names = sorted(names)
        return self._module_names

    def loaded(self) -> list[str]:
        """The dotted names looked up so far, in order: what a story searches before reading
        anything more (canary.engine.whereabouts)."""
        with self._lock:
            return list(self._modules)

    def prefetch(self, names: list[str]) -> None:
        """Modules about to be looked up, fetched together where the source can (a wheel
        merges neighbouring members into one request); best effort, as in Runner."""
        with self._lock:
            wanted = [n for n in names if n not in self._modules and n not in self._exports]
        if isinstance(self.tree, SourceError) or not wanted:
            return
        try:
            self.tree.prefetch([path for name in wanted for path, _ in module_files(name)])
        except SourceError:
            return  # each module's own read reports its own fault

    def module(self, name: str) -> ModuleInfo | None:
        with self._lock:
            if name not in self._modules:
                self._consulted.append([])
                try:
                    self._modules[name] = self._load(name)
                finally:
                    consulted = self._consulted.pop()
                self._prints[name] = _print(self._modules[name], self._prints.get(name), consulted)
            found = self._modules[name]
            read = (name, self._prints[name])
            if self._consulted:  # looked up by an alias search: part of that name's print
                self._consulted[-1].append(read)
            elif self.reads is not None:
                self.reads.names.append(read)
        if isinstance(found, Exception):
            raise found
        return found

    def exports(self, name: str) -> Exports | None:
        """What `module(name)` exports, read by content (ModuleCache.exports) without keeping
        its index here: a folder's walk reads hundreds of modules for one name. A module
        already looked up, a fault or one found by alias is answered by `module`."""
        with self._lock:
            known = name in self._modules
            found = self._exports.get(name)
        if found is not None:
            return found
        if not known and not isinstance(self.tree, SourceError):
            try:
                file = _module_file(self.tree, name)
                if file is not None:
                    path, is_package, data = file
                    found = self.cache.exports(data, name, path, is_package=is_package)
                    with self._lock:
                        self._exports[name] = found
                    return found
            except (SourceError, ParseError):
                pass  # raised again, and remembered, by the lookup below
        info = self.module(name)
        return None if info is None else Exports.of(info)

    def compile_error(self, name: str) -> str | None:
        """Why module `name` cannot be imported because its file does not compile (the error,
        naming the line), None when it compiles or is not read from a file of its own."""
        info = self.module(name)
        with self._lock:
            print_ = self._prints.get(name)
        if info is None or print_ is None or print_[0] == "-":
            return None
        why = self.cache.compile_error(print_[1], info.text)
        return None if why is None else said(info.path, why)

    def print_of(self, name: str) -> Print:
        """What decides `name`'s lookup (canary.engine.reuse keys verdicts by it), looked up
        as the judging would; None when a fault had a part in it."""
        try:
            self.module(name)
        except (SourceError, ParseError):
            return None
        return self._prints[name]

    def _load(self, name: str) -> ModuleInfo | Exception | None:
        if isinstance(self.tree, SourceError):
            return self.tree
        try:
            file = _module_file(self.tree, name)
            if file is not None:
                path, is_package, data = file
                digest = _digest(data)
                self._prints[name] = (path, digest)
                return self.cache.get(data, name, path, is_package=is_package, digest=digest)
        except (SourceError, ParseError) as exc:
            return exc
        return self._alias(name)

    def _alias(self, name: str) -> ModuleInfo | Exception | None:
        """A module that exists only in an alias table an ancestor package serves through an
        import hook (transformers 5's legacy module paths): the target module stands in."""
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            try:
                package = self.module(".".join(parts[:cut]))
            except (SourceError, ParseError):
                return None
            target = package.aliases.get(name) if package is not None else None
            if target is not None and target != name:
                try:
                    return self.module(target)
                except (SourceError, ParseError) as exc:
                    return exc
        return None


#: Shared by every version (and run) of the process, as the texts are: a version's modules
#: are read again by the next one, a few MB later (canary.cache.store keeps 8 MB).
_DIGESTS: Memo[bytes, str] = Memo(8 << 20, lambda data, _digest: len(data))


def _digest(data: bytes) -> str:
    """The sha256 hex of `data`, looked up by the bytes themselves when read lately: the next
    release of a project reads its unchanged modules again, most often as the very bytes the
    cache kept in memory (a lookup then costs nothing: the hash is kept in the bytes, and
    equality is identity). Any other lookup compares the whole bytes: a digest is always of
    these bytes."""
    return _DIGESTS.made(data, lambda: hashlib.sha256(data).hexdigest())


def _module_file(tree: Tree, name: str) -> tuple[str, bool, bytes] | None:
    """The file that holds module `name` (a package's `__init__.py` first), whether it is a
    package's, and its bytes; None when the version has neither."""
    for path, is_package in module_files(name):
        data = tree.read(path)
        if data is not None:
            return path, is_package, data
    return None


def _print(found: object, direct: Print, consulted: list[tuple[str, Print]]) -> Print:
    """A loaded name's print: its file's, else the alias search's lookups; None on a fault."""
    if isinstance(found, Exception):
        return None
    if direct is not None:
        return direct
    if any(print_ is None for _, print_ in consulted):
        return None
    return ("-", *consulted)
