"""The steps every mode runs: plan (matrices, cache key), lock, check, verdict.

The steps call canary's library (`canary.api`, and `canary.reports` to draw saved results), with
the arguments a user would give the commands; they only choose those arguments and carry the
results to GitHub. Each step is its own process: the engine and the reports are imported by
the steps that use them, so the plan starts without them.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from canary.action.runner import (
    ActionError,
    add_summary,
    command,
    echo,
    flag_input,
    quoted_stderr,
    set_output,
    text_input,
    work_dir,
)
from canary.safety.untrusted import showable

if TYPE_CHECKING:
    from canary.engine.outcomes import Result

DEFAULT_MATRICES = "canary"
CACHE_PREFIX = "canary-v1"
ARTIFACTS = {"check": "canary-results", "nightly": "canary-nightly-results"}


def mode() -> str:
    chosen = text_input("mode", "check")
    if chosen not in ARTIFACTS:
        raise ActionError(f"input mode: expected check or nightly, got {chosen!r}")
    return chosen


def artifact_name() -> str:
    """Each mode its own artifact, so the nightly's baseline is never a PR run's results."""
    return text_input("results-artifact", ARTIFACTS[mode()])


def matrix_files(spec: str | None = None) -> list[Path]:
    """The `matrices` input: folders (their *.yaml), files or globs, separated by white space."""
    spec = spec if spec is not None else text_input("matrices", DEFAULT_MATRICES)
    found: dict[Path, None] = {}
    for entry in spec.split():
        path = Path(entry)
        if path.is_dir():
            matched = sorted(path.glob("*.yaml"))
        elif path.is_file():
            matched = [path]
        else:
            matched = sorted(p for p in map(Path, glob.glob(entry)) if p.is_file())
        if not matched:
            raise ActionError(f"input matrices: {entry!r} names no matrix file")
        found.update(dict.fromkeys(matched))
    if not found:
        raise ActionError("input matrices is empty")
    return list(found)


def lock_files(matrices: list[Path]) -> list[Path]:
    from canary.matrix.lock import lock_path
    from canary.matrix.model import MatrixError, load_matrix

    try:
        return [lock_path(load_matrix(path)) for path in matrices]
    except MatrixError as exc:
        raise ActionError(f"{exc}") from None


def cache_key(matrices: list[Path]) -> str:
    """Keyed on the lock files: releases are immutable, so until a lock moves nothing new is
    fetched. A missing lock counts too, so adding one changes the key."""
    digest = hashlib.sha256()
    for lock in lock_files(matrices):
        digest.update(lock.as_posix().encode() + b"\0")
        digest.update(lock.read_bytes() if lock.is_file() else b"(none)")
        digest.update(b"\0")
    return f"{cache_prefix()}{digest.hexdigest()[:24]}"


def cache_prefix() -> str:
    """Any earlier cache of this runner OS is a good start when the locks moved."""
    return f"{CACHE_PREFIX}-{os.environ.get('RUNNER_OS', sys.platform)}-"


def results_path() -> Path:
    return work_dir() / "results.json"


def fail_on() -> frozenset[str]:
    """The `fail-on` input, as `canary check --fail-on` (`fail-on-error: false` takes `error`
    out of it)."""
    from canary.engine.upcoming import FAIL_ON, parse_fail_on

    value = text_input("fail-on", ",".join(FAIL_ON))
    try:
        return parse_fail_on(value)
    except ValueError as exc:
        raise ActionError(f"input fail-on: {exc}") from None


def plan() -> None:
    """Validate the inputs before anything is fetched; name the cache and the artifact."""
    matrices = matrix_files()
    mode()
    flag_input("cache", True)
    flag_input("fail-on-error", True)
    fail_on()
    set_output("cache-key", cache_key(matrices))
    set_output("cache-prefix", cache_prefix())
    set_output("artifact", artifact_name())
    set_output("results", str(results_path()))
    print(f"canary: {len(matrices)} matrices: {' '.join(showable(str(m)) for m in matrices)}")


def lock() -> None:
    """Refresh the locks (the nightly); say whether any moved, keep canary's account of it."""
    from canary import api
    from canary.reports.markdown import code_block

    matrices = matrix_files()
    before = {path: _read(path) for path in lock_files(matrices)}
    with quoted_stderr():
        locked = api.lock(matrices)
    printed = "".join(f"{line}\n" for line in locked.lines)
    echo(printed)
    status = locked.exit_code(check=False)
    if status != 0:
        raise ActionError(f"canary lock exited {status}", status)
    changed = [str(path) for path, old in before.items() if _read(path) != old]
    lines = ["The nightly canary run refreshed the version locks:", ""]
    summary = "\n".join([*lines, code_block(printed.rstrip()), ""])
    (work_dir() / "lock-summary.md").write_text(summary, encoding="utf-8")
    set_output("locks-changed", "true" if changed else "false")
    set_output("cache-key", cache_key(matrices))


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def check() -> None:
    """Run the checks once into JSON; annotate the failing checks; draw the grid (check mode:
    the nightly draws it beside what changed, in its compare step)."""
    from canary import api
    from canary.reports.dispatch import render as render_report
    from canary.reports.output import prepare_output, write_output

    matrices = [str(path) for path in matrix_files()]
    versions = text_input("versions", "all" if mode() == "nightly" else "releases")
    results = results_path()
    args = ["check", *matrices, "--versions", versions, "--format", "json"]
    output = prepare_output(str(results))
    with quoted_stderr():
        report = api.check(matrices, versions=versions)
    report.run["command"] = shlex.join(["canary", *args, "--output", str(results)])
    write_output(output, render_report("json", report))
    annotate(results)
    if mode() == "check":
        add_summary(render(results, "markdown"))
    for name, count in counted(report.results).items():
        set_output(name, str(count))
    set_output("results", str(results))


