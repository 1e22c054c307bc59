"""pytest plugin: every check x version of the project's matrices is one test item.

Ids read `UPSTREAM::CHECK[VERSION]` so `pytest -k trl`, `-k "trl and 1.0.0"` and
`pytest -n auto` work like for any other test. The matrices are those of the `[tool.canary]`
table (else `matrices/` folders and `canary/` at the root), and any named on the command line.

The plugin is installed in every environment that has canary, so this module is thin: a
session without a matrix loads none of canary's machinery (engine, sources, parsing); the
first matrix file collected loads it (canary/pytest_plugin/items.py), and registers the
plugin object that judges the versions and runs the items.

- `selection.py`: which files of a session are matrices;
- `items.py`: what judges a session's matrices and runs their items, loaded at the first matrix;
- `xdist.py`: check items under `pytest -n N`: the controller runs them, workers the rest.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from canary.pytest_plugin.selection import configure_matrices, is_matrix
from canary.pytest_plugin.xdist import configure_xdist


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("canary", "canary upstream contract checks")
    group.addoption(
        "--canary-versions",
        default="releases",
        help="releases (default) | all | anchors | a PEP 440 specifier | a comma-separated list",
    )
    group.addoption("--canary-offline", action="store_true", help="use the canary cache alone")
    group.addoption(
        "--canary-source", default="auto", help="auto (default) | index | github | a local folder"
    )


def pytest_configure(config: pytest.Config) -> None:
    configure_matrices(config)
    configure_xdist(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if is_matrix(parent.config, file_path):
        from canary.pytest_plugin.items import MatrixFile

        return MatrixFile.from_parent(parent, path=file_path)
    return None
