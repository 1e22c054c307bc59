"""Reading a downstream package: every file it holds scanned in two passes (what the package
passes to its own functions, then what each function does with it), remembered per file.

The driver of the per-file visitor (patterns.py): it reads the files selection.py chose,
gathers what their first passes saw (callsites.py), follows module names from function to
function for a few rounds, and collects every use of an upstream object the second passes find.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canary.analysis import MAX_SOURCE_BYTES
from canary.analysis.budget import over_budget
from canary.analysis.parselock import parse_locked
from canary.cache.store import Cache
from canary.matrix.config import find_config
from canary.safety.reads import TooLarge, read_regular
from canary.safety.untrusted import showable
from canary.scan.downstream.callsites import CallSites
from canary.scan.downstream.file_scans import FileScans
from canary.scan.downstream.findings import Use
from canary.scan.downstream.patterns import scan_tree
from canary.scan.downstream.requirements import searched_folders
from canary.scan.downstream.rewriters import declared_registries, inferred_registries
from canary.scan.downstream.selection import Selection
from canary.scan.downstream.spelled import NamesIn

# text of a file that may format a name into a module path (rewriters.inferred_registries)
_FORMATS_PATHS = re.compile(rb"\b(?:eval|exec|import_module)\(")


@dataclass
class ScanResult:
    """What a scan of a downstream tree saw; `problems` are files it could not read."""

    findings: list[Use] = field(default_factory=list)
    modules: set[str] = field(default_factory=set)
    files: int = 0
    problems: list[str] = field(default_factory=list)
    left_out: str = ""  # the folders and globs not read, with their file counts
    unplaced: str = ""  # the rewrites scan can tell neither of what nor of which upstream

    def not_scanned(self, name: str, why: object) -> None:
        """A file not read, said on one line with its control characters escaped: a
        downstream file name or a parser's message is no terminal or runner command."""
        self.problems.append(showable(f"{name}: not scanned: {why}"))


@dataclass
class _File:
    """One downstream file: its bytes, its tree once parsed, the functions it defines."""

    name: str
    data: bytes
    tree: ast.Module | None = None
    defined: list[str] = field(default_factory=list)
    events: list[list[Any]] = field(default_factory=list)  # its first pass's (CallSites)
    # what its last first pass found, and asked of the package's functions (CallSites.asked)
    early: tuple[list[Use], set[str]] | None = None
    asked: list[tuple[str, Any, Any]] = field(default_factory=list)

    def parsed(self) -> ast.Module:
        """The tree, as an upstream file's is parsed: within the token budget (a ValueError
        says it is over), a MemoryError of deep nesting left to the caller."""
        if self.tree is None:
            reason = over_budget(self.data)
            if reason is not None:
                raise ValueError(reason)
            self.tree = parse_locked(self.data, self.name)
        return self.tree


def _read(root: Path, result: ScanResult, exclude: tuple[str, ...]) -> list[_File]:
    base = root.parent if root.is_file() else root
    # the scanned repository's [tool.canary], in its own folders only (requirements.py)
    table = find_config(within=searched_folders(root)).exclude
    files = []
    selection = Selection(root, exclude, table)
    for path in selection.files():
        name = showable(path.relative_to(base).as_posix())  # as the findings cite it
        try:  # a file over the budget is not even read: the downstream's bytes are untrusted
            files.append(_File(name, read_regular(path, MAX_SOURCE_BYTES)))
        except TooLarge as exc:
            result.not_scanned(name, f"{exc}: too costly to parse")
        except OSError as exc:
            result.not_scanned(name, exc)
    for link in selection.outside:
        name = link.relative_to(base).as_posix()
        result.not_scanned(name, f"a symbolic link out of {base.name or base}")
    result.left_out = selection.described()
    return files


