"""Which files of a pytest session are matrices: the project's (its `[tool.canary]` table, or
the default folders) and any YAML file named on the command line, wherever it is.

Cheap on purpose: every pytest session of an environment with canary asks it of every file
it collects, and a session without a matrix loads nothing more of canary.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from canary.matrix.config import Config, ConfigError, find_config

_MATRICES = pytest.StashKey["SessionMatrices"]()


class CheckItemBase(pytest.Item):
    """The kind of item canary makes (canary/pytest_plugin/items.py): defined here so that
    the xdist split can tell check items apart without loading what judges them."""


@dataclass(frozen=True)
class SessionMatrices:
    project: Config
    named: frozenset[Path]  # YAML files named on the command line, resolved

    def holds(self, path: Path) -> bool:
        if path.suffix not in (".yaml", ".yml"):
            return False
        return self.project.holds(path) or path.resolve() in self.named


def configure_matrices(config: pytest.Config) -> None:
    """Find the project's matrices once; with no paths on the command line, also collect the
    configured ones wherever they are (testpaths may not cover them)."""
    base = config.invocation_params.dir
    try:
        project = find_config(base)
        configured = project.matrix_files() if project.configured else []
    except ConfigError as exc:  # one line, as the commands say it; not an internal error
        raise pytest.UsageError(f"canary: {exc}") from None
    given = config.args_source is pytest.Config.ArgsSource.ARGS
    named = frozenset(
        Path(os.path.abspath(base / arg.partition("::")[0])).resolve()
        for arg in (config.args if given else ())
        if arg.partition("::")[0].endswith((".yaml", ".yml"))
    )
    config.stash[_MATRICES] = SessionMatrices(project, named)
    if project.configured and not given:
        roots = [Path(os.path.abspath(base / arg)) for arg in config.args]
        for path in configured:
            if not any(path == root or root in path.parents for root in roots):
                config.args.append(str(path))


def is_matrix(config: pytest.Config, path: Path) -> bool:
    """A file the plugin collects."""
    matrices = config.stash.get(_MATRICES, None)
    return matrices is not None and matrices.holds(path)


def is_lock_beside_matrix(config: pytest.Config, path: Path) -> bool:
    return path.suffix == ".lock" and is_matrix(config, path.with_suffix(".yaml"))
