"""`canary init [PATH]`: scan the package, write its matrices, their locks and the workflows.

Only what is missing is written: a file that exists is never touched, whoever wrote it, so a
second run adds what the first could not (a lock, a matrix for a newly patched upstream) and a
user's edit is never overwritten. `--dry-run` says what would be written and writes nothing.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import yaml

from canary import api
from canary.errors import CanaryError
from canary.init.workflows import nightly_workflow, pr_workflow, workflow_paths
from canary.matrix.config import MAX_CONFIG_BYTES, PYPROJECT, table_text
from canary.matrix.lock import read_lock
from canary.matrix.model import MatrixError
from canary.reports.grid import is_release
from canary.safety.reads import Refused, read_regular
from canary.safety.untrusted import showable
from canary.safety.writes import WriteError, inside, replace_file, write_new
from canary.scan.writing.notes import notes
from canary.sources.tree import SourceError

DEFAULT_FOLDER = "canary"


@dataclass
class Plan:
    """What init found and did, for the closing account."""

    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    matrices: list[str] = field(default_factory=list)
    #: when the nightly runs and the branches it reads ("trl main"), for the closing account
    nightly: str = ""
    branches: list[str] = field(default_factory=list)


def _proposals(
    root: Path,
    upstreams: list[str] | None,
    exclude: list[str] | None,
    progress: api.ScanProgressFactory | None = None,
) -> tuple[dict[str, str], str]:
    """NAME -> proposed matrix text, from the scan `canary scan` runs, and what scan says
    beside them (files it could not read, upstreams it found no use of)."""
    found = api.scan(root, upstreams, exclude=exclude or (), progress=progress)
    proposed = {name: found.proposed[name].text() for name in sorted(found.proposed)}
    unused = [name for name in sorted(found.upstreams) if name not in found.proposed]
    return proposed, "\n".join(notes(found.result, str(root), unused))


class InitError(CanaryError):
    """init cannot start (a bad PATH or option); exit 2."""


def default_branch(root: Path) -> str:
    """The branch the pull-request workflow guards on push: origin's HEAD when git knows it."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "symbolic-ref", "--short", "refs/remotes/origin/HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "main"
    name = done.stdout.strip().partition("/")[2]
    return name if done.returncode == 0 and name else "main"


def _present(root: Path, relative: str, plan: Plan) -> str | None:
    """The text of the tree's file `relative`, "" when there is none; None (said in the plan)
    when it is not to be read or written: a link on the way or at it, a FIFO, a huge file."""
    try:
        return read_regular(inside(root, root / relative), MAX_CONFIG_BYTES).decode(
            "utf-8", errors="replace"
        )
    except FileNotFoundError:
        return ""
    except OSError as exc:  # Refused says why in its text
        plan.problems.append(f"{relative}: not written: {exc.strerror or exc}")
    return None


def _place(root: Path, relative: str, text: str, dry_run: bool, plan: Plan, what: str = "") -> None:
    present = _present(root, relative, plan)
    if present is None:
        return
    if present or (root / relative).exists():
        same = present == text
        plan.kept.append(f"{relative} ({'up to date' if same else 'exists; left as it is'})")
        return
    _write(write_new, root, root / relative, text, dry_run, plan, f"{relative}{what}")


def _write(
    write: Callable[[Path, Path, str], None],
    root: Path,
    path: Path,
    text: str,
    dry_run: bool,
    plan: Plan,
    said: str,
) -> None:
    """Write `text` (not on a dry run) and say `said` in the plan, or say why it was not."""
    if not dry_run:
        try:
            write(root, path, text)
        except WriteError as exc:
            plan.problems.append(str(exc))
            return
    plan.written.append(said)


def _lock(root: Path, relative: str, dry_run: bool, plan: Plan, text: str | None = None) -> None:
    """Lock the matrix `relative` (its `text`, when it is proposed). A dry run resolves it in a
    folder of its own, by the very code that writes the lock, so it fails exactly where a run
    would (a gate no locked release satisfies, no release to lock) and says so the same way."""
    lock = Path(relative).with_suffix(".lock").as_posix()
    if os.path.lexists(root / lock):
        plan.kept.append(f"{lock} (exists; `canary lock` refreshes it)")
        return
    with tempfile.TemporaryDirectory(prefix="canary-init-") as folder:
        matrix = root / relative
        if dry_run:
            copy = Path(folder) / matrix.name
            copy.write_text(text if text is not None else matrix.read_text(encoding="utf-8"))
            matrix = copy
        try:
            report = api.lock([matrix])
            written = read_lock(matrix.with_suffix(".lock"))
        except (MatrixError, SourceError, WriteError) as exc:
            plan.problems.append(f"{lock}: not written: {_here(str(exc), matrix, root / relative)}")
            return
    if written is None:  # nothing to lock: the report says why
        plan.problems += [_here(line, matrix, root / relative) for line in report.lines]
        return
    labels = written.resolution.labels()
    shown = labels if len(labels) <= 4 else [*labels[:2], "...", labels[-1]]
    plan.written.append(f"{lock}: {len(labels)} versions ({', '.join(shown)})")