def scan_path(
    root: Path,
    upstreams: frozenset[str],
    cache: Cache | None = None,
    exclude: tuple[str, ...] = (),
    names_in: NamesIn | None = None,
) -> ScanResult:
    """Parse every downstream file (never import it) and collect the upstream uses.

    Two passes: the first gathers which upstream objects the package passes to its own
    functions, the second follows them into those functions. With a `cache`, each file's
    passes are remembered (file_scans.py): what did not change is not parsed again.
    `exclude` are globs of files and folders not to read (selection.py); `names_in` what an
    upstream module's `dir()` names in the newest release read (filtered by the downstream).
    """
    result = ScanResult()
    files = _read(root, result, exclude)
    registries = _registries(files, upstreams)
    own = own_names(root)
    scans = FileScans(cache, upstreams, own, registries)
    first = _FirstPass(scans, upstreams, own, result, names_in)
    scanned = [file for file in files if first.scan(file, CallSites(), None)]
    calls = first.gathered(scanned)
    seen: list[Any] = []
    for _ in range(_ROUNDS):  # what functions walked once per module name pass on
        varied = [[name, calls.varied(name)] for name in sorted(calls.varying())]
        if not varied or varied == seen:
            break
        seen = varied
        for file in (f for f in scanned if calls.varying() & set(f.defined)):
            first.scan(file, calls, [calls.varied(name) for name in sorted(set(file.defined))])
        calls = first.gathered(scanned)
    calls.frozen = True
    for file in scanned:
        state = [*calls.state(file.defined, file.name), [e for e in file.events if e[0] == "lists"]]
        found = scans.second(file.name, file.data, state)
        if found is None and file.early is not None and calls.tells_nothing(file.name, file.asked):
            found = file.early  # the answers of all files' first passes change nothing here
            scans.keep_second(file.name, file.data, state, *found)
        elif found is None:
            scanner = _scan_file(file.name, file.parsed(), upstreams, calls, own, result, names_in)
            if scanner is None:
                continue
            found = scanner.findings, scanner.modules
            scans.keep_second(file.name, file.data, state, *found)
        result.findings += found[0]
        result.modules |= found[1]
        result.files += 1
    return result


# most rounds of first passes that follow module names from function to function
_ROUNDS = 3


@dataclass
class _FirstPass:
    """Runs (or recalls) a file's first pass, given what a previous round found varying."""

    scans: FileScans
    upstreams: frozenset[str]
    own: frozenset[str]
    result: ScanResult
    names_in: NamesIn | None

    def scan(self, file: _File, given: CallSites, state: list[Any] | None) -> bool:
        """Fill `file.events`; False when the file cannot be parsed."""
        events = self.scans.first(file.data, state, self.names_in)
        file.early = None  # known only of a first pass scanned here
        if events is None:
            try:
                tree = file.parsed()
            except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
                self.result.not_scanned(file.name, str(exc) or type(exc).__name__)
                return False
            alone = CallSites()
            alone.registries = self.scans.registries
            alone.given = given if state is not None else None
            args = (file.name, tree, self.upstreams, alone, self.own, self.result)
            scanner = _scan_file(*args, self.names_in)
            if scanner is not None:
                self.scans.keep_first(file.data, alone.events, state)
                file.early, file.asked = (scanner.findings, scanner.modules), alone.asked
            file.tree = None  # most files are not scanned again: parsed again if they are
            events = alone.events
        file.defined = [event[1] for event in events if event[0] == "define"]
        file.events = events
        return True

    def gathered(self, scanned: list[_File]) -> CallSites:
        """What all files' first passes saw, together."""
        calls = CallSites()
        calls.registries = self.scans.registries
        for file in scanned:
            calls.replay(file.events, file.name)
        return calls


def _registries(files: list[_File], upstreams: frozenset[str]) -> dict[str, str]:
    """The package's registries of rewriters: those a comment declares, and those found by
    how the package applies them (rewriters.py), for the upstreams scanned."""
    declared: dict[str, str] = {}
    inferred: dict[str, str] = {}
    for file in files:
        if b"canary:" in file.data:
            declared |= declared_registries(file.data.decode("utf-8", "replace"))
        if _FORMATS_PATHS.search(file.data):
            try:
                found = inferred_registries(file.parsed())
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue  # reported by the first pass
            inferred |= {r: t for r, t in found.items() if t.split(".")[0] in upstreams}
    return inferred | declared


def own_names(root: Path) -> frozenset[str]:
    """The downstream's own top-level package names (lowercase, four letters or more)."""
    folder = root if root.is_dir() else root.parent
    packages = [folder] if (folder / "__init__.py").exists() else list(folder.iterdir())
    names = {p.name.lower() for p in packages if (p / "__init__.py").exists()}
    return frozenset(n for n in names if len(n) >= 4)


def _scan_file(
    name: str,
    tree: ast.Module,
    upstreams: frozenset[str],
    calls: CallSites,
    own: frozenset[str],
    result: ScanResult,
    names_in: NamesIn | None = None,
):
    try:
        return scan_tree(tree, name, upstreams, calls, own, names_in)
    except RecursionError as exc:
        if calls.frozen:
            result.not_scanned(name, exc)
        return None
