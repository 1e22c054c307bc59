"""The tutorial's commands, run on its fixture repository against the real package index, do
what docs/tutorial.md shows: `canary init` proposes the checks, `canary check` finds the same
two red checks breaking where it says, `canary explain` tells the same transition, and after
the tutorial's edit `check`, `validate` and `lock --check` pass.

The tutorial's outputs were captured from real runs; trl's later releases may lengthen a range
(`1.14.0-1.16.0`), so the comparison is of what a new release cannot change: the commands, the
exit statuses, the red checks and where each broke. The fixture's package and the edit are the
ones the tutorial prints (checked offline, on every run).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import FIXTURES, ROOT

TUTORIAL = ROOT / "docs" / "tutorial.md"
PACKAGE = FIXTURES / "tutorial"
#: the tutorial's step 6, as (the line of trl.yaml it follows, the lines it adds)
EDITS = (
    (
        '    since: "1.7.0"\n',
        '    broken:\n      ">=1.14.0":\n'
        '        reason: "trl 1.14 computes aux_loss_enabled itself; our rewrite is off there'
        ' (fastpatch#12)"\n        until_date: 2027-03-01\n',
    ),
    (
        '    contains: ["self.model_accepts_loss_kwargs = False"]\n',
        '    until: "1.15.0"\n    broken:\n      ">=0.26.0,<1.8.0": "KTOTrainer lived in'
        ' trl.experimental.kto; the patch is skipped there"\n',
    ),
)


def proposed_ids() -> list[str]:
    """The `- id:` lines of the matrix the tutorial shows init writing (its step 3)."""
    text = TUTORIAL.read_text(encoding="utf-8")
    matrix = next(
        b
        for b in re.findall(r"^```yaml\n(.*?)^```", text, flags=re.M | re.S)
        if "upstream: trl" in b
    )
    return [line.strip() for line in matrix.splitlines() if line.strip().startswith("- id:")]


def shown() -> list[tuple[str, list[str]]]:
    """Each `$ canary ...` command of the tutorial's text blocks, with the output shown under
    it (up to the next command or the end of the block)."""
    text = TUTORIAL.read_text(encoding="utf-8")
    runs: list[tuple[str, list[str]]] = []
    for block in re.findall(r"^```text\n(.*?)^```", text, flags=re.M | re.S):
        if not block.startswith("$ canary "):
            continue
        for line in block.splitlines():
            if line.startswith("$ canary "):
                runs.append((line[2:], []))
            else:
                runs[-1][1].append(line)
    return runs


def test_the_tutorial_prints_the_fixture_package_and_edit():
    text = TUTORIAL.read_text(encoding="utf-8")
    patches = (PACKAGE / "src" / "fastpatch" / "patches.py").read_text(encoding="utf-8")
    assert f"```python\n{patches}```" in text
    for _, added in EDITS:
        assert added in text
    assert proposed_ids() == [
        "- id: grpo-trainer-init-source",
        "- id: grpo-trainer-compute-loss-accepts",
        "- id: grpo-trainer-compute-loss-signature",
        "- id: kto-trainer-init-source",
    ]
    assert [command for command, _ in shown()] == [
        "canary init --upstream trl",
        "canary check",
        "canary explain trl::kto-trainer-init-source",
        "canary check",
        "canary validate",
        "canary lock --check",
    ]


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "canary", *command.split()[1:]]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env, timeout=900)


def broke(lines: list[str]) -> list[str]:
    """What a new release cannot change: the red checks' ids and where each broke."""
    red = [line.split("[")[0] for line in lines if line.startswith("FAIL ")]
    return red + [line.strip() for line in lines if line.strip().startswith("broke in ")]


@pytest.mark.network
@pytest.mark.slow
def test_the_tutorials_commands_do_what_it_shows(tmp_path, monkeypatch):
    monkeypatch.delenv("CANARY_INDEX_URL", raising=False)  # the real index, as the tutorial
    repo = tmp_path / "fastpatch"
    shutil.copytree(PACKAGE, repo)
    expected = {0: 0, 1: 1, 2: 0, 3: 0, 4: 0, 5: 0}  # the exit status of each command
    for index, (command, output) in enumerate(shown()):
        matrix = repo / "canary" / "trl.yaml"
        if index == 1:  # init wrote the checks the tutorial shows
            written = [line.strip() for line in matrix.read_text(encoding="utf-8").splitlines()]
            assert [line for line in written if line.startswith("- id:")] == proposed_ids()
        if index == 3:  # step 6: the tutorial's edit of the matrix
            text = matrix.read_text(encoding="utf-8")
            for after, added in EDITS:
                assert text.count(after) == 1
                text = text.replace(after, after + added)
            matrix.write_text(text, encoding="utf-8")
        result = run(command, repo)
        got = result.stdout.splitlines()
        assert result.returncode == expected[index], f"{command}:\n{result.stdout}{result.stderr}"
        assert broke(got) == broke(output), f"{command}:\n{result.stdout}"
        if index in (0, 2):  # init's and explain's first lines name no count of releases
            assert got[:1] == output[:1], f"{command}:\n{result.stdout}"