def counted(results: list[Result]) -> dict[str, int]:
    """The check step's counts, checks and check x version results said apart (a maintainer
    counts checks: 21 red, not 520 results): `fail-checks`, `fail-results`, `error-checks`,
    `error-results`; `fail` and `error` are the results, as the outputs were first written."""
    from canary.engine.outcomes import Status

    counts = {}
    for status in (Status.FAIL, Status.ERROR):
        found = [r for r in results if r.status is status]
        counts[f"{status.value}-checks"] = len({(r.upstream, r.check) for r in found})
        counts[f"{status.value}-results"] = len(found)
        counts[status.value] = len(found)
    return counts


def annotate(results: Path) -> None:
    """Annotations at the failing checks' matrix lines: `canary report --format github` of the
    saved results (they carry each check's file and line), printed where the runner reads them."""
    sys.stdout.write(render(results, "github"))
    sys.stdout.flush()


def render(results: Path, fmt: str, baseline: Path | None = None, limit: int | None = None) -> str:
    """Saved results drawn as `canary report` draws them; with a baseline, what changed first
    (markdown under `limit` bytes, GitHub's summary limit when not given)."""
    from canary.reports.command import compose, merge, read_report
    from canary.reports.drift import drift
    from canary.reports.markdown import SUMMARY_LIMIT

    report = merge([read_report(str(results))])
    found = drift(report, read_report(str(baseline))) if baseline is not None else None
    return compose(fmt, report, found, limit=SUMMARY_LIMIT if limit is None else limit)


def verdict() -> int:
    """The job's colour, decided last so that the cache and the results are kept either way;
    its annotation counts checks and results apart, as the reports do."""
    from canary.engine.outcomes import Status
    from canary.engine.upcoming import failing
    from canary.reports.command import read_report
    from canary.reports.text import checks_line

    report = read_report(str(results_path()))
    results = report.results
    if mode() == "nightly":
        if os.environ.get("CANARY_NEW_BREAKAGE") == "true":
            command(
                "error",
                "New upstream breakage since the previous nightly run; see the job summary.",
            )
            return 1
        return 0
    fail_on_error = flag_input("fail-on-error", True)
    kinds = fail_on() - (set() if fail_on_error else {"error"})
    red = failing(report, kinds)
    if red:
        command("error", f"canary: {checks_line(red, 'red')}; see the job summary.")
        return 1
    if said := checks_line((r for r in results if r.status is Status.ERROR), "in error"):
        command("warning", f"canary: {said}; fail-on-error is off, so the job passes.")
    return 0
