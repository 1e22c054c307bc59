"""What canary costs a downstream environment: the commands need no pytest, and the pytest
plugin loads none of the engine in a session without a matrix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import tomllib
from paths import FIXTURES, ROOT

MATRIX = "upstream: fakeup\nsrc: src\nchecks:\n  - {id: pkg, module: fakeup.pkg}\n"

#: Written into the session: which canary modules were loaded when it ended.
REPORTER = """
import sys
def pytest_unconfigure(config):
    names = sorted(m for m in sys.modules if m.startswith("canary"))
    (config.invocation_params.dir / "loaded.txt").write_text("\\n".join(names))
"""


def test_the_commands_depend_on_no_test_runner():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = [d.split(">")[0].split(";")[0].strip().lower() for d in project["dependencies"]]
    assert "pytest" not in names and "pytest-xdist" not in names
    assert any(d.startswith("pytest>=") for d in project["optional-dependencies"]["pytest"])


def test_validate_runs_where_pytest_cannot_be_imported(tmp_path):
    matrix = tmp_path / "canary" / "fakeup.yaml"
    matrix.parent.mkdir()
    matrix.write_text(MATRIX)
    code = (
        "import sys; sys.modules['pytest'] = sys.modules['xdist'] = None\n"
        "from canary.cli.main import main; sys.exit(main(['validate']))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "canary/fakeup.yaml" in done.stdout


def _session(folder: Path, *args: str) -> list[str]:
    (folder / "conftest.py").write_text(REPORTER)
    (folder / "test_a.py").write_text("def test_a():\n    pass\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return (folder / "loaded.txt").read_text().split()


def test_a_session_without_matrices_loads_none_of_the_engine(tmp_path):
    loaded = _session(tmp_path)
    assert "canary.pytest_plugin" in loaded
    assert not [m for m in loaded if m.startswith(("canary.engine", "canary.sources"))], loaded


def test_the_first_matrix_loads_the_machinery(tmp_path):
    (tmp_path / "matrices").mkdir()
    (tmp_path / "matrices" / "fakeup.yaml").write_text(MATRIX)
    loaded = _session(tmp_path, "--canary-source", str(FIXTURES / "checkout"))
    assert "canary.engine.runner" in loaded and "canary.pytest_plugin.items" in loaded
