"""`[tool.canary]`: every command and the pytest plugin find the same matrices, walking up
from the current folder; without the table `canary/` and `matrices/` are looked for."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import FIXTURES, ROOT

from canary.cli.main import main
from canary.matrix.config import find_config, table_text
from canary.matrix.files import find_matrices

CHECKOUT = FIXTURES / "checkout"
MATRIX = "upstream: fakeup\nsrc: src\nchecks:\n  - {id: pkg, module: fakeup.pkg}\n"


def put(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def check_here(folder: Path, monkeypatch, *names: str) -> int:
    monkeypatch.chdir(folder)
    return main(["check", *names, "--source", str(CHECKOUT)])


def test_without_a_table_canary_folder_is_found(tmp_path, monkeypatch, capsys):
    put(tmp_path, "canary/fakeup.yaml", MATRIX)
    assert check_here(tmp_path, monkeypatch) == 0
    assert capsys.readouterr().out == "1 pass\n"


def test_the_table_is_found_from_a_subfolder(tmp_path, monkeypatch, capsys):
    put(tmp_path, "pyproject.toml", '[project]\nname = "x"\n\n[tool.canary]\nmatrices = "ci"\n')
    put(tmp_path, "ci/fakeup.yaml", MATRIX)
    put(tmp_path, "matrices/other.yaml", "not: a matrix of this project\n")
    (tmp_path / "src" / "deep").mkdir(parents=True)
    assert check_here(tmp_path / "src" / "deep", monkeypatch) == 0
    assert capsys.readouterr().out == "1 pass\n"
    assert check_here(tmp_path / "src", monkeypatch, "fakeup") == 0  # a bare name, too


def test_globs_name_files_anywhere(tmp_path, monkeypatch):
    put(tmp_path, "pyproject.toml", '[tool.canary]\nmatrices = ["a/*.yaml", "b/x.yaml"]\n')
    first, second = put(tmp_path, "a/one.yaml", MATRIX), put(tmp_path, "b/x.yaml", MATRIX)
    put(tmp_path, "b/y.yaml", MATRIX)
    assert find_matrices([], find_config(tmp_path)) == [first, second]  # outside the cwd
    monkeypatch.chdir(tmp_path)
    assert find_matrices([]) == [Path("a/one.yaml"), Path("b/x.yaml")]


def test_finding_nothing_names_what_was_looked_for(tmp_path, monkeypatch, capsys):
    assert check_here(tmp_path, monkeypatch) == 2
    err = capsys.readouterr().err
    assert "looked for canary/*.yaml, matrices/*.yaml in" in err
    assert "[tool.canary]" in err and "Traceback" not in err
    monkeypatch.chdir(tmp_path)
    assert main(["versions", "trl"]) == 2
    err = capsys.readouterr().err
    assert f"trl: no such matrix (looked for {tmp_path / 'canary' / 'trl.yaml'}" in err
    assert "Errno" not in err


def test_a_configured_folder_that_is_empty_says_so(tmp_path, monkeypatch, capsys):
    put(tmp_path, "pyproject.toml", '[tool.canary]\nmatrices = ["ci"]\n')
    for command in (["validate"], ["lock", "--check"], ["check"]):
        monkeypatch.chdir(tmp_path)
        assert main(command) == 2
        assert "[tool.canary] matrices in" in capsys.readouterr().err


def test_validate_and_lock_use_the_table(tmp_path, monkeypatch, capsys):
    put(tmp_path, "pyproject.toml", '[tool.canary]\nmatrices = ["ci"]\n')
    put(tmp_path, "ci/fakeup.yaml", MATRIX)
    monkeypatch.chdir(tmp_path)
    assert main(["validate"]) == 0
    assert "ci/fakeup.yaml" in capsys.readouterr().out


def test_an_oversized_pyproject_is_not_read_whole(tmp_path, capsys):
    """A scanned tree's pyproject.toml is downstream input: one of gigabytes (sparse, here
    just over the cap) is refused by its size, exit 2, not read into memory (issue 30 attack
    round: it ended scan in a MemoryError traceback)."""
    from canary.matrix.config import MAX_CONFIG_BYTES

    big = put(tmp_path, "repo/pyproject.toml", '[tool.canary]\nexclude = ["x"]\n')
    os.truncate(big, MAX_CONFIG_BYTES + 1)
    put(tmp_path, "repo/pkg/__init__.py", "import fakeup\n")
    assert main(["scan", str(tmp_path / "repo"), "--upstream", "fakeup"]) == 2
    err = capsys.readouterr().err
    assert f"pyproject.toml: not read: over {MAX_CONFIG_BYTES} bytes" in err
    assert "Traceback" not in err


def test_the_own_oversized_pyproject_is_refused_the_same_way(tmp_path, monkeypatch, capsys):
    """The user's own pyproject.toml (read following links) has the scanned tree's cap."""
    from canary.matrix.config import MAX_CONFIG_BYTES

    big = put(tmp_path, "pyproject.toml", '[tool.canary]\nmatrices = ["canary"]\n')
    os.truncate(big, MAX_CONFIG_BYTES + 1)
    put(tmp_path, "canary/fakeup.yaml", MATRIX)
    assert check_here(tmp_path, monkeypatch) == 2
    err = capsys.readouterr().err
    assert f"pyproject.toml: not read: over {MAX_CONFIG_BYTES} bytes" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        (
            '[tool.canary]\nmatrix = "ci"\n',
            "pyproject.toml:2: [tool.canary]: unknown key 'matrix'; did you mean 'matrices'?",
        ),
        ("[tool.canary]\nexclude = 3\n", "pyproject.toml:2: [tool.canary] exclude: a path"),
        ("[tool.canary\n", "pyproject.toml:1: not TOML"),
    ],
)
def test_a_bad_table_is_a_usage_error(tmp_path, monkeypatch, capsys, table, expected):
    put(tmp_path, "pyproject.toml", table)
    put(tmp_path, "canary/fakeup.yaml", MATRIX)
    assert check_here(tmp_path, monkeypatch) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err


def test_table_text_keeps_the_rest_byte_for_byte():
    before = '# top comment\n[project]\nname = "x"   # aligned\n\n[tool.ruff]\nline-length = 1\n'
    after = table_text(before, ["canary"])
    assert after == before + '\n[tool.canary]\nmatrices = ["canary"]\n'
    assert table_text(after, ["other"]) is None


def test_table_text_adds_the_table_where_tool_tables_are_out_of_order():
    """[tool.x] tables split by another table (as unsloth-zoo's pyproject.toml has them)."""
    import tomllib

    before = '[tool.ruff]\nline-length = 1\n\n[project]\nname = "x"\n\n[tool.mypy]\nstrict = true\n'
    after = table_text(before, ["canary"])
    assert tomllib.loads(after) == {
        "tool": {
            "ruff": {"line-length": 1},
            "mypy": {"strict": True},
            "canary": {"matrices": ["canary"]},
        },
        "project": {"name": "x"},
    }
    assert (
        after.replace('[tool.canary]\nmatrices = ["canary"]\n\n', "") == before
    )  # the rest as it was


def test_table_text_leaves_a_blank_line_before_the_table_after_it():
    before = '[project]\nname = "x"\n\n[tool.ruff]\nx = 1\n\n[build-system]\nrequires = []\n'
    after = table_text(before, ["canary"])
    assert '[tool.canary]\nmatrices = ["canary"]\n\n[build-system]' in after
    assert after.replace('[tool.canary]\nmatrices = ["canary"]\n\n', "") == before


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)


