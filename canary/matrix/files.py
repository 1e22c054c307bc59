"""Which matrix files a command names: explicit paths, folders of them, bare names (`trl` for
trl.yaml in the matrix folder), or every matrix of the project (its `[tool.canary]` table, else
canary/*.yaml and matrices/*.yaml)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from canary.errors import UsageError
from canary.matrix.config import Config, find_config, is_folder_entry
from canary.matrix.model import Matrix, load_matrix


def _matrices_in(folder: Path) -> list[Path]:
    found = sorted(folder.glob("*.yaml"))
    if not found:
        raise UsageError(f"{folder}: a folder without *.yaml matrices")
    return found


def find_matrices(names: Sequence[str | Path], config: Config | None = None) -> list[Path]:
    """The matrix files that command-line names stand for: a file, a folder (its *.yaml) or a
    bare name (`trl`: NAME.yaml in a configured folder); none named, every configured (or
    default) matrix. What names nothing is an error saying what was looked for."""
    if not names:
        config = config or find_config()
        found = config.matrix_files()
        if not found:
            raise UsageError(config.looked_for())
        return [_as_named(path) for path in found]
    paths: list[Path] = []
    for name in names:
        path = Path(name)
        if path.is_dir():
            paths += _matrices_in(path)
        elif path.exists() or path.suffix:
            paths.append(path)  # a missing file is load_matrix's "cannot read" error
        else:
            config = config or find_config()
            paths.append(_by_name(config, name))
    return paths


def _as_named(path: Path) -> Path:
    """Relative to the current folder when inside it, as a user would have named it (reports
    and annotations show the path)."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def _by_name(config: Config, name: str | Path) -> Path:
    folders = [config.root / e for e in config.matrices if is_folder_entry(e)]
    for folder in folders:
        if (folder / f"{name}.yaml").is_file():
            return _as_named(folder / f"{name}.yaml")
    for path in config.matrix_files():  # a glob entry: the file named so
        if path.stem == name:
            return _as_named(path)
    tried = ", ".join(str(folder / f"{name}.yaml") for folder in folders) or config.looked_for()
    raise UsageError(f"{name}: no such matrix (looked for {tried})")


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
