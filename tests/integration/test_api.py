"""canary as a library: the commands' work returns data and prints nothing; bad input raises
the error the command line turns into its exit status."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
from paths import FIXTURES, ROOT

import canary
from canary import api
from canary.analysis.parselock import parse_locked
from canary.engine.outcomes import Status
from canary.errors import CanaryError, ExitCode, UsageError
from canary.matrix.model import MatrixError

CHECKOUT = FIXTURES / "checkout"
MATRIX = "upstream: fakeup\nsrc: src\nchecks:\n  - {id: pkg, module: fakeup.pkg}\n"


#: the public names: what the API does, what it returns and takes, the errors it raises
PUBLIC = (
    *("check", "lock", "resolve", "scan", "load_matrix", "Settings", "__version__"),
    *("RunReport", "Result", "Status", "UpstreamInfo", "Scan", "LockReport", "Resolution"),
    *("Matrix", "Check"),
    *("CanaryError", "ExitCode", "UsageError", "MatrixError", "ConfigError", "SourceError"),
    *("ReportError", "Interrupted"),
)


def test_the_public_names_are_the_api_what_it_returns_and_takes_and_its_errors():
    assert sorted(canary.__all__) == sorted(PUBLIC)
    assert canary.check is api.check and canary.CanaryError is CanaryError
    with pytest.raises(AttributeError, match="no attribute 'main'"):
        _ = canary.main


def top_level_definitions(name: str) -> list[str]:
    """The modules of canary that define `name` at top level (a class, a function, or an
    assignment), imports aside."""
    found = []
    for path in sorted((ROOT / "canary").rglob("*.py")):
        for node in parse_locked(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name == name:
                found.append(path.relative_to(ROOT).as_posix())
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    found.append(path.relative_to(ROOT).as_posix())
    return found


@pytest.mark.parametrize("name", [n for n in PUBLIC if n != "__version__"])
def test_each_public_name_is_importable_from_canary_and_defined_in_one_place(name):
    """A type is defined once in canary (one name per concept); a function where canary exports
    it from (the Action's steps have a `check` and a `lock` of their own)."""
    exported = getattr(canary, name)
    home = exported.__module__.replace(".", "/") + ".py"
    if isinstance(exported, type):
        assert top_level_definitions(name) == [home], f"{name}: defined in one place, its home"
    else:
        assert callable(exported) and home in top_level_definitions(name)


def test_canary_scan_stays_the_function_once_the_scan_package_is_imported():
    """Calling canary.scan imports the canary.scan package, which would rebind the name."""
    code = (
        "import canary, canary.api, canary.scan.phases; "
        "print(canary.scan is canary.api.scan, canary.scan.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "canary.api"]


def test_importing_canary_loads_none_of_the_public_names():
    """`import canary` costs nothing (the pytest plugin imports it in every session): the names
    are loaded on first use."""
    code = "import canary, sys; print(sorted(m for m in sys.modules if m.startswith('canary')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['canary', 'canary._version']"


def test_check_returns_the_results_and_prints_nothing(tmp_path, capsys):
    matrix = tmp_path / "fakeup.yaml"
    matrix.write_text(MATRIX + "  - {id: gone, module: fakeup.gone}\n")
    report = api.check([matrix], source=str(CHECKOUT), versions="3.0.0")
    assert [(r.check, r.version, r.status) for r in report.results] == [
        ("pkg", "3.0.0", Status.PASS),
        ("gone", "3.0.0", Status.FAIL),
    ]
    assert report.run["canary"] == canary.__version__
    assert capsys.readouterr() == ("", "")


def test_bad_input_raises_with_the_exit_status_of_the_command(tmp_path):
    matrix = tmp_path / "fakeup.yaml"
    matrix.write_text(MATRIX)
    with pytest.raises(UsageError, match="not a folder") as caught:
        api.check([matrix], source=str(tmp_path / "nowhere"))
    assert caught.value.exit_code == ExitCode.USAGE_ERROR
    with pytest.raises(MatrixError, match="cannot read"):
        api.check([tmp_path / "missing.yaml"])
    with pytest.raises(UsageError, match="no such file or folder"):
        api.scan(tmp_path / "nowhere")
    with pytest.raises(UsageError, match="import or distribution names"):
        api.scan(tmp_path, ["trl", "x y"])


def test_scan_returns_the_proposed_matrices(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("CANARY_OFFLINE", "1")
    monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
    found = api.scan(FIXTURES / "downstream", ["trl", "accelerate"])
    assert found.upstreams == ["trl", "accelerate"]
    assert sorted(found.proposed) == ["trl"]
    assert "\nupstream: trl\n" in found.proposed["trl"].text()
    assert found.result.files == 5
    assert capsys.readouterr().out == ""
