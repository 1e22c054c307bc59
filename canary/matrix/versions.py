"""Which versions of an upstream a run checks: resolved from the index, locked, then selected.

Nobody maintains a list of versions by hand: `releases` is a PEP 440 range resolved against the
package index, and the result is committed as a lock (canary.matrix.lock) so PR-time runs are
deterministic and never ask the index which versions exist.

Without `releases`, the exact versions under `include` are the release list (no index look-up
at run time); with neither, every release on the index is.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Protocol

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from canary.matrix.lock import (
    Lock,
    Resolution,
    lock_path,
    read_lock,
    render_lock,
    spec_of,
    write_lock,
)
from canary.matrix.model import Matrix, MatrixError, load_matrix, refuse_empty_gates
from canary.matrix.targets import SELECTIONS, Target, explicit_targets, is_explicit
from canary.sources.index_file import IndexFile
from canary.sources.tree import SourceError


class ListedProject(Protocol):
    """One project on the index (canary.sources.index provides it)."""

    @property
    def versions(self) -> list[str]: ...

    def files(self, version: str) -> list[IndexFile]: ...

    def problem(self, version: str) -> str | None: ...

    def pick_file(self, version: str) -> IndexFile | None: ...


class Index(Protocol):
    def project(self, name: str, *, refresh: bool = False) -> ListedProject: ...


class SelectionError(MatrixError):
    """A `--versions` value that is neither a keyword, a specifier nor a list: a usage error."""


class Sources(Protocol):
    """Where a run's index client comes from (its SourceContext): asked for it only when the
    index is needed, so lock-only runs never build one."""

    @property
    def index(self) -> Index: ...


# -- resolution --------------------------------------------------------------------------


def _parse(label: str) -> Version | None:
    try:
        return Version(label)
    except InvalidVersion:
        return None


def exact_includes(matrix: Matrix) -> dict[Version, str]:
    """`include` entries that are versions (as the matrix spells them), less `exclude`."""
    excluded = {Version(v) for v in matrix.versions.exclude}
    found: dict[Version, str] = {}
    for label in matrix.versions.include:
        version = _parse(label)
        if version is not None and version not in excluded:
            found.setdefault(version, label)
    return found


def branches_of(matrix: Matrix) -> list[str]:
    """`include` entries that are not versions name branches, in the matrix's order."""
    names = [label for label in matrix.versions.include if _parse(label) is None]
    return list(dict.fromkeys(names))


def release_range(matrix: Matrix) -> SpecifierSet | None:
    """The range to discover from the index; None when the exact includes are the whole list."""
    if matrix.versions.releases is not None:
        return matrix.versions.releases
    return None if exact_includes(matrix) else SpecifierSet()


def needs_index(matrix: Matrix) -> bool:
    return release_range(matrix) is not None


def unresolved(matrix: Matrix) -> Resolution:
    """The resolution of a matrix that needs no index: its exact includes and its branches."""
    exact = sorted(exact_includes(matrix).items())
    return Resolution(releases=[(label, None) for _, label in exact], branches=branches_of(matrix))


def resolve(matrix: Matrix, index: Index, *, refresh: bool = False) -> Resolution:
    """Every final release in `releases` (pre- and dev releases only with `prereleases`),
    plus the exact `include` versions, less `exclude`, in PEP 440 order.

    A release whose files are all yanked is left out and listed in `yanked`, unless `include`
    pins it. A release the index lists without files is kept with no file (GitHub has it).
    `refresh` asks the index again rather than trusting a cached page (`canary lock`).
    """
    versions = matrix.versions
    excluded = {Version(v) for v in versions.exclude}
    exact = exact_includes(matrix)
    wanted = release_range(matrix)
    project = index.project(matrix.pypi, refresh=refresh)
    on_index: dict[Version, str] = {}
    yanked: dict[Version, str] = {}
    for label in project.versions:
        version = _parse(label)
        if version is None or version in excluded or version in on_index or version in yanked:
            continue
        pinned = version in exact
        if not pinned and not (
            wanted is not None and wanted.contains(version, prereleases=versions.prereleases)
        ):
            continue
        files = project.files(label)
        if files and all(f.yanked for f in files) and not pinned:
            yanked[version] = label
        else:
            on_index[version] = label
    chosen = {**on_index, **exact}  # the matrix's spelling of a pinned version wins
    releases = [
        (chosen[v], project.pick_file(on_index[v]) if v in on_index else None)
        for v in sorted(chosen)
    ]
    ahead = _ahead(matrix, project, wanted, max(chosen, default=None))
    resolved = [label for label, _ in releases] + ([ahead[0]] if ahead else [])
    return Resolution(
        releases=releases,
        branches=branches_of(matrix),
        yanked=[yanked[v] for v in sorted(yanked)],
        listed=frozenset(project.versions),
        next=ahead,
        offered={label: tuple(project.files(label)) for label in resolved},
    )