def _here(said: str, matrix: Path, path: Path) -> str:
    """What the lock said of `matrix` (a dry run's copy), as of the file at `path`."""
    return said.replace(str(matrix.with_suffix(".lock")), str(path.with_suffix(".lock"))).replace(
        str(matrix), str(path)
    )


def _table(root: Path, folder: str, dry_run: bool, plan: Plan) -> None:
    """`[tool.canary]` in pyproject.toml (created when missing), the rest of it kept as it was,
    so every command and the pytest plugin find the matrices."""
    present = _present(root, PYPROJECT, plan)
    if present is None:
        return
    try:
        text = table_text(present, [folder])
    except ValueError as exc:  # tomlkit's ParseError is a ValueError
        plan.problems.append(f"{PYPROJECT}: [tool.canary] not added: {exc}")
        return
    if text is None:
        plan.kept.append(f"{PYPROJECT} (has [tool.canary]; left as it is)")
        return
    said = f'{PYPROJECT}: [tool.canary] matrices = ["{folder}"]'
    _write(replace_file, root, root / PYPROJECT, text, dry_run, plan, said)


def init_main(
    path: str,
    folder: str,
    upstreams: list[str] | None,
    action: str,
    dry_run: bool,
    out: TextIO,
    exclude: list[str] | None = None,
    progress: api.ScanProgressFactory | None = None,
) -> int:
    """Exit status: 0 done, 1 when something could not be written (a lock) or there is nothing
    to check; bad input raises InitError (exit 2) before anything is written. `exclude`: globs
    scan leaves out (as `canary scan --exclude`); `progress`: scan's status line."""
    root = Path(path)
    if not root.is_dir():
        raise InitError(f"init: {path}: not a folder")
    if Path(folder).is_absolute() or ".." in Path(folder).parts:
        raise InitError(f"init: --dir {folder}: give a folder inside {path}")
    proposed, notes = _proposals(root, upstreams, exclude, progress)
    plan = Plan()
    matrices = Path(folder)
    for name, text in proposed.items():
        relative = (matrices / f"{name}.yaml").as_posix()
        checks = len(yaml.safe_load(text).get("checks") or [])
        _place(root, relative, text, dry_run, plan, f": {checks} proposed checks")
        if dry_run and not (root / relative).exists():
            out.write(f"---\n# {relative}\n{text}")
    plan.matrices = _matrices(root, matrices, plan)
    if dry_run:
        plan.matrices = sorted(
            {*plan.matrices, *(f"{matrices.as_posix()}/{n}.yaml" for n in proposed)}
        )
    texts = {(matrices / f"{name}.yaml").as_posix(): text for name, text in proposed.items()}
    for relative in plan.matrices:
        given = None if (root / relative).exists() else texts.get(relative)
        _lock(root, relative, dry_run, plan, given)
    if plan.matrices:
        minute = zlib.crc32(root.resolve().name.encode()) % 60  # spread repositories' nightlies
        pr_path, nightly_path = workflow_paths(root)
        _place(
            root,
            pr_path,
            pr_workflow(matrices.as_posix(), action, default_branch(root)),
            dry_run,
            plan,
        )
        _place(
            root,
            nightly_path,
            nightly_workflow(matrices.as_posix(), action, minute),
            dry_run,
            plan,
        )
        _table(root, matrices.as_posix(), dry_run, plan)
        plan.nightly = f"05:{minute:02d} UTC"
        plan.branches = [b for m in plan.matrices for b in _branches(root, m, proposed)]
    report(plan, notes, matrices.as_posix(), path, dry_run, out)
    return 1 if plan.problems or not plan.matrices else 0


