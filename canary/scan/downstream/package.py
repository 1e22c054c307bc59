"""`canary scan PATH`: scan the downstream files, propose checks, print or write the matrices."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from canary.analysis import MAX_SOURCE_BYTES
from canary.analysis.budget import over_budget
from canary.analysis.parselock import parse_locked
from canary.cache.store import Cache
from canary.engine.runner import Runner
from canary.errors import ExitCode, UsageError
from canary.matrix.config import find_config
from canary.matrix.model import Matrix
from canary.reports.progress import Progress
from canary.safety.reads import TooLarge, read_regular
from canary.safety.untrusted import showable
from canary.safety.writes import replace_file
from canary.scan.downstream.callsites import CallSites
from canary.scan.downstream.file_scans import FileScans
from canary.scan.downstream.findings import Role, Use
from canary.scan.downstream.patterns import scan_tree
from canary.scan.downstream.requirements import declared_releases, searched_folders
from canary.scan.downstream.rewriters import declared_registries, inferred_registries
from canary.scan.downstream.selection import Selection
from canary.scan.downstream.spelled import NamesIn
from canary.scan.proposing.judging import GATED, settle
from canary.scan.proposing.propose import Proposal, propose
from canary.scan.proposing.split_texts import split_texts
from canary.scan.upstream.names import import_name, matrix_file
from canary.scan.upstream.releases import Reading, load_text, read_releases
from canary.scan.upstream.wildcards import placed_wild
from canary.scan.writing.emit import MergeError, Releases, merge_text, render_matrix
from canary.scan.writing.merging import Existing, merge_target
from canary.settings import Settings

DEFAULT_UPSTREAMS = ("trl", "peft", "transformers")
# text of a file that may format a name into a module path (rewriters.inferred_registries)
_FORMATS_PATHS = re.compile(rb"\b(?:eval|exec|import_module)\(")
_LONE_LF = re.compile(r"(?<!\r)\n")


@dataclass
class ScanResult:
    """What a scan of a downstream tree saw; `problems` are files it could not read."""

    findings: list[Use] = field(default_factory=list)
    modules: set[str] = field(default_factory=set)
    files: int = 0
    problems: list[str] = field(default_factory=list)
    left_out: str = ""  # the folders and globs not read, with their file counts

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


@dataclass
class Proposed:
    """The proposed matrix of one upstream: its text (comments on what fails included)."""

    upstream: str
    proposals: list[Proposal]
    releases: Releases
    reading: Reading | None = None
    left_out: list[Proposal] = field(default_factory=list)  # guarded, absent on both ends
    not_scanned: str = ""  # the downstream folders and globs scan did not read
    unplaced: str = ""  # the rewrites of sources scan could not tell of what, by file
    unreached: list[Proposal] = field(default_factory=list)  # gated outside every release
    unheld: list[Proposal] = field(default_factory=list)  # texts no release in range holds

    def text(self) -> str:
        """A complete new matrix file; comments above checks say where they fail."""
        return render_matrix(self.upstream, self.proposals, self.releases, self._header())

    def _header(self) -> list[str]:
        scanned = [f"not scanned: {self.not_scanned}"] if self.not_scanned else []
        return scanned + ([self.unplaced] if self.unplaced else []) + self._reading_header()

    def _reading_header(self) -> list[str]:
        reading = self.reading
        if reading is None:
            return []
        if reading.problem:
            return [f"upstream {self.upstream} not read ({reading.problem}): placed by names only"]
        labels = ", ".join(run.target.label for run in reading.runs)
        head = [f"placed and judged on {labels}; a comment above a check says where it fails"]
        if any(note.startswith(GATED) for p in self.proposals for note in p.notes):
            head.append(
                f"`{GATED} from V on` above a check: gated since V, where it starts holding; unless"
                " your code reaches it only on newer releases, your declared range is wrong there"
            )
        if self.left_out:
            head.append(
                f"left out: {len(self.left_out)} use{'s' * (len(self.left_out) > 1)} the client"
                " guards (try/except, hasattr) of"
                f" names neither {' nor '.join(run.target.label for run in reading.runs)} has"
                " (dead code for this range?):"
            )
        head += [f"  {_name(p)} -- {p.why}" for p in self.left_out]
        if self.unreached:
            head.append(
                f"left out: {len(self.unreached)} use{'s' * (len(self.unreached) > 1)} the client"
                " gates to releases outside the range (no locked release would check it):"
            )
        head += [f"  {_name(p)} ({p.gate}) -- {p.why}" for p in self.unreached]
        unheld, elsewhere = _listed_apart(self.unheld, self.proposals)
        if elsewhere:
            head.append(
                f"left out: {elsewhere} text{'s' * (elsewhere > 1)} a rewrite of every module a"
                " listing names (`dir()` filtered) seeks in modules no release in the range"
                " has them in, checked in the modules that have them"
            )
        if unheld:
            head.append(
                f"left out: {len(unheld)} text{'s' * (len(unheld) > 1)} no release in"
                " the range holds (written for older releases?), red on every one:"
            )
        return head + [f"  {_name(p)} {p.assertion} {p.values} -- {p.why}" for p in unheld]

    def settle(self) -> None:
        """Judge the proposals on the releases read: gate or annotate what fails there, and
        leave out the guarded names absent on both ends."""
        if self.reading is not None and self.reading.runs:
            labels = [Version(label) for label in self.reading.labels]
            self.unreached = [p for p in self.proposals if not _reaches(p.gate, labels)]
            self.proposals = [p for p in self.proposals if _reaches(p.gate, labels)]
            self.proposals = split_texts(self.proposals, self._matrix_of, self.reading)
            matrix = self._matrix_of(self.proposals)
            self.left_out, self.unheld = settle(matrix, self.proposals, self.reading)
            gone = {id(p) for p in self.left_out + self.unheld}
            self.proposals = [p for p in self.proposals if id(p) not in gone]

    def _matrix_of(self, proposals: list[Proposal]) -> Matrix:
        """The matrix `proposals` make, a check per proposal in order, as written out."""
        text = render_matrix(self.upstream, proposals, self.releases, self._header())
        return load_text(self.upstream, text)

    def merged(self, existing: str, name: str, declined: set[str]) -> tuple[str, int]:
        """`existing` (the matrix file `name`) with the missing proposals appended; `declined`
        are ids other matrices of the upstream state or ignore."""
        return merge_text(existing, name, self.proposals, declined)


def _listed_apart(unheld: list[Proposal], kept: list[Proposal]) -> tuple[list[Proposal], int]:
    """The texts no release holds to list, and how many others there are: texts sought in
    every module of a listing (Use.listed) that a kept check finds in another module."""
    found = {(p.assertion, tuple(p.values)) for p in kept}
    shown = [
        p
        for p in unheld
        if not all(use.listed for use in p.uses) or (p.assertion, tuple(p.values)) not in found
    ]
    return shown, len(unheld) - len(shown)


def _reaches(gate: str, releases: list[Version]) -> bool:
    """Whether a check gated to `gate` is judged on one of `releases` (all, ungated)."""
    if not gate or not releases:
        return True
    spec = SpecifierSet(gate)
    return any(spec.contains(release, prereleases=True) for release in releases)


def _unplaced(findings: list[Use]) -> str:
    """ "N source rewrites not placed: a.py:3,9, b.py:7": the sites of rewrites (`.replace`,
    `re.sub`, `in`, ...) of sources scan could not tell of what, which no check covers."""
    lines: dict[str, set[int]] = {}
    for finding in findings:
        if finding.role is Role.UNPLACED:
            lines.setdefault(finding.file, set()).add(finding.line)
    count = sum(len(numbers) for numbers in lines.values())
    if not count:
        return ""
    sites = ", ".join(
        f"{file}:{','.join(map(str, sorted(numbers)))}" for file, numbers in sorted(lines.items())
    )
    return (
        f"{count} source rewrite{'s' * (count > 1)} not placed (of what, scan cannot tell): {sites}"
    )


def _name(proposal: Proposal) -> str:
    subject = proposal.subject
    return f"{subject.module}.{subject.name}" if subject.name else subject.module


def scan(
    root: Path,
    upstreams: Iterable[str] = DEFAULT_UPSTREAMS,
    source: Path | None = None,
    read_upstream: bool = True,
    exclude: tuple[str, ...] = (),
    settings: Settings | None = None,
    progress: Callable[[Callable[[], float]], Progress | None] | None = None,
) -> tuple[ScanResult, dict[str, Proposed]]:
    """Scan a downstream tree and propose a matrix per upstream it uses.

    Each upstream is read (the newest and lowest release in the range the downstream declares,
    or the `source` folder) to place and judge the proposals; `read_upstream=False` places
    them by naming conventions alone, reading nothing; `exclude` globs leave files out;
    `settings` configure the reading (the environment's when not given); `progress` makes
    the status line (given what was downloaded so far), on a terminal.
    """
    names = frozenset(upstreams)
    runner = Runner(settings=settings or Settings.from_environment(), source_path=source)
    from_index = source is None and read_upstream  # else the cache stays untouched
    status = progress(lambda: runner.stats().get("bytes_downloaded", 0)) if progress else None
    if status is not None:  # reading the client's files takes seconds on a first scan
        status.begin(f"scan: reading the files of {showable(root.name or str(root))}")
    early: dict[str, Reading] = {}  # read while scanning the files (the names they list)

    def names_in(parts: tuple[str, ...]) -> tuple[str, ...] | None:
        if not read_upstream or parts[0] not in names:
            return None
        if parts[0] not in early:
            early[parts[0]] = read_releases(parts[0], declared_releases(root, parts[0]), runner)
        views = early[parts[0]].views  # the newest first: what users have today
        return tuple(sorted(views[0].listed(parts))) or None if views else None

    try:  # the status line erased whatever happens
        cache = runner.context.cache if from_index else None
        result = scan_path(root, names, cache, exclude, names_in)
        used = sorted({f.ref.root for f in result.findings} & names)
        releases = {name: declared_releases(root, name) for name in used}
        unread = [name for name in used if name not in early]
        if status is not None and read_upstream:
            status.start(2 * len(unread), 2 * len(unread) if from_index else 0, unread)
        readings = {
            name: early[name]
            if name in early
            else read_releases(name, releases[name], runner, status)
            for name in used
            if read_upstream
        }
        views = {name: reading.views for name, reading in readings.items()}
        result.findings = placed_wild(result.findings, readings)  # texts sought on a pattern
        placed = [f for f in result.findings if f.role is not Role.UNPLACED]
        proposed = propose(placed, result.modules, views)
        for reading in readings.values():
            reading.keep_places()
        matrices = {
            name: Proposed(
                name,
                proposed.get(name, []),
                readings[name].releases if name in readings else releases[name] or Releases(),
                readings.get(name),
                not_scanned=result.left_out,
                unplaced=_unplaced(result.findings),
            )
            for name in used
            if proposed.get(name)
        }
        for matrix in matrices.values():
            matrix.settle()
    finally:
        if status is not None:
            status.close()
    return result, matrices


def _write_new(folder: Path, proposed: Proposed, out: TextIO) -> None:
    target = folder / matrix_file(proposed.upstream)
    replace_file(folder, target, proposed.text())
    out.write(f"wrote {showable(str(target))}: {len(proposed.proposals)} checks\n")


def _merge(existing: list[Existing], proposed: Proposed, out: TextIO) -> None:
    target, others = merge_target(proposed.upstream, existing)
    with open(target.path, encoding="utf-8", newline="") as handle:  # its own line ends
        text = handle.read()
    merged, added = proposed.merged(text, str(target.path), others)
    if added:
        replace_file(target.path.parent, target.path, in_line_ends_of(text, merged))
    total = len(proposed.proposals)
    out.write(f"merged into {showable(str(target.path))}: {added} new checks of {total} proposed\n")


def in_line_ends_of(original: str, merged: str) -> str:
    """`merged` with the new lines ended as every line of `original` is, when that is CRLF."""
    if "\r\n" in original and not _LONE_LF.search(original):
        return _LONE_LF.sub("\r\n", merged)
    return merged


def upstream_names(upstreams: Iterable[str] | None) -> list[str]:
    """`--upstream` as top-level import names (the default three when not given): an import
    name or a distribution's name (`sentence_transformers`, `sentence-transformers`)."""
    given = [n.strip() for n in upstreams or DEFAULT_UPSTREAMS if n.strip()]
    names = [import_name(n) for n in given]
    if not names or None in names:
        raise UsageError(
            f"scan: --upstream wants import or distribution names of packages, got {given}"
        )
    return list(dict.fromkeys(n for n in names if n))


def output_folder(output: str | None, merge: str | None) -> Path:
    """Where `--output` (created) or `--merge` (an existing folder) writes; `.` for neither."""
    if output and merge:
        raise UsageError("scan: --output and --merge are alternatives; give one")
    if merge and not Path(merge).is_dir():
        raise UsageError(f"scan: {merge}: not a folder")
    if output:
        try:
            Path(output).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"scan: --output {output}: cannot create: {exc}") from None
    return Path(output or merge or ".")