def _ahead(
    matrix: Matrix, project: ListedProject, wanted: SpecifierSet | None, newest: Version | None
) -> tuple[str, IndexFile | None] | None:
    """The newest pre-release (dev releases too, as for `prereleases`) in the range and not
    excluded, when it is newer than every final release on the index and every release
    chosen: what the next release will be, judged before it is out. None when the matrix
    takes pre-releases as releases anyway, or opts out with `next: false`."""
    versions = matrix.versions
    if not versions.next or versions.prereleases or wanted is None:
        return None
    listed: dict[Version, str] = {}
    for label in project.versions:
        version = _parse(label)
        if version is not None:
            listed.setdefault(version, label)
    finals = [v for v in listed if not v.is_prerelease]
    floor = max([*finals, *([newest] if newest else [])], default=None)
    excluded = {Version(v) for v in versions.exclude}
    for version in sorted(listed, reverse=True):
        if floor is not None and version <= floor:
            break
        label = listed[version]
        files = project.files(label)
        if (
            version in excluded
            or not wanted.contains(version, prereleases=True)
            or (files and all(f.yanked for f in files))
        ):
            continue
        return label, project.pick_file(label)
    return None


def check_keys(matrix: Matrix, resolution: Resolution) -> None:
    """`anchors` and `broken` must name resolved releases (a typo would silently check less),
    and no check's gate may exclude them all (nor a branch, nor the pre-release ahead)."""
    known = {label for label, _ in resolution.releases}
    ahead = [*resolution.branches, *resolution.ahead()]
    refuse_empty_gates(matrix, [Version(label) for label in known], ahead)
    for key, names in (
        ("versions.anchors", matrix.versions.anchors),
        ("versions.broken", list(matrix.versions.broken)),
    ):
        for name in names:
            if name not in known:
                raise matrix.error(key, _why_unresolved(matrix, resolution, name))


def _why_unresolved(matrix: Matrix, resolution: Resolution, name: str) -> str:
    version = Version(name)
    if name in resolution.yanked:
        return f"{name} is yanked on the package index; remove it here"
    if version in {Version(v) for v in matrix.versions.exclude}:
        return f"{name} is also under `exclude`"
    same = [label for label, _ in resolution.releases if Version(label) == version]
    if same:
        return f"{name} is spelled {same[0]!r} in the resolved list; use that"
    return f"{name} is not a resolved release (outside `releases`, or not on the package index)"


# -- selection ---------------------------------------------------------------------------

_NOTED: set[str] = set()


def _note(matrix: Matrix, message: str) -> None:
    """Printed once per matrix per process, so the output says where the versions came from."""
    if str(matrix.path) not in _NOTED:
        _NOTED.add(str(matrix.path))
        print(f"canary: {matrix.path}: {message}", file=sys.stderr)


def _current_lock(matrix: Matrix) -> Lock | None:
    return read_lock(lock_path(matrix))


def resolution_for(matrix: Matrix, sources: Sources) -> Resolution:
    """The lock when it matches the matrix, else a fresh resolution (saying so on stderr)."""
    lock = _current_lock(matrix)
    if lock is not None and lock.spec == spec_of(matrix):
        resolution = lock.resolution
    elif not needs_index(matrix):
        resolution = unresolved(matrix)
    else:
        why = "no lock file" if lock is None else "the lock does not match `versions` any more"
        _note(matrix, f"{why}; resolving versions from the package index (`canary lock` pins them)")
        resolution = resolve(matrix, sources.index)
    check_keys(matrix, resolution)
    return resolution


def select_targets(matrix: Matrix, selection: str, sources: Sources) -> list[Target]:
    """The targets of `--versions SELECTION`: releases in PEP 440 order, then branches."""
    if is_explicit(selection):
        return _explicit(matrix, selection, sources)
    resolution = resolution_for(matrix, sources)
    files = resolution.files()
    if selection in ("releases", "all"):
        labels = list(files)
    elif selection == "anchors":
        labels = list(matrix.versions.anchors)
    elif selection == "latest":
        labels = [max(files, key=Version)] if files else []
    else:
        spec = _specifier(matrix, selection)
        labels = [label for label in files if spec.contains(Version(label), prereleases=True)]
    targets = [Target(label, file=files[label]) for label in sorted(labels, key=Version)]
    if selection == "all":
        targets += [
            Target(label, file=file, next=True) for label, file in resolution.ahead().items()
        ]
        targets += [Target(name, branch=True) for name in resolution.branches]
    return targets