def test_pytest_collects_a_matrix_named_on_its_command_line(tmp_path):
    put(tmp_path, "elsewhere/fakeup.yaml", MATRIX)
    done = _pytest(tmp_path, "elsewhere/fakeup.yaml", "--canary-source", str(CHECKOUT))
    assert "1 passed" in done.stdout, done.stdout + done.stderr


def test_pytest_without_paths_collects_the_configured_folder(tmp_path):
    put(
        tmp_path,
        "pyproject.toml",
        '[tool.canary]\nmatrices = ["ci"]\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    )
    put(tmp_path, "ci/fakeup.yaml", MATRIX)
    put(tmp_path, "matrices/not-ours.yaml", "not: a matrix\n")
    put(tmp_path, "tests/test_a.py", "def test_a():\n    pass\n")
    done = _pytest(tmp_path, "--canary-source", str(CHECKOUT), "--co")
    assert "ci/fakeup.yaml::fakeup::pkg[2.1.0.dev0]" in done.stdout, done.stdout + done.stderr
    assert "tests/test_a.py::test_a" in done.stdout and "not-ours" not in done.stdout


def test_pytest_leaves_other_canary_folders_alone(tmp_path):
    put(tmp_path, "deploy/canary/values.yaml", "replicas: 2\n")
    put(tmp_path, "test_a.py", "def test_a():\n    pass\n")
    done = _pytest(tmp_path)
    assert "1 passed" in done.stdout, done.stdout + done.stderr


#: What an editable install does (setuptools' finder on sys.meta_path, after the path-based
#: finder): `canary` is found by name only when no folder of sys.path holds one.
_EDITABLE = """
import importlib.abc, importlib.util, os, runpy, sys
root = {root!r}
sys.path[:] = [p for p in sys.path if p != root]
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
class Editable(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "canary" and not name.startswith("canary."):
            return None
        base = os.path.join(root, *name.split("."))
        if os.path.isdir(base):
            return importlib.util.spec_from_file_location(
                name, base + "/__init__.py", submodule_search_locations=[base])
        if os.path.isfile(base + ".py"):
            return importlib.util.spec_from_file_location(name, base + ".py")
        return None
sys.meta_path.append(Editable())
sys.argv = ["canary", "validate"]
runpy.run_module("canary", run_name="__main__", alter_sys=True)
"""


def test_python_m_canary_in_a_repository_whose_matrix_folder_is_canary(tmp_path):
    put(tmp_path, "canary/fakeup.yaml", MATRIX)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = _EDITABLE.format(root=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert "canary/fakeup.yaml" in done.stdout + done.stderr


def test_scan_leaves_out_what_the_table_excludes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CANARY_OFFLINE", "1")
    monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
    tree = tmp_path / "proj"
    shutil.copytree(FIXTURES / "downstream", tree)
    runs = {}
    for label in ("all", "excluded"):
        if label == "excluded":
            with (tree / "pyproject.toml").open("a") as pyproject:
                pyproject.write('\n[tool.canary]\nexclude = ["fakesloth/rl.py"]\n')
        assert main(["scan", str(tree), "--upstream", "trl"]) == 0
        runs[label] = capsys.readouterr().out
    assert "[tool.canary] exclude fakesloth/rl.py (1 file)" in runs["excluded"]
    assert "# scanned 5 files" in runs["all"] and "rl.py:" in runs["all"]
    assert "# scanned 4 files" in runs["excluded"] and "rl.py:" not in runs["excluded"]