def notes(result: ScanResult | None, path: str, unused: list[str]) -> list[str]:
    """What scan says beside its matrices, as `#` comments: the files it could not read and
    how many it scanned (given `result`), and the upstreams in `unused` it saw no use of."""
    said = [f"# {problem}" for problem in result.problems] if result is not None else []
    if result is not None:
        left_out = f" (not scanned: {result.left_out})" if result.left_out else ""
        said.append(f"# scanned {result.files} files under {showable(path)}{left_out}")
    return said + [f"# no uses of {upstream} found" for upstream in unused]


def emit(
    result: ScanResult,
    proposed: dict[str, Proposed],
    path: str,
    names: list[str],
    folder: Path,
    output: str | None,
    merge: str | None,
    existing: dict[str, list[Existing]],
    out: TextIO,
) -> int:
    """Print the proposals, write them as new files (`output`, into `folder`) or merge them
    into the `existing` matrices of the merge folder (a new file for an upstream it has none
    of), and say what was scanned; a matrix that cannot be written is said on stderr and makes
    the status 2."""
    out.writelines(f"{note}\n" for note in notes(result, path, []))
    status = 0
    for upstream in sorted(names):
        matrix = proposed.get(upstream)
        if matrix is None:
            out.writelines(f"{note}\n" for note in notes(None, path, [upstream]))
        elif output:
            if (folder / matrix_file(upstream)).exists():
                status = _refused(f"{folder / matrix_file(upstream)} exists; use --merge")
                continue
            _write_new(folder, matrix, out)
        elif upstream in existing:
            try:
                _merge(existing[upstream], matrix, out)
            except MergeError as exc:
                status = _refused(str(exc))
        elif merge:
            _write_new(folder, matrix, out)
        else:
            out.write(f"---\n# matrices/{matrix_file(upstream)}\n")
            out.write(matrix.text())
    return status


def _refused(message: str) -> int:
    """One matrix not written: said on stderr, as every command says a usage error."""
    print(f"canary: scan: {showable(message)}", file=sys.stderr)
    return int(ExitCode.USAGE_ERROR)
