"""Hostile configuration: a `pyproject.toml` nested thousands deep (a few kB), and
`[tool.canary] matrices` entries that are absolute, climb out of the repository, walk a deep
tree with several `**`, or carry control characters. Each is one clear line and exit 2 (a
pytest usage error under pytest), never a traceback, an unbounded walk or a raw escape."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import FIXTURES, ROOT

CHECKOUT = FIXTURES / "checkout"
MATRIX = "upstream: fakeup\nsrc: src\nchecks:\n  - {id: pkg, module: fakeup.pkg}\n"
DEEP = "a = " + "[" * 5000 + "]" * 5000 + "\n"


def run(folder: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CANARY_CACHE_DIR": str(folder / ".cache")}
    return subprocess.run(
        [sys.executable, "-m", *argv], cwd=folder, env=env, capture_output=True, text=True
    )


def project(tmp_path: Path, pyproject: str) -> Path:
    (tmp_path / "matrices").mkdir()
    (tmp_path / "matrices" / "fakeup.yaml").write_text(MATRIX)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "patch.py").write_text("import fakeup.pkg\n")
    (tmp_path / "pyproject.toml").write_text(pyproject)
    return tmp_path


@pytest.mark.parametrize(
    "argv",
    [
        ["canary", "validate"],
        ["canary", "check", "--source", str(CHECKOUT)],
        ["canary", "init", ".", "--upstream", "fakeup", "--dry-run"],
        ["canary", "scan", ".", "--upstream", "fakeup", "--source", str(CHECKOUT)],
    ],
    ids=["validate", "check", "init", "scan"],
)
def test_a_deeply_nested_pyproject_is_one_line_and_exit_2(tmp_path, argv):
    folder = project(tmp_path, '[project]\nname = "x"\n' + DEEP)
    done = run(folder, *argv)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert (
        done.stderr
        == f"canary: {folder / 'pyproject.toml'}: not read: nested too deeply to parse\n"
    )


def test_an_absolute_or_climbing_entry_is_refused_naming_its_line(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "outside.yaml").write_text(MATRIX)
    table = f'[tool.canary]\nmatrices = ["{tmp_path}/*.yaml", "../*.yaml", "matrices"]\n'
    folder = project(tmp_path / "repo", table)
    done = run(folder, "canary", "validate")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"canary: {folder / 'pyproject.toml'}:2: [tool.canary] matrices: ")
    assert f"'{tmp_path}/*.yaml' is outside the repository ({folder})" in lines[0]
    assert "'../*.yaml' is outside the repository" in lines[1]


def test_pytest_says_a_bad_entry_in_one_line(tmp_path):
    folder = project(tmp_path, f'[tool.canary]\nmatrices = ["{tmp_path}/*.yaml"]\n')
    (folder / "test_own.py").write_text("def test_own():\n    pass\n")
    done = run(folder, "pytest", "-p", "no:cacheprovider", "-q")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "INTERNALERROR" not in done.stdout + done.stderr
    assert "ERROR: canary: " in done.stderr and "is outside the repository" in done.stderr


def test_double_stars_list_each_folder_once_and_stop_at_the_bound(tmp_path, monkeypatch):
    """Five `**` over a chain of 40 folders: pathlib walks it again below each match (minutes);
    here each `**` lists it once. A tree over the bound is refused, naming the entry."""
    from canary.matrix import config

    folder = project(tmp_path, '[tool.canary]\nmatrices = ["**/**/**/**/**/*.yaml"]\n')
    deep = folder / "deep"
    for _ in range(40):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "last.yaml").write_text(MATRIX)
    found = config.find_config(folder).matrix_files()
    assert found == [deep / "last.yaml", folder / "matrices" / "fakeup.yaml"]
    monkeypatch.setattr(config, "MAX_GLOB_FOLDERS", 100)
    with pytest.raises(config.ConfigError) as refused:
        config.find_config(folder).matrix_files()
    assert str(refused.value) == (
        f"{folder / 'pyproject.toml'}:2: [tool.canary] matrices: "
        "'**/**/**/**/**/*.yaml' lists over 100 folders; name the folders, or a narrower glob"
    )


def test_one_double_star_finds_what_pathlib_finds(tmp_path, monkeypatch):
    from canary.matrix.config import find_config

    folder = project(tmp_path, '[tool.canary]\nmatrices = ["**/*.yaml", "m*/f?keup.y[a]ml"]\n')
    (folder / "a" / "b").mkdir(parents=True)
    (folder / "a" / "b" / "x.yaml").write_text(MATRIX)
    (folder / "linked").symlink_to(folder / "a")  # pathlib's `**` does not enter it either
    expected = sorted(p for p in folder.glob("**/*.yaml") if p.is_file())
    expected += [folder / "matrices" / "fakeup.yaml"]
    found = find_config(folder).matrix_files()
    assert found == list(dict.fromkeys(expected))


def test_an_entrys_control_characters_are_shown_escaped(tmp_path):
    folder = project(tmp_path, '[tool.canary]\nmatrices = ["ci\\u001b]0;owned\\u0007"]\n')
    done = run(folder, "canary", "validate")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert "ci\\x1b]0;owned\\x07/*.yaml" in done.stderr