def _specifier(matrix: Matrix, selection: str) -> SpecifierSet:
    try:
        return SpecifierSet(selection)
    except InvalidSpecifier:
        raise SelectionError(
            matrix.path,
            None,
            f"--versions {selection!r}: not releases|all|anchors, a PEP 440 specifier "
            "or a comma-separated list of versions and branches",
        ) from None


def _explicit(matrix: Matrix, selection: str, sources: Sources) -> list[Target]:
    """Exactly the versions named, in the lock or not; the lock only lends its files (a
    release's files never change, so even a stale lock's are right). A name that looks like a
    mistyped keyword, or a version the index has never heard of, is refused before anything
    is fetched."""
    lock = _current_lock(matrix)
    files: dict[Version, IndexFile | None] = {}
    if lock is not None:
        files = {Version(label): file for label, file in lock.resolution.locked_files().items()}
    targets = explicit_targets(selection)
    for target in targets:
        if target.branch:
            _check_branch(matrix, target.label)
    known = set(files) | set(exact_includes(matrix))
    unknown = [t.label for t in targets if t.version is not None and t.version not in known]
    if unknown:
        _check_released(matrix, unknown, sources)
    return [
        Target(t.label, file=files.get(t.version)) if t.version is not None else t for t in targets
    ]


def _check_branch(matrix: Matrix, name: str) -> None:
    """Any branch may be named, but not a near miss of a keyword or of the matrix's branches."""
    branches = branches_of(matrix)
    if name in branches:
        return
    close = difflib.get_close_matches(name, [*SELECTIONS, *branches], n=1, cutoff=0.75)
    if close:
        raise SelectionError(
            matrix.path,
            None,
            f"--versions {name}: no such keyword, version or branch of the matrix; "
            f"did you mean {close[0]}?",
        )


def _check_released(matrix: Matrix, labels: list[str], sources: Sources) -> None:
    """Versions not in the lock must at least be listed on the index (one page, cached).
    Without the page (offline, index down) the run itself reports what it cannot read."""
    try:
        project = sources.index.project(matrix.pypi)
    except SourceError:
        return
    listed = {version for label in project.versions if (version := _parse(label))}
    missing = [label for label in labels if Version(label) not in listed]
    malformed = [(label, why) for label in missing if (why := project.problem(label))]
    if malformed:  # listed only by entries too broken to use: say why, not "no such release"
        label, why = malformed[0]
        raise SelectionError(
            matrix.path,
            None,
            f"--versions {label}: {matrix.pypi} {label} is on the package index, but none of "
            f"its file entries can be used: {why}",
        )
    if missing:
        newest = max(listed, default=None)
        hint = f" (the newest is {newest})" if newest is not None else ""
        raise SelectionError(
            matrix.path,
            None,
            f"--versions {', '.join(missing)}: not a release of {matrix.pypi} on the package "
            f"index{hint}",
        )


# -- commands ----------------------------------------------------------------------------


def fresh_resolution(matrix: Matrix, sources: Sources) -> Resolution:
    """The versions the matrix names today (the index asked again, not the lock)."""
    resolution = (
        resolve(matrix, sources.index, refresh=True) if needs_index(matrix) else unresolved(matrix)
    )
    check_keys(matrix, resolution)
    return resolution


def version_listing(matrix: Matrix, resolution: Resolution) -> list[str]:
    """`canary versions MATRIX`: the resolved list, marking anchors, broken, branches and what
    is new since the lock, one line each."""
    lock = _current_lock(matrix)
    locked = None if lock is None else {*lock.resolution.labels(), *lock.resolution.ahead()}
    rows = [(label, _marks(matrix, label, locked)) for label, _ in resolution.releases]
    rows += [(label, [NEXT_MARK, *_new(label, locked)]) for label in resolution.ahead()]
    rows += [(name, ["branch", *_new(name, locked)]) for name in resolution.branches]
    rows += [(label, ["yanked, left out"]) for label in resolution.yanked]
    where = f"lock {lock.path}" if lock is not None else "no lock file (`canary lock` writes one)"
    lines = [f"{matrix.upstream}: {_count(resolution)}; {where}"]
    width = max((len(label) for label, _ in rows), default=0)
    lines += [f"{label:<{width}}  {', '.join(marks)}".rstrip() for label, marks in rows]
    if lock is not None:
        changes = _diff(lock.resolution, resolution)
        lines += [f"{label:<{width}}  gone since the lock" for label in changes["gone"]]
        left = changes["left the range"]
        lines += [f"{label:<{width}}  left the range since the lock" for label in left]
    return lines


