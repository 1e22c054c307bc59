"""`canary validate` and the pre-commit hook that runs it: matrices and locks, offline."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml
from adopter import upstream_index
from paths import ROOT

from canary.cli.main import main

MATRIX = """\
upstream: trl
versions:
  releases: ">=1.0"
  anchors: ["1.0.0"]
checks:
  - id: compute-loss
    module: trl.trainer.grpo_trainer
    function: GRPOTrainer.compute_loss
"""


@pytest.fixture
def index(tmp_path, monkeypatch):
    """canary/trl.yaml locked from the loopback index; later requests to it are counted."""
    with upstream_index(monkeypatch, tmp_path / "cache") as server:
        monkeypatch.chdir(tmp_path)
        Path("canary").mkdir()
        Path("canary/trl.yaml").write_text(MATRIX)
        assert main(["lock", "canary/trl.yaml"]) == 0
        server.log.clear()
        yield server


def test_a_good_matrix_and_its_lock(index, capsys):
    assert main(["validate", "canary/trl.yaml", "canary/trl.lock"]) == 0
    out = capsys.readouterr().out
    assert out == "canary/trl.yaml: 1 checks, 2 locked versions\n"  # the .lock named it again
    assert not index.log, "validate reached the package index"


def test_every_bad_matrix_is_named_with_its_line_and_key(index, capsys):
    Path("canary/bad.yaml").write_text(MATRIX.replace("function:", "functon:"))
    Path("canary/worse.yaml").write_text("upstream: [\n")
    assert main(["validate", "canary/bad.yaml", "canary/trl.yaml", "canary/worse.yaml"]) == 2
    captured = capsys.readouterr()
    assert "canary/trl.yaml: 1 checks" in captured.out
    assert re.search(r"canary: canary/bad\.yaml:\d+: check 'compute-loss': functon:", captured.err)
    assert "canary: canary/worse.yaml" in captured.err
    assert "Traceback" not in captured.err


def test_a_lock_behind_its_matrix_exits_1(index, capsys):
    Path("canary/trl.yaml").write_text(MATRIX.replace(">=1.0", ">=1.1"))
    assert main(["validate", "canary/trl.lock"]) == 1
    err = capsys.readouterr().err
    assert "canary: canary/trl.lock: does not match `versions` of canary/trl.yaml" in err
    assert not index.log


def test_an_anchor_outside_the_lock_is_a_matrix_error(index, capsys):
    Path("canary/trl.yaml").write_text(MATRIX.replace('anchors: ["1.0.0"]', 'anchors: ["1.2.0"]'))
    assert main(["validate", "canary/trl.yaml"]) == 2
    err = capsys.readouterr().err
    assert re.search(
        r"canary/trl\.yaml:\d+: .*versions\.anchors.*1\.2\.0 is not a resolved", err
    ), err
    assert not index.log


def test_without_a_lock_the_matrix_alone_is_validated(index, capsys):
    Path("canary/trl.lock").unlink()
    assert main(["validate", "canary/trl.yaml"]) == 0
    assert (
        "canary/trl.yaml: 1 checks; no lock (`canary lock` pins versions)"
        in capsys.readouterr().out
    )


def test_the_pre_commit_hook_runs_validate_on_the_matrices_and_locks(index, capsys):
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = hooks
    assert hook["id"] == "canary-validate" and hook["pass_filenames"] is True
    files = re.compile(hook["files"])
    for path in ("canary/trl.yaml", "canary/trl.lock", "matrices/peft.yaml"):
        assert files.search(path), path
    for path in (".github/workflows/canary.yml", "canary/sub/x.yaml", "action.yml"):
        assert not files.search(path), path
    command = shlex.split(hook["entry"])
    assert command[0] == "canary"
    assert main([*command[1:], "canary/trl.lock"]) == 0
    assert not index.log
