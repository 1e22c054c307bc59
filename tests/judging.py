"""Judge a small matrix, written inline, on a fixture tree: the checks' tests share this."""

from __future__ import annotations

import textwrap
from pathlib import Path

from canary.analysis import ModuleCache
from canary.engine.judge import VersionRun
from canary.engine.outcomes import Result
from canary.matrix.model import load_matrix
from canary.matrix.targets import Target
from canary.sources.local import LocalTree


def judge_matrix(
    tmp_path: Path,
    tree: Path,
    upstream: str,
    checks_yaml: str,
    version: str,
    header: str = "",
) -> list[Result]:
    """Every check of `checks_yaml` judged on `tree` as `version` (header: extra top keys)."""
    text = (
        f"upstream: {upstream}\n"
        + header
        + "checks:\n"
        + textwrap.indent(textwrap.dedent(checks_yaml).strip(), "  ")
    )
    path = tmp_path / f"{upstream}.yaml"
    path.write_text(text + "\n", encoding="utf-8")
    matrix = load_matrix(path)
    src = "src" if (tree / "src").is_dir() else ""
    local = LocalTree(tree, upstream, src)
    run = VersionRun(matrix, Target.parse(version), local, ModuleCache())
    return [run.result(check) for check in matrix.checks]


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """An upstream release made of `files` (path -> source, dedented) under `root`, so a test
    shows the upstream code it judges."""
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    return root


def judge_sources(
    tmp_path: Path, files: dict[str, str], checks_yaml: str, version: str = "1.0.0"
) -> list[Result]:
    """Every check of `checks_yaml` judged on an upstream `up` made of `files`."""
    tree = write_tree(tmp_path / "tree", files)
    return judge_matrix(tmp_path, tree, "up", checks_yaml, version)