#: how `canary versions` marks the pre-release ahead of the releases
NEXT_MARK = "next: a pre-release newer than every final release (only `--versions all`)"


def _new(label: str, locked: set[str] | None) -> list[str]:
    return ["new since the lock"] if locked is not None and label not in locked else []


def _marks(matrix: Matrix, label: str, locked: set[str] | None) -> list[str]:
    marks = ["anchor"] if label in matrix.versions.anchors else []
    reason = matrix.versions.broken.get(label)
    if reason is not None:
        marks.append(f"broken: {reason}")
    return marks + _new(label, locked)


def _diff(old: Resolution | None, new: Resolution) -> dict[str, list[str]]:
    """What a refresh changes: new labels, newly yanked, gone (the index no longer lists it),
    left the range (the index still lists it, but `releases` or `exclude` leave it out),
    releases now read from another file of theirs (a new wheel was added to the release, the
    locked one still listed as it was), releases whose locked file was replaced (no longer
    listed, or listed with other bytes, and another read instead), and releases whose file
    changed: same file name, another sha256 or size. The pre-release ahead of the releases is
    new or dropped on its own (a later one, or the final is out)."""
    old = old or Resolution()
    old_labels, new_labels = set(old.labels()), set(new.labels())
    dropped = [label for label in old.labels() if label not in new_labels | set(new.yanked)]
    was = old.locked_files()
    kept = [(label, was[label], now) for label, now in new.locked_files().items() if label in was]
    moved = [(label, was, now) for label, was, now in kept if _name(was) != _name(now)]
    old_next, new_next = old.ahead(), new.ahead()
    return {
        "new": [label for label in new.labels() if label not in old_labels],
        "new pre-release": [label for label in new_next if label not in old_next],
        "pre-release dropped": [label for label in old_next if label not in new_next],
        "yanked": [label for label in new.yanked if label not in old.yanked],
        "gone": [label for label in dropped if label not in new.listed],
        "left the range": [label for label in dropped if label in new.listed],
        "read from another file": [
            label for label, was, now in moved if _still_offered(was, new.offered.get(label, ()))
        ],
        "replaced": [
            label
            for label, was, now in moved
            if not _still_offered(was, new.offered.get(label, ()))
        ],
        "changed": [label for label, was, now in kept if _altered(was, now)],
    }


def _name(file: IndexFile | None) -> str | None:
    return None if file is None else file.filename


def _still_offered(was: IndexFile | None, offered: tuple[IndexFile, ...]) -> bool:
    """Whether the locked file is still on the index as it was locked (a release the lock
    read from no file, or one resolved without the index's listing, counts as offered)."""
    if was is None or not offered:
        return True
    return any(f.filename == was.filename and not _altered(was, f) for f in offered)


def _altered(was: IndexFile | None, now: IndexFile | None) -> bool:
    """The same file with other bytes: what a lock exists to catch. Only fields both sides
    know count (an older lock may lack a size)."""
    if was is None or now is None or was.filename != now.filename:
        return False
    return any(
        a is not None and b is not None and a != b
        for a, b in ((was.sha256, now.sha256), (was.size, now.size))
    )


def _alarms(path: object, old: Resolution, new: Resolution, labels: list[str]) -> list[str]:
    """The supply-chain alarm for each release whose locked file changed on the index: the
    same name with other bytes, or replaced (gone, or listed with other bytes) by another."""
    was, now = old.locked_files(), new.locked_files()
    lines = []
    for label in labels:
        before, after = was[label], now[label]
        if before is None or after is None:
            continue
        if before.filename == after.filename:
            what = f"{after.filename} is not the file that was locked ({_facts(before, after)})"
        else:
            listed = {f.filename: f for f in new.offered.get(label, ())}.get(before.filename)
            gone = (
                "is gone from the index"
                if listed is None
                else (f"is listed with other bytes ({_facts(before, listed)})")
            )
            what = f"{before.filename}, the file that was locked, {gone}; {after.filename} is read"
        lines.append(
            f"{path}: ALARM: {label}: {what}. A published file never changes: find out why (a "
            "compromised upload, a mirror serving other bytes) before you trust this release."
        )
    return lines


