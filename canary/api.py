"""canary as a library: what each command does, with typed arguments, returning data and
printing nothing.

The command line (`canary.cli`), the GitHub Action (`canary.action`) and `canary init` are
front ends over these functions; none of them runs another's command line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from canary._version import __version__
from canary.analysis import ModuleCache
from canary.engine.interrupted import Interrupted
from canary.engine.outcomes import RunReport
from canary.engine.runner import ProgressSink, Runner, Selector, local_selector
from canary.errors import UsageError
from canary.matrix.files import find_matrices, load_matrices
from canary.matrix.keywords import Keywords
from canary.matrix.lock import Resolution
from canary.matrix.model import Matrix, load_matrix
from canary.settings import Settings
from canary.sources.local import LocalTree
from canary.sources.tree import SourceError

if TYPE_CHECKING:  # scan and lock are imported when they run: a warm check never needs them
    from canary.matrix.versions import LockReport
    from canary.reports.progress import Progress
    from canary.scan.downstream.package import ScanResult
    from canary.scan.proposing.matrices import Proposed

#: `--source` values that name no folder
REMOTE_SOURCES = ("auto", "index", "github")

#: given how many bytes the run has downloaded so far, a sink for its progress
ProgressFactory = Callable[[Callable[[], float]], ProgressSink | None]
#: the same for scan, whose line also names the upstreams it reads (the terminal's Progress)
ScanProgressFactory = Callable[[Callable[[], float]], "Progress | None"]


def check(
    matrices: Sequence[str | Path] = (),
    *,
    versions: str = "releases",
    source: str = "auto",
    settings: Settings | None = None,
    progress: ProgressFactory | None = None,
    keywords: str | None = None,
) -> RunReport:
    """Judge every check of `matrices` (paths, folders or names; none: matrices/*.yaml) on
    the versions `versions` selects, read from `source` (auto, index, github or a folder),
    configured by `settings` (the environment's when not given); with `keywords` (a pytest
    `-k` expression) only the check x versions it selects."""
    from canary.analysis.pool import ParsePool
    from canary.sources.context import SourceContext

    settings = settings if settings is not None else Settings.from_environment()
    choose = Keywords.compile(keywords).selects if keywords is not None else None
    loaded = load_matrices(matrices)
    select, folder = _selector(source, loaded)
    sources = SourceContext(settings) if folder is None else None

    def downloaded() -> float:
        return sources.stats.as_dict().get("bytes_downloaded", 0) if sources else 0

    pool = ParsePool()
    runner = Runner(
        settings=settings,
        select=select,
        source_path=folder,
        source=source,
        sources=sources,
        modules=ModuleCache(parse=pool),
        progress=progress(downloaded) if progress is not None else None,
        choose=choose,
    )
    try:
        report = runner.run(loaded, versions)
    except Interrupted:
        pool.stop()
        raise
    finally:
        pool.close()
        runner.close()
        if runner.progress is not None:
            runner.progress.close()
    report.run = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "canary": __version__,
    }
    if folder is None:  # where a user can look at and trim what the run read
        report.run["cache"] = str(settings.cache_dir)
    return report


def _selector(source: str, matrices: list[Matrix]) -> tuple[Selector | None, Path | None]:
    """How the versions are chosen (None: the locked releases) and the local folder, if any."""
    if source in REMOTE_SOURCES:
        return None, None
    folder = Path(source)
    if not folder.is_dir():
        raise UsageError(f"--source {source}: not a folder (or auto|index|github)")
    missing = [m.package for m in matrices if not _holds(folder, m)]
    if missing:
        raise SourceError(
            f"--source {source}: no package {', '.join(missing)} in it (looked at the "
            "top, under the matrix's `src` and under src/); name the matrix it stands in for"
        )
    return local_selector(folder), folder


def _holds(folder: Path, matrix: Matrix) -> bool:
    top = matrix.package.split(".")[0]
    root = LocalTree(folder, matrix.package, matrix.src).root
    return (root / top).is_dir() or (root / f"{top}.py").is_file()


def lock(
    matrices: Sequence[str | Path] = (),
    *,
    check: bool = False,
    accept_changed: Sequence[str] = (),
    settings: Settings | None = None,
) -> LockReport:
    """Refresh the lock beside each matrix (with `check`, write nothing); the report says what
    changed and `exit_code(check)` what `canary lock` exits with. A release whose locked file
    changed keeps its locked line unless its label is in `accept_changed`."""
    from canary.matrix.versions import refresh_locks
    from canary.sources.context import SourceContext

    paths = [str(p) for p in find_matrices(matrices)]
    with SourceContext(settings) as sources:
        return refresh_locks(paths, check, sources, accept_changed)


def resolve(matrix: str | Path | Matrix, *, settings: Settings | None = None) -> Resolution:
    """The versions a matrix names today: its `versions` resolved against the package index
    afresh (the lock is not read)."""
    from canary.matrix.versions import fresh_resolution
    from canary.sources.context import SourceContext

    loaded = matrix if isinstance(matrix, Matrix) else load_matrix(matrix)
    with SourceContext(settings) as sources:
        return fresh_resolution(loaded, sources)


@dataclass
class Scan:
    """What `scan` found: the uses of each upstream and a proposed matrix per upstream used."""

    result: ScanResult
    proposed: dict[str, Proposed]
    upstreams: list[str]


def scan(
    path: str | Path,
    upstreams: Iterable[str] | None = None,
    *,
    source: str | Path | None = None,
    settings: Settings | None = None,
    exclude: Sequence[str] = (),
    progress: ScanProgressFactory | None = None,
) -> Scan:
    """Read a downstream codebase (never import it) and propose the checks each upstream it
    patches needs, placed and judged on the releases it declares (or the `source` folder);
    `exclude` globs leave files out besides a repository's tests, scripts, examples and docs."""
    from canary.scan.phases import scan as scan_tree
    from canary.scan.upstream.names import upstream_names

    root = Path(path)
    if not root.exists():
        raise UsageError(f"scan: {path}: no such file or folder")
    names = upstream_names(upstreams)
    if source is not None and not Path(source).is_dir():
        raise UsageError(f"scan: --source {source}: not a folder")
    folder = Path(source) if source is not None else None
    settings = settings if settings is not None else Settings.from_environment()
    result, proposed = scan_tree(
        root, names, folder, exclude=tuple(exclude), settings=settings, progress=progress
    )
    return Scan(result, proposed, names)
