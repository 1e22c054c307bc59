"""A second `canary check` answers every check from the verdicts the first remembered, whatever
the format it prints, and after the edits a maintainer makes reviewing a matrix (issue 51: a
warm `--format html` run once judged everything again). The proof: the second run is offline
with every fetched source removed from the cache, so a check judged again would be an `error`,
and `--fail-on error` exits 1 on any."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from campaign_upstream import PROJECT, locked_upstream

from canary.cli.main import main
from canary.reports.dispatch import FORMATS

VERSIONS = ("1.0.0", "1.1.0", "2.0.0")
MATRIX = f"""\
upstream: {PROJECT}
checks:
  - id: core-run
    why: "patched at ours.py:10"
    module: {PROJECT}.core
    function: run
    params: [model, fast]
  - id: trainer-loss
    why: "replaced at ours.py:20"
    module: {PROJECT}.trainer
    function: Trainer.compute_loss
  - id: helper
    why: "read at ours.py:30"
    severity: info
    module: {PROJECT}.core
    symbol: helper
  - id: moved
    why: "imported at ours.py:40"
    since: "1.1.0"
    any_of:
      - {{module: {PROJECT}.core, symbol: moved}}
      - {{module: {PROJECT}.trainer, symbol: moved}}
"""
#: what a maintainer does to init's matrices before the next run: a comment above the checks,
#: a why reworded, a line added in the middle (every check below it moves)
REVIEWED = (
    MATRIX.replace("checks:\n", "# reviewed: these are ours\nchecks:\n")
    .replace("patched at ours.py:10", "patched at ours.py:12 (the fast path)")
    .replace("  - id: helper\n", "  # kept: it warns only\n  - id: helper\n")
)


def release(version: str) -> dict[str, bytes]:
    major = int(version.split(".")[0])
    loss = "    def compute_loss(self, model):\n        return 0\n" if major < 2 else ""
    where = "core" if major < 2 else "trainer"
    core = "def run(model, fast=False):\n    return model\n" + (
        "\n\ndef helper():\n    pass\n" if major < 2 else ""
    )
    files = {
        f"{PROJECT}/__init__.py": f'__version__ = "{version}"\n'.encode(),
        f"{PROJECT}/core.py": core.encode(),
        f"{PROJECT}/trainer.py": f"class Trainer:\n    pass\n{loss}".encode(),
    }
    files[f"{PROJECT}/{where}.py"] += b"\n\nmoved = 1\n"
    return files


@pytest.fixture
def upstream(tmp_path, monkeypatch):
    releases = {version: release(version) for version in VERSIONS}
    with locked_upstream(tmp_path, monkeypatch, releases, MATRIX) as server:
        yield server


def sources_removed(cache: Path) -> None:
    """Every cached entry but the remembered verdicts (and their stories) and the locks."""
    for entry in cache.rglob("*"):
        if entry.is_file() and not {"verdict", "locks"} & set(entry.parts):
            entry.unlink()


def judged(tmp_path: Path, *options: str) -> list[tuple[str, str, str, str]]:
    out = tmp_path / "out.json"
    main(["check", "--format", "json", "--output", str(out), *options])
    results = json.loads(out.read_text())["results"]
    return [(r["check"], r["version"], r["status"], r["detail"]) for r in results]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_second_run_in_any_format_reuses_every_verdict(upstream, tmp_path, fmt):
    first = judged(tmp_path)
    assert {status for _c, _v, status, _d in first} == {"pass", "fail", "warn", "skip"}
    sources_removed(tmp_path / "cache")
    out = tmp_path / f"again.{fmt}"
    argv = ["check", "--offline", "--fail-on", "error", "--format", fmt, "--output", str(out)]
    assert main(argv) == 0
    assert out.read_text()
    assert judged(tmp_path, "--offline") == first


@pytest.mark.parametrize("fmt", ["html", "text"])
def test_a_reviewed_matrix_keeps_every_verdict(upstream, tmp_path, fmt):
    first = judged(tmp_path)
    sources_removed(tmp_path / "cache")
    (tmp_path / "matrices" / f"{PROJECT}.yaml").write_text(REVIEWED)
    argv = ["check", "--offline", "--fail-on", "error", "--format", fmt, "--output", "again"]
    assert main(argv) == 0
    assert judged(tmp_path, "--offline") == first


def test_a_changed_contract_is_judged_again(upstream, tmp_path):
    judged(tmp_path)
    sources_removed(tmp_path / "cache")
    edited = MATRIX.replace("params: [model, fast]", "params: [model, slow]")
    (tmp_path / "matrices" / f"{PROJECT}.yaml").write_text(edited)
    again = judged(tmp_path, "--offline")
    assert {status for check, _v, status, _d in again if check == "core-run"} == {"error"}
