"""`canary validate [MATRIX ...]`: is each matrix well formed and its lock current? No network.

Made for commit hooks: it reads only the files given (a `.lock` stands for the matrix beside
it), reports every problem rather than the first, and never reaches the package index. A
malformed matrix or lock exits 2, as `canary check` would; a lock that no longer matches the
matrix's `versions` exits 1, since PR-time runs would then resolve versions from the index
instead of the committed list.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from canary.matrix.lock import lock_path, read_lock, spec_of
from canary.matrix.model import MatrixError, load_matrix
from canary.matrix.versions import check_keys, needs_index, unresolved


def matrix_paths(paths: list[str]) -> list[Path]:
    """The matrices named, `x.lock` meaning `x.yaml`, each once, in the order given."""
    found: dict[Path, None] = {}
    for name in paths:
        path = Path(name)
        found[path.with_suffix(".yaml") if path.suffix == ".lock" else path] = None
    return list(found)


def validate_one(path: Path) -> tuple[int, str]:
    """(status, message) for one matrix: 0 ok, 1 stale lock, 2 malformed."""
    try:
        matrix = load_matrix(path)
        lock = read_lock(lock_path(matrix))
        if lock is None and not needs_index(matrix):  # exact versions: known without a lock
            resolution = unresolved(matrix)
            check_keys(matrix, resolution)
            return 0, f"{path}: {len(matrix.checks)} checks, {len(resolution.labels())} versions"
        if lock is None:
            return 0, f"{path}: {len(matrix.checks)} checks; no lock (`canary lock` pins versions)"
        if lock.spec != spec_of(matrix):
            return (
                1,
                f"{lock.path}: does not match `versions` of {path} any more; run `canary lock`",
            )
        check_keys(matrix, lock.resolution)
    except MatrixError as exc:  # every error of the file, each on its own `canary:` line
        return 2, "\ncanary: ".join(str(error) for error in exc.errors)
    return (
        0,
        f"{path}: {len(matrix.checks)} checks, {len(lock.resolution.labels())} locked versions",
    )


def validate_main(paths: list[str], out: TextIO, err: TextIO) -> int:
    status = 0
    for path in matrix_paths(paths):
        code, message = validate_one(path)
        (err if code else out).write(f"{'canary: ' if code else ''}{message}\n")
        status = max(status, code)
    return status
