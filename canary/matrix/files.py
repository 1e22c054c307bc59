"""Which matrix files a command names: explicit paths, folders of them, bare names (`trl` for
matrices/trl.yaml), or every matrices/*.yaml of the current project."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from canary.errors import UsageError
from canary.matrix.model import Matrix, load_matrix


def _matrices_in(folder: Path) -> list[Path]:
    found = sorted(folder.glob("*.yaml"))
    if not found:
        raise UsageError(f"{folder}: a folder without *.yaml matrices")
    return found


def find_matrices(paths: Sequence[str | Path]) -> list[Path]:
    """Explicit paths, else every matrices/*.yaml of the current project. A folder means its
    matrices, and a bare name such as `trl` means matrices/trl.yaml."""
    if not paths:
        if not Path("matrices").is_dir():
            raise UsageError("no matrices given and no matrices/*.yaml in the current folder")
        return _matrices_in(Path("matrices"))
    found: list[Path] = []
    for name in paths:
        path, short = Path(name), Path("matrices") / f"{name}.yaml"
        if path.is_dir():
            found += _matrices_in(path)
        elif not path.exists() and path.suffix == "" and short.is_file():
            found.append(short)
        else:
            found.append(path)  # a missing file is load_matrix's "cannot read" error
    return found


def load_matrices(paths: Sequence[str | Path]) -> list[Matrix]:
    """The matrices `paths` names, loaded; two matrices of one upstream are a usage error."""
    matrices = [load_matrix(p) for p in find_matrices(paths)]
    seen: dict[str, Path] = {}
    for matrix in matrices:
        if matrix.upstream in seen:
            raise UsageError(
                f"{matrix.path}: upstream {matrix.upstream!r} is also in {seen[matrix.upstream]}"
            )
        seen[matrix.upstream] = matrix.path
    return matrices
