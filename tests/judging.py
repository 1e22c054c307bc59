"""Judge a small matrix, written inline, on a fixture tree or on upstream modules written inline:
the checks' tests share this, so a test shows the upstream code it judges."""

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


def judge_inline(
    tmp_path: Path,
    upstream: str,
    modules: dict[str, str],
    checks_yaml: str,
    version: str,
    header: str = "",
) -> list[Result]:
    """`judge_matrix` on an upstream release made of `modules` (path in the release -> source,
    dedented), so the upstream code a test judges is written in the test itself."""
    tree = tmp_path / "release"
    for name, source in modules.items():
        path = tree / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
    return judge_matrix(tmp_path, tree, upstream, checks_yaml, version, header)