def _branches(root: Path, relative: str, proposed: dict[str, str]) -> list[str]:
    """The branches a matrix's nightly reads, as "UPSTREAM BRANCH": its `include` entries that
    name no version (a matrix not written, as in a dry run: the proposal's text; one that cannot
    be read or parsed names none, and `canary validate` says why)."""
    path = root / relative
    try:
        if path.stem in proposed and not path.exists():
            text = proposed[path.stem]
        else:
            text = read_regular(inside(root, path), MAX_CONFIG_BYTES).decode("utf-8")
        data = yaml.safe_load(text)
        included = [str(label) for label in (data.get("versions") or {}).get("include") or []]
        name = str(data.get("upstream", path.stem))
    except (OSError, Refused, yaml.YAMLError, AttributeError, UnicodeDecodeError):
        return []
    return [f"{name} {label}" for label in included if not is_release(label)]


def _matrices(root: Path, folder: Path, plan: Plan) -> list[str]:
    """The matrices of `folder` to lock: none when the folder is reached through a link (its
    locks would be written where it leads), no matrix that is itself a link."""
    try:
        inside(root, root / folder)
    except Refused as exc:
        plan.problems.append(f"{folder.as_posix()}/: not read: {exc}")
        return []
    found = []
    for path in sorted((root / folder).glob("*.yaml")):
        relative = path.relative_to(root).as_posix()
        if not path.is_symlink():
            found.append(relative)
        elif not any(problem.startswith(f"{relative}:") for problem in plan.problems):
            plan.problems.append(f"{relative}: not locked: it is a symbolic link")
    return found


def _read_ahead(branches: list[str]) -> str:
    """The branches the nightly reads from GitHub, said in the closing account."""
    if not branches:
        return "no branch (no matrix names a `github` repository)"
    return f"from GitHub {', '.join(showable(b) for b in branches)}"


def report(plan: Plan, notes: str, folder: str, path: str, dry_run: bool, out: TextIO) -> None:
    if notes:
        out.write(notes + "\n")
    verb = "would write" if dry_run else "wrote"
    for line in plan.written:  # file names of the tree: escaped, as scan's notes are
        out.write(f"{verb} {showable(line)}\n")
    for line in plan.kept:
        out.write(f"kept {showable(line)}\n")
    for line in plan.problems:
        out.write(f"canary init: {showable(line)}\n")
    if not plan.matrices:
        if not plan.problems:  # else they said why
            out.write(
                "canary init: no matrix proposed and none in "
                f"{folder}/; name the upstreams you patch with --upstream NAME,NAME\n"
            )
        return
    if dry_run:
        out.write("nothing written (--dry-run)\n")
        return
    if not plan.written:
        out.write(f"nothing missing: {len(plan.matrices)} matrices in {folder}/, both workflows\n")
        return
    scan = f"canary scan {path} --merge {folder}"
    name = Path(plan.matrices[0]).stem
    out.write(
        "\nNext:\n"
        f"  1. Review {folder}/*.yaml: each check's `why` names the line of yours that needs it;\n"
        "     delete what is not a contract, and put its id under `ignore:` so that scan never\n"
        "     proposes it again. A `# scan:` comment above a check says on which\n"
        "     releases it stops holding and how scan gated it: if your code still relies on it\n"
        "     there, drop the gate (or list those releases under `versions.broken`).\n"
        f"  2. Run `canary check {folder}` and read what fails: a fail on a release\n"
        "     you support is a patch that no-ops or crashes there. Under pytest,\n"
        f"     `pytest {folder} -k {name}` runs the checks as tests: given the matrix folder,\n"
        "     pytest collects them alone, not your own test suite.\n"
        f"  3. Commit {folder}/, pyproject.toml and .github/workflows/; the pull-request\n"
        "     workflow checks every locked release, the nightly adds main and refreshes the\n"
        "     locks.\n"
        f"     The nightly runs every night at {plan.nightly}; ahead of the releases it reads\n"
        f"     the newest pre-release and {_read_ahead(plan.branches)}:\n"
        "     a check red only there is reported as upcoming, with the upstream commit\n"
        "     that broke it.\n"
        "  4. For the nightly's lock pull request: Settings > Actions > General > Workflow\n"
        "     permissions > Allow GitHub Actions to create and approve pull requests.\n"
        f"  5. Later, `{scan}` adds the checks of patches written since;\n"
        "     `canary validate` (or the pre-commit hook) checks edited matrices offline.\n"
    )
