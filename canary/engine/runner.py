"""Run matrices over their versions: open each version's tree once, judge every check."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from canary.analysis import ModuleCache, ParseError
from canary.engine.advice import advised
from canary.engine.became import Explanation, explain, held_contract
from canary.engine.bounded_regex import RegexError
from canary.engine.hints import with_absorption_warnings, with_hints
from canary.engine.interrupted import Interrupted
from canary.engine.judge import VersionRun
from canary.engine.loader import module_files
from canary.engine.outcomes import Result, RunReport, Status, UpstreamInfo
from canary.engine.remembered import Verdicts
from canary.engine.retold import Told, recalled, remember, story_key
from canary.engine.reuse import VerdictReuse
from canary.engine.transitions import Explainer, Transition, with_transitions
from canary.errors import Stopped, UsageError
from canary.matrix.model import Check, Matrix, MatrixError
from canary.matrix.targets import Target, explicit_targets, is_explicit
from canary.settings import Settings
from canary.sources.daemons import DaemonPool
from canary.sources.index_file import release_key
from canary.sources.local import LocalTree
from canary.sources.tree import SourceError, SourceKind, Tree

if TYPE_CHECKING:
    from canary.sources.context import SourceContext

#: Chooses the targets of a matrix for a `--versions` selection (`matrix.versions` provides it).
Selector = Callable[[Matrix, str], list[Target]]
#: Whether a check is judged on a version (`canary check -k`: canary.matrix.keywords)
Chooser = Callable[[Matrix, Check, Target], bool]


class ProgressSink(Protocol):
    """Told the size of the plan, then each version judged (canary.reports.progress draws it)."""

    def start(self, total: int, releases: int) -> None: ...

    def advance(self) -> None: ...

    def close(self) -> None: ...


@dataclass
class Runner:
    """Holds what one run shares: its settings, the source context built from them (HTTP
    session, cache), the module indexes and where its progress is told."""

    settings: Settings = field(default_factory=Settings.from_environment)
    #: the targets of a matrix for a selection; None: the locked releases (the index's when
    #: there is no lock), asked through this run's sources
    select: Selector | None = None
    source_path: Path | None = None
    source: str = "auto"  # auto: index, GitHub when it has no file | index only | github only
    modules: ModuleCache = field(default_factory=ModuleCache)
    remember: bool = True  # remember verdicts per release file (off to measure the parsing)
    #: verdicts reused across the run's releases by the module contents their judging read
    #: (None: every check judged on every release, to measure the parsing)
    reuse: VerdictReuse | None = field(default_factory=VerdictReuse)
    progress: ProgressSink | None = None
    #: tell what the subject of each check's latest transition became (`canary explain`
    #: does it itself, for the errors); the seconds it took (the bench weighs them)
    explains: bool = True
    explain_seconds: float = 0.0
    #: versions planned and judged so far, for the line an interrupted run ends with
    planned: int = 0
    judged: int = 0
    #: set on Ctrl-C: the threads still judging stop at their next check
    stopping: bool = False
    #: the source context to read through (a test's, with its own retry policy); else one is
    #: built from `settings` when first needed
    sources: SourceContext | None = None
    #: the check x versions judged (None: every check on every version selected)
    choose: Chooser | None = None
    _indexes_stored: bool = field(default=False, init=False, repr=False)
    #: held while a thread judges a version's checks (its release opened and prefetched):
    #: judging is CPU-bound under the GIL, so threads judging at once only took turns, at the
    #: cost of the switches (measured offline over the shipped locks: 8 threads 3 s more CPU
    #: than 1); threads opening and reading releases still wait on the network in parallel
    _judging: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def context(self) -> SourceContext:
        """Built lazily so a `--source PATH` run never touches the network or the cache."""
        if self.sources is None:
            from canary.sources.context import SourceContext

            self.sources = SourceContext(self.settings)
        if not self._indexes_stored:  # the indexes parsed from what it reads are kept there
            from canary.analysis.store import IndexStore

            self.modules.store = IndexStore(self.sources.cache)
            self._indexes_stored = True
        return self.sources

    def targets(self, matrix: Matrix, selection: str) -> list[Target]:
        """The versions of `matrix` that `selection` (`--versions`) names."""
        if self.select is not None:
            return self.select(matrix, selection)
        from canary.matrix.versions import select_targets  # a local run never needs it

        return select_targets(matrix, selection, self.context)

    def checks(self, matrix: Matrix, target: Target) -> tuple[Check, ...]:
        """The checks of `matrix` judged on `target`."""
        if self.choose is None:
            return matrix.checks
        return tuple(check for check in matrix.checks if self.choose(matrix, check, target))

    def close(self) -> None:
        """Let go of the connections of the sources this run built (not of given ones)."""
        if self.sources is not None:
            self.sources.close()

    def open_tree(self, matrix: Matrix, target: Target) -> Tree:
        if self.source_path is not None:
            return LocalTree(self.source_path, matrix.package, matrix.src)
        where = f"{matrix.upstream} {target.label}"
        if self.source == "index" and target.branch:
            raise SourceError(f"{where}: a branch is read from GitHub, and --source is index")
        if not target.branch and self.source != "github":
            release = self.context.release_tree(matrix.pypi, target.label, target.file)
            if release is not None:
                return release
            if self.source == "index":
                raise SourceError(f"{where}: no readable file on the package index")
        if not matrix.github:
            why = "a branch" if target.branch else "not read from the package index"
            raise SourceError(f"{where}: {why}, and the matrix names no `github` repository")
        ref = target.label if target.branch else matrix.tag.format(version=target.label)
        tree = self.context.github_tree(matrix.github, ref, matrix.src)
        if not matrix.src and _only_under_src(tree, matrix.package):
            raise SourceError(
                f"{where}: {matrix.github} keeps the package under src/ and the matrix has no "
                "`src:`; set src: src"
            )
        return tree

    def verdicts(self, matrix: Matrix, target: Target) -> Verdicts | None:
        """The remembered verdicts of a locked release file read from the index (the only
        source whose content a hash pins down); None for branches, local and GitHub sources."""
        file = target.file
        if not self.remember or self.source_path is not None or self.source == "github":
            return None
        if target.branch or file is None or not file.sha256:
            return None
        return Verdicts(self.context.cache, release_key(matrix.pypi, file))

    def version_run(
        self, matrix: Matrix, target: Target, verdicts: Verdicts | None = None, hints: bool = True
    ) -> VersionRun:
        """One version's checks; with verdicts that cover them all, the tree is not opened
        (without `hints`: those that answer for a status only count too)."""
        checks = self.checks(matrix, target)
        if _covered(verdicts, checks, target, hints):
            tree: Tree | SourceError = _Deferred(lambda: self.open_tree(matrix, target))
            return VersionRun(matrix, target, tree, self.modules, verdicts, self.reuse)
        try:
            tree = self.open_tree(matrix, target)
        except SourceError as exc:
            tree = exc
        if not isinstance(tree, SourceError):  # neighbouring members in one request each
            # best effort: each check reads its own modules and reports their own fault
            with contextlib.suppress(SourceError):
                tree.prefetch(module_paths(checks))
        return VersionRun(matrix, target, tree, self.modules, verdicts, self.reuse)

    def judge(self, matrix: Matrix, target: Target) -> list[Result]:
        """Every check of the matrix on one version (and remember the verdicts)."""
        return self._judge(matrix, target, self.verdicts(matrix, target))

    def _judge(self, matrix: Matrix, target: Target, verdicts: Verdicts | None) -> list[Result]:
        checks = self.checks(matrix, target)
        try:
            version_run = self.version_run(matrix, target, verdicts)
        except Exception as exc:  # one bad input must not abort the whole run
            results = [unjudged(matrix, target, check, exc) for check in checks]
        else:
            with self._judging:
                results = []
                for check in checks:
                    if self.stopping:
                        raise Stopped
                    try:
                        results.append(version_run.result(check))
                    except Exception as exc:
                        results.append(unjudged(matrix, target, check, exc))
            if verdicts is not None:
                verdicts.save()
        self.judged += 1  # under the GIL; only the interrupted line reads it
        if self.progress is not None:
            self.progress.advance()
        return results

    def judge_all(self, plan: list[tuple[Matrix, Target]]) -> list[list[Result]]:
        """The results of each (matrix, version), in plan order. Versions that need the network
        or the parser go to the thread pool, unless the run is offline; the rest (a warm run:
        all of them) are answered in this thread, where hand-offs would cost more than they
        save."""
        self.planned += len(plan)
        try:
            return self._judge_all(plan)
        except KeyboardInterrupt:
            raise self.interrupted() from None

    def _judge_all(self, plan: list[tuple[Matrix, Target]]) -> list[list[Result]]:
        batches: dict[int, list[Result]] = {}
        pending: dict[int, Verdicts | None] = {}
        for at, (matrix, target) in enumerate(plan):
            verdicts = self.verdicts(matrix, target)
            if _covered(verdicts, self.checks(matrix, target), target):
                batches[at] = self._judge(matrix, target, verdicts)
            else:
                pending[at] = verdicts

        def judge(at: int) -> list[Result]:
            return self._judge(*plan[at], pending[at])

        if pending and self.settings.offline:
            # nothing to wait for but the disk: more threads only took turns on the GIL while
            # opening releases (a re-judge of the shipped matrices: 14.3, 15.2 s of CPU with 8
            # threads, 10.6, 12.6 s in this one, and no longer)
            batches.update((at, judge(at)) for at in pending)
        elif pending:
            # daemon threads: Ctrl-C must not wait for a read stuck on a slow server
            pool = DaemonPool(min(self.settings.jobs, len(pending)), "canary-version")
            try:
                batches.update(zip(pending, pool.map(judge, pending), strict=True))
            finally:
                pool.shutdown()
        return [batches[at] for at in range(len(plan))]

    def run(self, matrices: list[Matrix], selection: str) -> RunReport:
        try:
            return self._run(matrices, selection)
        except KeyboardInterrupt:  # listing the versions, or telling what failures became
            raise self.interrupted() from None

    def interrupted(self) -> Interrupted:
        """After Ctrl-C: the threads still at work are told to stop; how far the run got."""
        self.stopping = True
        return Interrupted(self.judged, self.planned)

    def _run(self, matrices: list[Matrix], selection: str) -> RunReport:
        started = time.perf_counter()
        plan = [(m, t) for m in matrices for t in self.targets(m, selection)]
        if not plan and matrices:  # like pytest's exit 5: nothing collected is a mistake
            where = ", ".join(str(m.path) for m in matrices)
            raise MatrixError(where, None, f"--versions {selection}: selects no version to check")
        if self.choose is not None:
            plan = [(m, t) for m, t in plan if self.checks(m, t)]
            if not plan:
                raise UsageError("-k selects no check x version of the matrices given")
        if self.progress is not None:
            self.progress.start(len(plan), sum(not t.branch for _, t in plan))
        upstreams = {
            m.upstream: upstream_info(m, [t for mm, t in plan if mm is m]) for m in matrices
        }
        results = self.conclude(plan, self.judge_all(plan))
        stats = self.stats()
        stats["seconds"] = round(time.perf_counter() - started, 3)
        return RunReport(results=results, stats=stats, upstreams=upstreams)

    def conclude(
        self,
        plan: list[tuple[Matrix, Target]],
        batches: list[list[Result]],
    ) -> list[Result]:
        """The judged results (`judge_all`'s batches for `plan`, in order) read across each
        check's versions: the hints, the warnings of keywords gone to **kwargs, and the
        transitions with what their subjects became."""
        order: dict[str, list[str]] = {}
        for matrix, target in plan:  # each matrix's targets come in check order
            order.setdefault(matrix.upstream, []).append(target.label)
        accepts = {
            (matrix.upstream, check.id): check.contract.accepts
            for matrix in {id(m): m for m, _ in plan}.values()
            for check in matrix.checks
            if check.contract is not None and check.contract.accepts
        }
        results = with_hints([result for batch in batches for result in batch])
        results = with_absorption_warnings(results, accepts, order)
        explaining = time.perf_counter()
        results = with_transitions(results, order, self._explainer(plan))
        self.explain_seconds += time.perf_counter() - explaining
        return results

    def _explainer(self, plan: list[tuple[Matrix, Target]]) -> Explainer:
        """What each transition's subject became, read from both versions, several at once
        (None where a source fault keeps it from being told: the failure is reported all the
        same); nothing unless `explains`."""
        where = {(m.upstream, t.label): (m, t) for m, t in plan}

        def told(transition: Transition) -> Told | None:
            if self.stopping:
                raise Stopped
            matrix, old = where[transition.upstream, transition.last_pass]
            new = where[transition.upstream, transition.first_fail][1]
            check = next(c for c in matrix.checks if c.id == transition.check)
            key = self._story_key(matrix, check, old, new)
            if key is not None and (known := recalled(self.context.cache, key)) is not None:
                return known
            try:
                found = self.explain(matrix, check, old, new)
            except (SourceError, ParseError, RegexError):
                return None
            if key is not None:
                remember(self.context.cache, key, (found.became, found.diff))
            return found.became, found.diff

        def tell_all(transitions: list[Transition]) -> list[Told | None]:
            if not self.explains or not transitions:
                return [None] * len(transitions)
            pool = DaemonPool(min(self.settings.jobs, len(transitions)), "canary-explain")
            try:
                return pool.map(told, transitions)
            finally:
                pool.shutdown()

        return tell_all

    def _story_key(self, matrix: Matrix, check: Check, old: Target, new: Target) -> str | None:
        """Where a transition's story is remembered, as verdicts are (index files only)."""
        if not self.remember or self.source_path is not None or self.source == "github":
            return None
        return story_key(matrix.pypi, check, old, new)

    def explain(
        self, matrix: Matrix, check: Check, old: Target, new: Target, for_explain: bool = False
    ) -> Explanation:
        """What `check`'s subject became on `new`, having held on `old` (`for_explain`: as
        explain tells it, canary.engine.advice); SourceError/ParseError: a version unread."""
        runs = [
            VersionRun(matrix, target, self.open_tree(matrix, target), self.modules)
            for target in (old, new)
        ]
        contract = held_contract(check, runs[0])
        return (advised if for_explain else explain)(contract, runs[0], runs[1])

    def stats(self) -> dict[str, float]:
        if self.sources is None:
            return {"requests": 0, "bytes_downloaded": 0, "cache_hits": 0}
        counts: dict[str, float] = dict(self.context.stats.as_dict())
        return counts


def _covered(
    verdicts: Verdicts | None, checks: tuple[Check, ...], target: Target, hints: bool = True
) -> bool:
    """Whether remembered verdicts answer every check judged on this release."""
    if verdicts is None or target.version is None:
        return False
    return verdicts.covers(checks, target.version, hints)


class _Deferred:
    """A tree opened on first read, so a version answered from its verdicts is never opened."""

    kind = SourceKind.INDEX

    def __init__(self, open_tree: Callable[[], Tree]) -> None:
        self._open = open_tree
        self._tree: Tree | None = None

    def _opened(self) -> Tree:
        if self._tree is None:
            self._tree = self._open()
        return self._tree

    def read(self, path: str) -> bytes | None:
        return self._opened().read(path)

    def read_meta(self, path: str) -> bytes | None:
        return self._opened().read_meta(path)

    def files(self) -> list[str] | None:
        """Only an opened tree lists its files: a listing (for hints) is no reason to open it."""
        return self._tree.files() if self._tree is not None else None

    def prefetch(self, paths: Iterable[str]) -> None:
        if self._tree is not None:  # asking for files ahead is no reason to open it
            self._tree.prefetch(paths)


def unjudged(matrix: Matrix, target: Target, check: Check, exc: Exception) -> Result:
    """The `error` for a check an unforeseen fault kept from being judged: the rest of the
    run goes on, and the detail says what happened so it can be reported."""
    detail = f"canary could not judge this: {type(exc).__name__}: {str(exc)[:300]}"
    return Result(matrix.upstream, check.id, target.label, Status.ERROR, detail)


def _only_under_src(tree: Tree, package: str) -> bool:
    """A repository with a src/ layout read as if the package sat at its top: every check
    would fail for a reason that is no contract's."""
    top = package.split(".")[0]
    if tree.read(f"{top}/__init__.py") is not None or tree.read(f"{top}.py") is not None:
        return False
    return tree.read_meta(f"src/{top}/__init__.py") is not None


def module_paths(checks: Iterable[Check]) -> list[str]:
    """Every file the checks may read, in both module layouts."""
    modules = {
        contract.module
        for check in checks
        for contract in ((check.contract,) if check.contract else check.any_of)
    }
    return [path for module in sorted(modules) for path, _ in module_files(module)]


def upstream_info(matrix: Matrix, targets: list[Target]) -> UpstreamInfo:
    labels = tuple(t.label for t in targets)
    return UpstreamInfo(
        versions=labels,
        anchors=tuple(v for v in matrix.versions.anchors if v in labels),
        broken=tuple(v for v in matrix.versions.broken if v in labels),
        branches=tuple(t.label for t in targets if t.branch),
        next=tuple(t.label for t in targets if t.next),
        matrix=str(matrix.path),
        lines={check.id: check.line for check in matrix.checks},
        declared=str(matrix.versions.declared or ""),
    )


def local_selector(folder: Path) -> Selector:
    """A folder is one version: the one named on the command line, else the one it declares."""

    def select(matrix: Matrix, selection: str) -> list[Target]:
        if is_explicit(selection):
            return explicit_targets(selection)
        from canary.analysis.declared import VersionUnknown, declared_version

        try:
            tree = LocalTree(folder, matrix.package, matrix.src)
            target = Target(str(declared_version(tree, matrix.package)))
        except (SourceError, VersionUnknown):
            target = Target("local", branch=True)
        if selection != "releases":
            print(
                f"canary: {folder} is one version ({target.label}); --versions {selection} "
                "applies to the package index, not to a local source",
                file=sys.stderr,
            )
        return [target]

    return select
