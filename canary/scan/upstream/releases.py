"""The releases a scan reads: the newest in the client's range and its lowest supported one.

Proposals are placed on the newest release (the one users install today) and judged on both,
through the same sources and engine as `canary check`: range reads of the wheels, the cache,
nothing installed. `--source DIR` replaces both by one local folder.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

from canary.engine.judge import VersionRun
from canary.engine.runner import Runner
from canary.matrix.model import Matrix, MatrixError, load_matrix
from canary.matrix.targets import Target
from canary.matrix.versions import resolve
from canary.reports.progress import Progress
from canary.scan.upstream.places import Places
from canary.scan.upstream.view import Elsewhere, UpstreamView
from canary.scan.writing.emit import KNOWN_REPOS, Releases, render_matrix
from canary.sources.index_file import release_key
from canary.sources.repository import release_repository
from canary.sources.tree import SourceError

#: Without a declared range, a new matrix covers this many of the newest releases.
RECENT_WINDOW = 10
#: Most releases between the ends opened to find the class of a method neither end has.
MAX_PROBES = 24


@dataclass
class Reading:
    """The releases of one upstream a scan reads; `problem` says why none could be.

    `runs` are the newest and the lowest release in range (or the local source); `labels`
    every release in range, oldest first, each opened on demand (`judging`) to find where a
    contract starts or stops holding.
    """

    releases: Releases
    runs: list[VersionRun] = field(default_factory=list)
    problem: str = ""
    labels: list[str] = field(default_factory=list)
    _judging: Callable[[Matrix, str, bool], VersionRun] | None = None
    places: list[Places] = field(default_factory=list)  # one per run, remembered per release
    #: OWNER/NAME of the repository the newest release's metadata names, for an upstream
    #: emit.KNOWN_REPOS lacks (canary.sources.repository); None: not known or not read
    repository: str | None = None
    progress: Progress | None = None  # the status line, told of each check bisection places
    elsewhere: Elsewhere | None = None  # a method's class on releases between the ends
    probes: list[str] = field(default_factory=list)  # releases between, looked in newest first
    opened: Callable[[str], VersionRun] | None = None  # a probe's run, each opened once
    remembered: Callable[[str], Places] | None = None  # what wildcards.py found on a release
    #: the releases before the range, oldest first, resolved on first call (a check broken on
    #: every release in range is looked for there, `judging` judges them as it does `labels`)
    older: Callable[[], list[str]] = lambda: []

    def walked(self) -> Iterator[VersionRun]:
        """The ends, then the releases between the newest of each minor series first (as a
        method is looked for: `_probes`), each opened only when the walk gets to it."""
        yield from self.runs
        for label in self.probes if self.opened is not None else ():
            yield self.opened(label)  # type: ignore[misc]

    @property
    def views(self) -> list[UpstreamView]:
        places = self.places or [Places() for _ in self.runs]
        return [
            UpstreamView(
                run.module, run.target.label, run.hierarchy.namespace, where.known, self.elsewhere
            )
            for run, where in zip(self.runs, places, strict=True)
        ]

    def keep_places(self) -> None:
        for where in self.places:
            where.keep()

    def judging(self, matrix: Matrix, label: str, hints: bool = True) -> VersionRun:
        """The run that judges `matrix` on release `label` (an end, or one of `labels`);
        without `hints`, for statuses alone (VersionRun.judge)."""
        if self._judging is None:  # the local source: judged as read, nothing remembered
            return next(run for run in self.runs if run.target.label == label)
        return self._judging(matrix, label, hints)


def load_text(upstream: str, text: str) -> Matrix:
    """A matrix from its text, validated as `canary check` would load the file (but for an
    empty `checks` list: a header, or a scan that proposes nothing)."""
    with tempfile.TemporaryDirectory(prefix="canary-scan-") as folder:
        path = Path(folder) / f"{upstream}.yaml"
        path.write_text(text, encoding="utf-8")
        return load_matrix(path, checks_required=False)


def _ends(labels: list[str]) -> list[str]:
    """The newest and the lowest of the labels (one when they are the same)."""
    ordered = sorted(labels, key=Version, reverse=True)
    return list(dict.fromkeys([ordered[0], ordered[-1]])) if ordered else []


def read_releases(
    upstream: str, releases: Releases | None, runner: Runner, progress: Progress | None = None
) -> Reading:
    """Open the newest and lowest release in range (or the local source) for `upstream`;
    `progress` counts each release read (and is told of the bisections: `Reading.progress`)."""
    header = load_text(upstream, render_matrix(upstream, [], releases or Releases(">=0")))
    if runner.source_path is not None:
        label = "local"
        target = Target(label, branch=True)
        reading = Reading(releases or Releases())
        reading.runs = [runner.version_run(header, target)]
        return reading
    try:
        files = resolve(header, runner.context.index).files()
        targets = [Target(label, file=file) for label, file in files.items()]
    except (SourceError, MatrixError, OSError) as exc:
        return Reading(releases or Releases(), problem=f"releases not read: {exc}")
    if not targets:
        return Reading(releases or Releases(), problem="no release of it in range")
    if releases is None:
        window = sorted((t.label for t in targets), key=Version)[-RECENT_WINDOW:]
        releases = Releases(
            f">={window[0]}",
            f"no declared range found: the {len(window)} newest releases; widen to what you"
            " support",
        )
        targets = [t for t in targets if t.label in window]
    by_label = {t.label: t for t in targets}
    runs = []
    for label in _ends(list(by_label)):
        runs.append(runner.version_run(header, by_label[label]))
        if progress is not None:
            progress.advance()
    broken = [str(run.tree) for run in runs if isinstance(run.tree, SourceError)]
    if broken:
        return Reading(releases, problem=f"releases not read: {broken[0]}")
    repository = None
    newest = runs[0].tree
    if upstream not in KNOWN_REPOS and not isinstance(newest, SourceError):
        with contextlib.suppress(SourceError):  # where the newest release says its source is
            repository = release_repository(newest)
    ends = {run.target.label: run for run in runs}

    def judging(matrix: Matrix, label: str, hints: bool = True) -> VersionRun:
        """Answered from the verdicts remembered for the release file where they cover the
        checks (a release between the ends is then not even opened); an end's run keeps the
        modules placing the proposals read."""
        target = by_label[label]
        verdicts = runner.verdicts(matrix, target)
        if label not in ends:
            return runner.version_run(matrix, target, verdicts, hints)
        ends[label].verdicts = verdicts
        return ends[label]

    places = [_places(runner, header.pypi, run.target) for run in runs]
    labels = sorted(by_label, key=Version)
    older = _older(upstream, labels[0], runner, by_label)

    probes = _probes(labels, set(ends))
    opened: dict[str, VersionRun] = {}

    def open_run(label: str) -> VersionRun:
        if label not in opened:
            opened[label] = runner.version_run(header, by_label[label])
        return opened[label]

    return Reading(
        releases,
        runs,
        labels=labels,
        _judging=judging,
        places=places,
        elsewhere=_elsewhere(open_run, probes),
        progress=progress,
        probes=probes,
        opened=open_run,
        remembered=lambda label: _places(runner, header.pypi, by_label[label], "wild"),
        repository=repository,
        older=older,
    )


def _older(
    upstream: str, lowest: str, runner: Runner, by_label: dict[str, Target]
) -> Callable[[], list[str]]:
    """The releases before `lowest`, oldest first, resolved on the first call and added to
    `by_label` (so that `Reading.judging` judges them as it does those in range)."""
    before: list[str] = []

    def older() -> list[str]:
        if not before:
            earlier = load_text(upstream, render_matrix(upstream, [], Releases(f"<{lowest}")))
            try:
                files = resolve(earlier, runner.context.index).files()
            except (SourceError, MatrixError, OSError):
                files = {}
            for label, file in files.items():
                by_label.setdefault(label, Target(label, file=file))
            before.extend(sorted(files, key=Version) or [""])  # "": resolved, none
        return [label for label in before if label]

    return older


def _probes(labels: list[str], ends: set[str]) -> list[str]:
    """The releases between the ends a method is looked for on: the newest of each minor
    series, newest first (a name that lived only mid-range lived a minor series or more),
    spread evenly over the range when there are more series than MAX_PROBES."""
    newest: dict[tuple[int, ...], str] = {}
    for label in labels:  # oldest first: the last of a series wins
        newest[Version(label).release[:2]] = label
    series = [label for label in reversed(newest.values()) if label not in ends]
    if len(series) <= MAX_PROBES:
        return series
    step = (len(series) - 1) / (MAX_PROBES - 1)
    return list(dict.fromkeys(series[round(i * step)] for i in range(MAX_PROBES)))


def _elsewhere(open_run: Callable[[str], VersionRun], probes: list[str]) -> Elsewhere:
    """(module, method) -> the class that defines it on the newest probed release that has
    one; each release opened once, each answer remembered."""
    views: dict[str, UpstreamView | None] = {}
    answers: dict[tuple[str, str], str | None] = {}

    def view(label: str) -> UpstreamView | None:
        if label not in views:
            run = open_run(label)
            broken = isinstance(run.tree, SourceError)
            views[label] = (
                None if broken else UpstreamView(run.module, label, run.hierarchy.namespace)
            )
        return views[label]

    def find(module: str, method: str) -> str | None:
        if (module, method) not in answers:
            owners = (v.class_with(module, method) for v in map(view, probes) if v is not None)
            owner = next((o for o in owners if o is not None), None)
            answers[module, method] = owner.name if owner else None
        return answers[module, method]

    return find


def _places(runner: Runner, project: str, target: Target, kind: str = "places") -> Places:
    """The places remembered for a release file read from the index (none for others)."""
    if runner.source_path is not None or target.file is None or not target.file.sha256:
        return Places()
    return Places(runner.context.cache, release_key(project, target.file), kind)
