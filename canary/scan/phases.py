"""scan(): the phases in order, reading the downstream, reading the upstream, proposing.

What `canary scan` and `canary init` (through `canary.api.scan`) run; writing is theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from canary.engine.runner import Runner
from canary.reports.progress import Progress
from canary.safety.untrusted import showable
from canary.scan.downstream.findings import Role
from canary.scan.downstream.package import ScanResult, scan_path
from canary.scan.downstream.requirements import declared_releases
from canary.scan.proposing.attached import attached, subject_order
from canary.scan.proposing.matrices import Proposed, unplaced_by_upstream, unplaced_sites
from canary.scan.proposing.propose import propose
from canary.scan.upstream.anywhere import placed_anywhere
from canary.scan.upstream.names import DEFAULT_UPSTREAMS
from canary.scan.upstream.releases import Reading, read_releases
from canary.scan.upstream.wildcards import placed_wild
from canary.scan.writing.emit import Releases
from canary.settings import Settings


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
        result.findings = placed_anywhere(result.findings, readings, names)  # of no known class
        placed = [f for f in result.findings if f.role is not Role.UNPLACED]
        proposed = propose(placed, result.modules, views)
        released = {name: views[name] for name, reading in readings.items() if reading.labels}
        for name, extra in attached(placed, released, proposed).items():
            proposed[name] = sorted([*proposed.get(name, []), *extra], key=subject_order)
        own, untold = unplaced_by_upstream(result.findings, names)
        for reading in readings.values():
            reading.keep_places()
        matrices = {
            name: Proposed(
                name,
                proposed.get(name, []),
                readings[name].releases if name in readings else releases[name] or Releases(),
                readings.get(name),
                not_scanned=result.left_out,
                unplaced=unplaced_sites(own.get(name, [])),
            )
            for name in used
            if proposed.get(name)
        }
        untold += [f for name, sites in own.items() if name not in matrices for f in sites]
        result.unplaced = unplaced_sites(untold, "of what, nor of which upstream")
        for matrix in matrices.values():
            matrix.settle()
    finally:
        if status is not None:
            status.close()
    return result, matrices
