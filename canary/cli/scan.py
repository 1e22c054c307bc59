"""`canary scan`: propose matrix checks from what a downstream codebase patches.

The front end: the arguments, where matrices go (`--output`, `--merge`), what is printed and
the exit status; the scan itself is canary.scan's (through canary.api.scan)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from canary import api
from canary.cli.help import add_upstream, split_names
from canary.errors import ExitCode, UsageError
from canary.safety.untrusted import showable

if TYPE_CHECKING:  # scan is imported when it runs
    from canary.scan.writing.merging import Existing


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="the downstream codebase (read, never run)")
    add_upstream(parser)
    parser.add_argument(
        "--output", metavar="DIR", help="write DIR/NAME.yaml (DIR is created; never overwrites)"
    )
    parser.add_argument("--merge", metavar="MATRIX_DIR", help="append only the missing checks")
    parser.add_argument(
        "--source",
        metavar="DIR",
        help="a site-packages or checkout of the upstreams, read instead of the package index",
    )
    add_exclude(parser)


def add_exclude(parser: argparse.ArgumentParser) -> None:
    """`--exclude GLOB`, shared with `canary init` (which scans the same way)."""
    parser.add_argument(
        "--exclude",
        action="append",
        metavar="GLOB",
        help="leave these files or folders out (repeatable; tests/, scripts/, ... already are)",
    )


def scan_progress(offline: bool = False) -> api.ScanProgressFactory | None:
    """The status line scan and init draw on a terminal's stderr (as `canary check` does)."""
    if not sys.stderr.isatty():
        return None
    from canary.reports.progress import Progress, is_cold
    from canary.settings import default_cache_dir

    root = default_cache_dir()
    cold = root if is_cold(root) and not offline else None
    return lambda downloaded: Progress(sys.stderr, downloaded, cold_cache=cold, command="scan")


def run(args: argparse.Namespace) -> int:
    from canary.compat.malloc import fewer_arenas
    from canary.scan.upstream.names import upstream_names
    from canary.scan.writing.merging import matrices_in

    fewer_arenas()  # before the fetch threads start: what they free is not held apart
    folder = output_folder(args.output, args.merge)  # a bad --output before a long scan
    existing = matrices_in(folder) if args.merge else {}
    upstreams = sorted({*upstream_names(split_names(args.upstream)), *existing})
    found = api.scan(
        args.path,
        upstreams,
        source=args.source,
        exclude=args.exclude or (),
        progress=scan_progress() if args.source is None else None,
    )
    return deliver(found, args.path, folder, args.output, args.merge, existing, sys.stdout)


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


def deliver(
    found: api.Scan,
    path: str,
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
    from canary.scan.upstream.names import matrix_file
    from canary.scan.writing.emit import MergeError
    from canary.scan.writing.files import merge_into, write_new
    from canary.scan.writing.notes import notes

    out.writelines(f"{note}\n" for note in notes(found.result, path, []))
    status = 0
    for upstream in sorted(found.upstreams):
        matrix = found.proposed.get(upstream)
        if matrix is None:
            out.writelines(f"{note}\n" for note in notes(None, path, [upstream]))
            continue
        count = len(matrix.proposals)
        if output and (folder / matrix_file(upstream)).exists():
            status = _refused(f"{folder / matrix_file(upstream)} exists; use --merge")
        elif output or (merge and upstream not in existing):
            out.write(f"wrote {showable(str(write_new(folder, matrix)))}: {count} checks\n")
        elif upstream in existing:
            try:
                target, added = merge_into(existing[upstream], matrix)
            except MergeError as exc:
                status = _refused(str(exc))
                continue
            shown = showable(str(target))
            out.write(f"merged into {shown}: {added} new checks of {count} proposed\n")
        else:
            out.write(f"---\n# matrices/{matrix_file(upstream)}\n")
            out.write(matrix.text())
    return status


def _refused(message: str) -> int:
    """One matrix not written: said on stderr, as every command says a usage error."""
    print(f"canary: scan: {showable(message)}", file=sys.stderr)
    return int(ExitCode.USAGE_ERROR)
