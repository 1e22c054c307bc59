"""canary as a library: the commands' work returns data and prints nothing; bad input raises
the error the command line turns into its exit status."""

from __future__ import annotations

import pytest
from paths import FIXTURES

import canary
from canary import api
from canary.engine.outcomes import Status
from canary.errors import CanaryError, ExitCode, UsageError
from canary.matrix.model import MatrixError

CHECKOUT = FIXTURES / "checkout"
MATRIX = "upstream: fakeup\nsrc: src\nchecks:\n  - {id: pkg, module: fakeup.pkg}\n"


def test_the_public_names_are_the_api_and_its_errors():
    assert sorted(canary.__all__) == sorted(
        ["CanaryError", "ExitCode", "Settings", "__version__", "check", "lock", "resolve", "scan"]
    )
    assert canary.check is api.check and canary.CanaryError is CanaryError
    with pytest.raises(AttributeError, match="no attribute 'main'"):
        _ = canary.main


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