def _facts(before: IndexFile, after: IndexFile) -> str:
    return "; ".join(
        f"{key} {a} -> {b}"
        for key, a, b in (
            ("sha256", before.sha256, after.sha256),
            ("size", before.size, after.size),
        )
        if a != b
    )


@dataclass
class LockReport:
    """What `canary lock` did: one line per lock (and per alarm), and whether any is stale
    or alarmed."""

    lines: list[str] = field(default_factory=list)
    stale: bool = False
    alarmed: bool = False
    empty: bool = False  # a matrix left no version at all to lock

    def exit_code(self, check: bool) -> int:
        """1 on an alarm, on a matrix with nothing to lock, and with `check` on a stale lock;
        else 0."""
        return 1 if self.alarmed or self.empty or (check and self.stale) else 0


def refresh_locks(
    matrix_paths: list[str], check: bool, sources: Sources, accept_changed: Collection[str] = ()
) -> LockReport:
    """Refresh each lock and say what changed; with `check`, write nothing (a stale lock is
    reported). A locked file whose bytes changed on the index is an alarm either way, and its
    locked line stays until a person accepts the new bytes (`accept_changed`: release labels),
    so the alarm repeats on every refresh until then."""
    report = LockReport()
    for matrix_path in matrix_paths:
        _refresh(load_matrix(matrix_path), check, report, sources, frozenset(accept_changed))
    return report


def _held(old: Resolution, new: Resolution, labels: set[str]) -> Resolution:
    """`new` with the locked file of each of `labels` kept as it was."""
    was = old.locked_files()
    releases = [(label, was[label] if label in labels else f) for label, f in new.releases]
    ahead = new.next
    if ahead is not None and ahead[0] in labels:
        ahead = (ahead[0], was[ahead[0]])
    return Resolution(releases, list(new.branches), list(new.yanked), next=ahead)


def _refresh(
    matrix: Matrix, check: bool, report: LockReport, sources: Sources, accepted: frozenset[str]
) -> None:
    path = lock_path(matrix)
    resolution = resolve(matrix, sources.index, refresh=True)
    check_keys(matrix, resolution)
    if not resolution.releases and not resolution.branches:
        report.empty = True  # a lock of nothing would make every later check a silent no-op
        report.lines.append(f"{path}: not written: {_nothing_to_lock(matrix, resolution)}")
        return
    text = render_lock(matrix, resolution)
    try:
        old = read_lock(path)
    except MatrixError as exc:
        report.lines.append(f"{path}: the lock is corrupt ({exc})")
        old = None
    current = path.read_text(encoding="utf-8") if old is not None else None
    if text == current:
        report.lines.append(f"{path}: up to date ({_count(resolution)})")
        return
    report.stale = True
    changes = _diff(old.resolution if old else None, resolution)
    summary = "; ".join(
        f"{len(labels)} {kind} ({', '.join(labels)})" for kind, labels in changes.items() if labels
    )
    verb = "stale" if check else "written" if old is None else "updated"
    report.lines.append(
        f"{path}: {verb}: {summary or 'the versions line changed'} ({_count(resolution)})"
    )
    suspect = changes["changed"] + changes["replaced"]
    alarmed = [label for label in suspect if label not in accepted]
    if old is not None and alarmed:
        report.alarmed = True
        report.lines += _alarms(path, old.resolution, resolution, alarmed)
        report.lines.append(
            f"{path}: the locked line of {', '.join(alarmed)} is kept; once you trust the new "
            f"file, `canary lock --accept-changed VERSION` locks it"
        )
        resolution = _held(old.resolution, resolution, set(alarmed))
    report.lines += [
        f"{path}: {label}: the changed file is accepted and locked"
        for label in suspect
        if label in accepted
    ]
    if not check:
        write_lock(matrix, resolution)


def _nothing_to_lock(matrix: Matrix, resolution: Resolution) -> str:
    listed = len(resolution.listed)
    yanked = f", {len(resolution.yanked)} of them yanked" if resolution.yanked else ""
    return (
        f"no version of {matrix.pypi} to lock: the package index lists {listed} "
        f"version{'s' * (listed != 1)}{yanked}, none in versions.releases "
        f"({str(matrix.versions.releases or '') or 'none'}) and no include or branch is named"
    )


def _count(resolution: Resolution) -> str:
    releases, branches = len(resolution.releases), len(resolution.branches)
    ahead = "".join(f", next {label}" for label in resolution.ahead())
    return (
        f"{releases} release{'s' * (releases != 1)}, {branches} branch{'es' * (branches != 1)}"
        + ahead
    )
